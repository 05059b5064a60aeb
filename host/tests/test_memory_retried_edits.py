"""Edit ids: a person's save retried after a lost connection applies once (real MiniLM keys).

The client cannot know whether a save whose answer never came arrived; it sends the same edit
again with the same edit id. The store must apply it once, say so (EditAlreadyApplied), and keep
knowing it after a reopen and after a checkpoint rollback re-applies people's edits.
"""

from __future__ import annotations

import pytest

from embedding_cache import memory_embedder
from empo2.memory import MemoryStore, SentenceEmbedder, VersionConflict
from empo2.memory.tips import EditAlreadyApplied, EditIdReused

VK = "power-device/3"


@pytest.fixture(scope="module")
def embedder() -> SentenceEmbedder:
    return memory_embedder(device="cpu")  # embedding_cache.py: the real model's vectors


def kinds(store, tip_id):
    return [h["kind"] for h in store.history(tip_id)]


def test_an_update_delete_and_add_retried_with_their_edit_ids_apply_once(tmp_path, embedder):
    store = MemoryStore.open(tmp_path / "memory", embedder)
    tip = store.add_tip(VK, "Look in the shed.", score=100, author="ada", edit_id="add-1")
    with pytest.raises(EditAlreadyApplied) as again:
        store.add_tip(VK, "Look in the shed.", score=100, author="ada", edit_id="add-1")
    assert again.value.tip.id == tip.id and again.value.version == 1
    assert store.count(VK) == 1

    edited = store.update(tip.id, "Open the shed first.", expected_version=1, author="ada", edit_id="upd-1")
    assert edited.version == 2
    with pytest.raises(EditAlreadyApplied) as again:
        store.update(tip.id, "Open the shed first.", expected_version=1, author="ada", edit_id="upd-1")
    assert (again.value.tip.version, again.value.version, again.value.kind) == (2, 2, "update")
    # Without an edit id the same duplicate is only a conflict: the client could not tell.
    with pytest.raises(VersionConflict):
        store.update(tip.id, "Open the shed first.", expected_version=1, author="ada")

    store.delete(tip.id, expected_version=2, author="ada", edit_id="del-1")
    with pytest.raises(EditAlreadyApplied) as again:
        store.delete(tip.id, expected_version=2, author="ada", edit_id="del-1")
    assert again.value.tip.deleted and again.value.version == 3
    assert kinds(store, tip.id) == ["add", "update", "delete"]
    store.close()


def test_a_retried_edit_says_which_edit_of_which_tip_and_an_unused_id_names_no_edit(tmp_path, embedder):
    store = MemoryStore.open(None, embedder)
    tip = store.add_tip(VK, "Look in the shed.", score=100, author="ada")
    store.update(tip.id, "Open the shed first.", expected_version=1, author="ada", edit_id="u-1")
    with pytest.raises(EditAlreadyApplied) as again:
        store.update(tip.id, "Open the shed first.", expected_version=1, author="ada", edit_id="u-1")
    assert str(again.value) == f"edit u-1 (update of tip {tip.id}) was applied already"
    assert again.value.edit_id == "u-1"
    assert store.edit("u-1") == {"tip_id": tip.id, "kind": "update", "version": 2}
    assert store.edit("never-sent") is None
    # A delete checks its edit id as an update does: a bad one is refused before anything changes.
    for bad in ("", "x" * 129):
        with pytest.raises(ValueError, match="an edit id must be a string of 1 to 128"):
            store.delete(tip.id, expected_version=2, author="ada", edit_id=bad)
    assert not store.get(tip.id).deleted and store.get(tip.id).version == 2


def test_edit_ids_survive_a_reopen_and_a_rollback_that_re_applies_the_edit(tmp_path, embedder):
    folder = tmp_path / "memory"
    store = MemoryStore.open(folder, embedder)
    tip = store.add_tip(VK, "Look in the shed.", score=100, author="ada")
    marker = store.marker()  # a checkpoint here; the edit below comes after it
    store.update(tip.id, "Open the shed first.", expected_version=1, author="ada", edit_id="e-1")
    store.close()

    reopened = MemoryStore.open(folder, embedder)
    with pytest.raises(EditAlreadyApplied):
        reopened.update(tip.id, "Open the shed first.", expected_version=1, author="ada", edit_id="e-1")
    assert reopened.edit("e-1") == {"tip_id": tip.id, "kind": "update", "version": 2}
    reopened.close()

    rolled = MemoryStore.open(folder, embedder, rollback_to=marker)  # a resumed run
    assert rolled.get(tip.id).text == "Open the shed first."
    with pytest.raises(EditAlreadyApplied):
        rolled.update(tip.id, "Open the shed first.", expected_version=1, author="ada", edit_id="e-1")
    assert kinds(rolled, tip.id) == ["add", "update"]
    rolled.close()


def test_an_edit_id_reused_for_another_edit_is_refused(tmp_path, embedder):
    store = MemoryStore.open(None, embedder)
    a = store.add_tip(VK, "Look in the shed.", score=100, author="ada")
    b = store.add_tip(VK, "Water the plant.", score=100, author="ada")
    store.update(a.id, "Open the shed first.", expected_version=1, author="ada", edit_id="same")
    with pytest.raises(EditIdReused) as reused:
        store.update(b.id, "Other text.", expected_version=1, author="ada", edit_id="same")
    assert str(reused.value) == f"edit id 'same' was used already, for the update of tip {a.id}"
    with pytest.raises(EditIdReused):
        store.delete(a.id, expected_version=2, author="ada", edit_id="same")
    with pytest.raises(ValueError):
        store.update(b.id, "Other text.", expected_version=1, author="ada", edit_id="")
    assert store.get(b.id).version == 1
