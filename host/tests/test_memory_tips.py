"""The memory's tips, retrieval results and errors, and its package's names (memory/tips.py, memory/__init__.py):
what a retrieval hit, an error and an author read as to the wire protocol and a person.

test_memory.py checks the store's behaviour; these pin the records it hands out, as a mutation
run found them unchecked. Real store, real (recorded) MiniLM keys; milliseconds each.
"""

from __future__ import annotations

import dataclasses
import json

import pytest

import empo2.memory
from empo2.memory import MemoryStore, UnknownTip, VersionConflict
from empo2.memory.tips import PERSON, POLICY, SYSTEM, author_kind

VK = "power-component/3"
BULB = "the room has a red light bulb, a battery and a switch"


@pytest.fixture
def store(tmp_path, embedder):
    with MemoryStore.open(tmp_path / "memory", embedder, capacity=10) as s:
        yield s


def test_a_retrieved_entry_is_a_json_dict_of_each_of_its_fields(store):
    tip = store.add_episode_tip(VK, "flip the switch", [(BULB, "flip switch")], 12.5)
    [[hit]] = store.retrieve(VK, [BULB], threshold=0.5, top_k=1)
    d = hit.to_dict()
    assert d == {
        "tip_id": tip.id,
        "text": "flip the switch",
        "score": 12.5,
        "similarity": hit.similarity,
        "action": "flip switch",
        "entry": 0,
        "episode_score": 12.5,
    }
    assert d == dataclasses.asdict(hit) and json.loads(json.dumps(d)) == d
    assert hit.similarity > 0.99  # the query is the entry's own key text


def test_a_tips_dict_holds_each_field_and_its_history_only_when_asked(store):
    tip = store.add_episode_tip(
        VK, "flip the switch", [(BULB, "flip switch")], 12.5, provenance={"run": "r1", "iteration": 3, "episode": "e7"}
    )
    store.update(tip.id, "flip the switch, then wait", expected_version=1, author="ada")
    t = store.get(tip.id)
    d = t.to_dict()
    assert d == {
        "id": tip.id,
        "variation_key": VK,
        "text": "flip the switch, then wait",
        "score": 12.5,
        "author": "policy",
        "version_author": "ada",
        "provenance": {"run": "r1", "iteration": 3, "episode": "e7", "score": 12.5},
        "version": 2,
        "created": t.created,
        "updated": t.updated,
        "deleted": False,
        "evicted": False,
        "n_entries": 1,
    }
    full = t.to_dict(with_history=True)
    assert full.pop("history") == t.history and full == d
    # The dict is the caller's: changing it, a history entry included, leaves the tip as it was.
    mine = t.to_dict(with_history=True)
    mine["history"][0]["text"] = "mine now"
    assert t.history[0]["text"] == "flip the switch"


def test_a_deleted_tips_history_ends_with_the_delete_its_version_text_author_and_time(store):
    tip = store.add_tip(VK, "look in the shed", None, author="ada", key_text=BULB)
    deleted = store.delete(tip.id, expected_version=1, author="bo")
    assert deleted.deleted and deleted.version == 2 and deleted.n_entries == 0
    assert deleted.to_dict()["deleted"] is True
    assert store.history(tip.id)[-1] == {
        "version": 2,
        "text": "look in the shed",
        "author": "bo",
        "at": deleted.updated,
        "kind": "delete",
    }
    assert deleted.updated >= deleted.created and store.count(VK) == 0


def test_a_stale_edit_names_the_tip_both_versions_and_what_to_do(store):
    tip = store.add_tip(VK, "original text", 10.0, key_text=BULB)
    store.update(tip.id, "winner's text", expected_version=1, author="alice")
    with pytest.raises(VersionConflict) as info:
        store.update(tip.id, "loser's text", expected_version=1, author="bob")
    assert str(info.value) == f"tip {tip.id} is at version 2, not 1; reload it and edit again"
    assert info.value.expected_version == 1 and info.value.current.version == 2


def test_an_unknown_tip_reads_as_its_sentence_not_a_quoted_key(store):
    with pytest.raises(UnknownTip) as info:
        store.get("t999999")
    assert str(info.value) == "no tip has id 't999999'"  # KeyError's str() would add quotes
    assert str(UnknownTip()) == "unknown tip"


def test_the_policy_and_the_system_are_their_own_author_kinds_and_any_other_name_a_person():
    assert author_kind(POLICY) == "policy" and author_kind(SYSTEM) == "system"
    assert author_kind("ada") == PERSON == "person"
    assert author_kind("") == PERSON


def test_the_store_and_the_embedder_load_when_first_named_and_other_names_are_refused():
    from empo2.memory.embedding import SentenceEmbedder
    from empo2.memory.store import MemoryStore as StoreClass

    # Named at test time: each lookup goes through the package's __getattr__.
    assert empo2.memory.MemoryStore is StoreClass
    assert empo2.memory.SentenceEmbedder is SentenceEmbedder
    with pytest.raises(AttributeError) as info:
        empo2.memory.MemoryStor  # noqa: B018
    assert str(info.value) == "module 'empo2.memory' has no attribute 'MemoryStor'"
    assert not hasattr(empo2.memory, "store_class")


def test_a_tips_snapshot_is_detached_from_later_edits_and_from_its_holder(store):
    tip = store.add_episode_tip(VK, "flip the switch", [(BULB, "flip switch")], 12.5, provenance={"run": "r1"})
    held = store.get(tip.id)
    store.update(tip.id, "flip the switch, then wait", expected_version=1, author="ada")
    assert [h["kind"] for h in held.history] == ["add"]  # the later edit is not in it
    held.provenance["run"] = "mine"
    held.history.append({"kind": "mine"})
    now = store.get(tip.id)
    assert now.provenance["run"] == "r1" and [h["kind"] for h in now.history] == ["add", "update"]


def test_an_empty_text_and_a_score_that_is_no_number_are_refused_with_their_reason(store):
    with pytest.raises(ValueError, match="^a tip's text cannot be empty$"):
        store.add_tip(VK, "   ", None, key_text=BULB)
    with pytest.raises(ValueError, match="^a tip's score must be a finite number, not nan$"):
        store.add_tip(VK, "a tip", float("nan"), key_text=BULB)
    assert store.count() == 0
