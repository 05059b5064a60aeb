"""People's edits of the tip memory (memory/edits.py), rule by rule: what the log, a listener, the
duplicate check and an error see after an update or a delete (real, recorded MiniLM keys).

test_memory.py checks the edit behaviour of docs/paper.md §4 and test_memory_retried_edits.py the edit
ids' apply-once rule; these pin the details a mutation run found unchecked.
"""

from __future__ import annotations

import json

import pytest

from empo2.memory import MemoryStore, TipDeleted
from empo2.memory.edits import MAX_EDIT_ID
from empo2.memory.layout import EVENTS_FILE

VK = "power-component/3"
BULB = "the room has a red light bulb, a battery and a switch"


def lines(folder) -> list[dict]:
    return [json.loads(line) for line in (folder / EVENTS_FILE).read_text().splitlines()]


def test_the_log_line_of_an_edit_carries_its_edit_id_only_when_it_has_one(tmp_path, embedder):
    folder = tmp_path / "memory"
    with MemoryStore.open(folder, embedder) as store:
        tip = store.add_tip(VK, "look in the shed", None, author="ada", key_text=BULB)
        edited = store.update(tip.id, "open the shed first", expected_version=1, author="ada")
        gone = store.delete(tip.id, expected_version=2, author="bo", edit_id="d-1")
    update, delete = lines(folder)[-2:]
    assert update == {
        "kind": "update",
        "at": edited.updated,
        "tip_id": tip.id,
        "text": "open the shed first",
        "version": 2,
        "author": "ada",
    }
    assert delete == {
        "kind": "delete",
        "at": gone.updated,
        "tip_id": tip.id,
        "version": 3,
        "author": "bo",
        "edit_id": "d-1",
    }


def test_an_edit_id_of_one_and_of_the_longest_length_is_accepted(embedder):
    store = MemoryStore.open(None, embedder)
    tip = store.add_tip(VK, "look in the shed", None, key_text=BULB)
    longest = "e" * MAX_EDIT_ID
    assert store.update(tip.id, "open the shed", expected_version=1, edit_id="1").version == 2
    assert store.delete(tip.id, expected_version=2, edit_id=longest).deleted
    assert store.edit("1")["kind"] == "update" and store.edit(longest)["kind"] == "delete"


def test_an_update_records_its_version_text_author_and_time_and_listeners_hear_each_edit(embedder):
    news = []
    store = MemoryStore.open(None, embedder, on_change=news.append)
    tip = store.add_tip(VK, "look in the shed", None, author="ada", key_text=BULB)
    edited = store.update(tip.id, "open the shed first", expected_version=1, author="bo")
    assert store.history(tip.id)[-1] == {
        "version": 2,
        "text": "open the shed first",
        "author": "bo",
        "at": edited.updated,
        "kind": "update",
    }
    gone = store.delete(tip.id, expected_version=2, author="cy")
    assert news[1:] == [
        {"kind": "update", "tip": edited.to_dict(), "author": "bo"},
        {"kind": "delete", "tip": gone.to_dict(), "author": "cy"},
    ]


def test_a_deleted_tip_refuses_an_edit_with_a_sentence_naming_it(embedder):
    store = MemoryStore.open(None, embedder)
    tip = store.add_tip(VK, "look in the shed", None, key_text=BULB)
    store.delete(tip.id, expected_version=1)
    with pytest.raises(TipDeleted) as info:
        store.update(tip.id, "open the shed", expected_version=2)
    assert str(info.value) == f"tip {tip.id} is deleted; it can be read but not edited"


def test_an_episode_repeating_an_edited_tips_step_and_new_text_is_its_duplicate(embedder):
    # Duplicates are judged on a tip's current text: after a person's edit, the same step with
    # the new text is that tip again; with the old text it is a new tip.
    store = MemoryStore.open(None, embedder)
    tip = store.add_episode_tip(VK, "flip the switch", [(BULB, "flip switch")], 5.0)
    store.update(tip.id, "flip the switch, then wait", expected_version=1, author="ada")
    again = store.add_episode_tip(VK, "flip the switch, then wait", [(BULB, "flip switch")], 7.0)
    assert again.id == tip.id and store.count(VK) == 1
    old = store.add_episode_tip(VK, "flip the switch", [(BULB, "flip switch")], 7.0)
    assert old.id != tip.id and store.count(VK) == 2
