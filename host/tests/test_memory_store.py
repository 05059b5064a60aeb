"""The tip memory's store, rule by rule: what a reader of its files, its marker, its snapshot
and its errors sees (real MiniLM keys; each test takes milliseconds once the model is loaded,
and no time at all with EMPO2_TEST_EMBEDDING_CACHE's recorded vectors).

test_memory.py checks the behaviour of docs/paper.md §4 (retrieval, capacity, edits, persistence);
these pin the details a mutation run found unchecked: each field of the snapshot and the marker,
each error's sentence, each guard of the replay.
"""

from __future__ import annotations

import json
import logging

import numpy as np
import pytest

from empo2.memory import CorruptMemory, MemoryStore, UnknownTip
from empo2.memory.buffer import VariationBuffer, rank
from empo2.memory.layout import EVENTS_FILE, KEYS_FILE
from empo2.memory.persistence import FORMAT, EventLog
from empo2.memory.tips import PERSON, SYSTEM

VK = "power-component/3"
BULB = "the room has a red light bulb, a battery and a switch"
BULB_NEAR = "a red light bulb, a switch and a battery are in this room"
UNRELATED = "the stock market closed lower on tuesday after the bank report"
ROW = 4 * 384  # bytes of one key row


def lines(folder) -> list[dict]:
    return [json.loads(line) for line in (folder / EVENTS_FILE).read_text().splitlines()]


def write_lines(folder, events: list[dict]) -> None:
    (folder / EVENTS_FILE).write_text("".join(json.dumps(e) + "\n" for e in events))


@pytest.fixture
def saved(tmp_path, embedder):
    """A closed store folder with two policy tips in one variation (3 key rows) and a person's
    tip in another (1 row)."""
    folder = tmp_path / "memory"
    with MemoryStore.open(folder, embedder, capacity=10) as store:
        store.add_episode_tip(VK, "tip a", [(BULB, "look"), (BULB_NEAR, "flip")], 20.0)
        store.add_episode_tip(VK, "tip b", [(UNRELATED, "sell")], 5.0)
        store.add_tip("other/1", "a person's tip", None, author="ada", key_text=BULB)
    return folder


# --- the snapshot and the marker ------------------------------------------------------------


def test_the_snapshot_holds_every_field_of_every_tip_and_each_variations_entry_count(saved, embedder, tmp_path):
    with MemoryStore.open(saved, embedder, capacity=10) as store:
        store.update("t000001", "tip a, edited", expected_version=1, author="bo")
        store.snapshot_json(tmp_path / "snapshot.json")
        tips = [t.to_dict(with_history=True) for t in store.list_tips(limit=10)[0][::-1]]
    snap = json.loads((tmp_path / "snapshot.json").read_text())
    written = snap.pop("written")
    assert written.endswith("+00:00") and written[:2] == "20"
    assert snap == {
        "format": "empo2-memory-snapshot/1",
        "capacity": 10,
        "variations": {"other/1": {"entries": 1}, VK: {"entries": 3}},
        "tips": tips,
    }
    assert [h["kind"] for h in snap["tips"][0]["history"]] == ["add", "update"]


def test_the_marker_names_the_format_the_file_lengths_and_the_counters(saved, embedder):
    with MemoryStore.open(saved, embedder, capacity=10) as store:
        marker = store.marker()
    assert marker == {
        "format": FORMAT,
        "events_bytes": (saved / EVENTS_FILE).stat().st_size,
        "keys_bytes": 4 * ROW,
        "next_policy_seq": 3,
        "next_person_seq": 2,
        "next_entry": 4,
    }
    in_memory = MemoryStore.open(None, embedder)
    in_memory.add_tip(VK, "a tip", 1.0)
    assert in_memory.marker() == {
        "format": FORMAT,
        "events_bytes": None,
        "keys_bytes": None,
        "next_policy_seq": 1,
        "next_person_seq": 2,
        "next_entry": 1,
    }
    with pytest.raises(ValueError, match="^rollback_to needs a memory folder; an in-memory store has none$"):
        MemoryStore.open(None, embedder, rollback_to=marker)


def test_a_new_folders_log_opens_with_its_header_and_a_reopen_is_no_news(saved, embedder):
    header = lines(saved)[0]
    at = header.pop("at")
    assert header == {"kind": "header", "format": FORMAT, "dim": 384, "capacity": 10}
    assert at.endswith("+00:00") and at[:2] == "20"
    with MemoryStore.open(saved, embedder, capacity=10) as store:
        marker = store.marker()
        store.add_tip(VK, "a person's tip after the marker", 3.0, key_text=UNRELATED)
    news = []
    with MemoryStore.open(saved, embedder, capacity=10, on_change=news.append, rollback_to=marker) as store:
        assert news == [] and store.count() == 4  # replayed and re-applied, announced to no one
        store.delete("t000002", expected_version=1, author="ada")
    assert [(n["kind"], n["tip"]["id"], n["author"]) for n in news] == [("delete", "t000002", "ada")]


# --- what the replay refuses -------------------------------------------------------------------


@pytest.mark.parametrize("rows", [1, 0])
def test_a_log_that_needs_more_key_rows_than_the_key_file_has_is_corrupt(saved, embedder, rows):
    with open(saved / KEYS_FILE, "rb+") as f:
        f.truncate(rows * ROW)  # whole rows: no torn tail to cut, the log's first add needs 2
    with pytest.raises(CorruptMemory, match=rf"keys.f32 has {rows} key rows; the log needs 2$"):
        MemoryStore.open(saved, embedder, capacity=10)


def test_a_log_that_adds_one_tip_twice_is_corrupt(saved, embedder):
    events = lines(saved)
    write_lines(saved, events[:2] + events[1:])  # t000001's add line twice
    with pytest.raises(CorruptMemory, match="^tip id t000001 is added twice$"):
        MemoryStore.open(saved, embedder, capacity=10)


def test_tip_ids_count_on_past_six_digits(saved, embedder):
    events = lines(saved)
    events[2]["tip"]["id"] = "t099999"  # as if the run had written 99,999 policy tips
    write_lines(saved, events)
    with MemoryStore.open(saved, embedder, capacity=10) as store:
        added = [store.add_episode_tip(VK, f"tip {i}", [(f"state {i}", "go")], 1.0) for i in (1, 2)]
        assert [t.id for t in added] == ["t100000", "t100001"]
        assert store.marker()["next_policy_seq"] == 100002


def test_a_log_without_its_header_or_for_other_keys_is_refused_with_the_reason(saved, embedder):
    events = lines(saved)
    write_lines(saved, events[1:])
    with pytest.raises(CorruptMemory, match=f"^{saved}: events.jsonl does not start with a header$"):
        MemoryStore.open(saved, embedder, capacity=10)
    write_lines(saved, [dict(events[0], dim=8)] + events[1:])
    with pytest.raises(ValueError, match=f"^memory in {saved} holds 8-d keys but the embedder makes 384-d ones$"):
        MemoryStore.open(saved, embedder, capacity=10)


def test_a_marker_whose_counters_differ_is_refused_with_both(saved, embedder):
    with MemoryStore.open(saved, embedder, capacity=10) as store:
        marker = dict(store.marker(), next_entry=3)  # the files' cut fits, the counters do not
    with pytest.raises(CorruptMemory) as refused:
        MemoryStore.open(saved, embedder, capacity=10, rollback_to=marker)
    assert str(refused.value) == (
        f"memory in {saved} does not match the checkpoint's marker (counters (3, 2, 4) vs "
        "(3, 2, 3)); was the marker taken from another run's memory?"
    )


def test_unknown_events_are_skipped_with_a_warning_and_evict_lines_are_not_replayed(saved, embedder, caplog):
    events = lines(saved)
    evict = {"kind": "evict", "at": events[1]["at"], "tip_id": "t000001", "variation_key": VK}
    write_lines(saved, events + [evict, {"kind": "renamed", "at": events[1]["at"]}])
    with caplog.at_level(logging.WARNING, logger="empo2.memory"):
        with MemoryStore.open(saved, embedder, capacity=10) as store:
            assert not store.get("t000001").evicted and store.count() == 3
    assert [r.getMessage() for r in caplog.records] == [
        "memory: skipped an event of unknown kind 'renamed' in the log"
    ]  # none for the evict


# --- a rollback re-applies people's events ------------------------------------------------------


def test_a_persons_tip_added_after_the_marker_comes_back_whole(saved, embedder):
    with MemoryStore.open(saved, embedder, capacity=10) as store:
        marker = store.marker()
        added = store.add_tip(
            VK,
            "ask the gardener",
            40.0,
            author="ada",
            key_text=BULB_NEAR,
            provenance={"source": "panel"},
            edit_id="add-7",
        )
        before = added.to_dict(with_history=True)
        store.add_episode_tip(VK, "tip after the marker", [(UNRELATED, "wait")], 1.0)
    with MemoryStore.open(saved, embedder, capacity=10, rollback_to=marker) as rolled:
        assert rolled.get(added.id).to_dict(with_history=True) == before
        assert rolled.edit("add-7") == {"tip_id": added.id, "kind": "add", "version": 1}
        assert [h.tip_id for h in rolled.retrieve(VK, [BULB_NEAR])[0]][0] == added.id
        assert rolled.list_tips()[1] == 4  # the policy's tip after the marker is gone


def test_a_rollback_drops_what_no_longer_applies_says_why_and_renumbers_the_rest(saved, embedder, caplog):
    with MemoryStore.open(saved, embedder, capacity=10) as store:
        store.delete("t000002", expected_version=1, author="ada")
        marker = store.marker()
        # The policy's own edits after the marker are not re-applied, so the person's tip below
        # (not a duplicate when it was added) duplicates p000001 again after the rollback.
        store.update("p000001", "the policy's rewrite", expected_version=1, author="policy")
        store.add_tip("other/1", "a person's tip", None, author="cy", key_text=BULB)
        store.add_tip(VK, "cy's second tip", 15.0, author="cy", key_text=BULB_NEAR)  # p000003
        store.add_episode_tip(VK, "late tip", [(UNRELATED, "wait")], 1.0)
        store.update("t000003", "late tip, edited", expected_version=1, author="bo")
        store.update("t000001", "the policy's reflection", expected_version=1, author="policy")
        store.update("t000001", "tip a, by dee", expected_version=2, author="dee")
        at = store.get("t000001").updated
    with open(saved / EVENTS_FILE, "a") as f:  # an edit of a tip deleted before the marker
        f.write(
            json.dumps(
                {"kind": "update", "at": at, "tip_id": "t000002", "text": "revived", "version": 3, "author": "eve"}
            )
            + "\n"
        )
    with caplog.at_level(logging.WARNING, logger="empo2.memory"):
        rolled = MemoryStore.open(saved, embedder, capacity=10, rollback_to=marker)
    assert [r.getMessage() for r in caplog.records] == [
        "memory: a person's tip p000002 duplicates p000001 after the rollback; not re-added",
        "memory: dropped bo's update of tip t000003 made after the checkpoint: the tip does not "
        "exist at the checkpoint",
        "memory: dropped eve's update of tip t000002 made after the checkpoint: the tip is deleted",
    ]
    tip = rolled.get("t000001")  # dee's edit is applied, as version 2: the policy's is gone
    assert (tip.text, tip.version, tip.version_author) == ("tip a, by dee", 2, "dee")
    assert [(h["version"], h["kind"]) for h in tip.history] == [(1, "add"), (2, "update")]
    assert rolled.get("p000001").text == "a person's tip" and rolled.get("t000002").deleted
    # The tip added after the dropped one keeps its id (the panel holds it), not the freed p000002.
    assert rolled.get("p000003").text == "cy's second tip"
    with pytest.raises(UnknownTip) as unknown:
        rolled.get("p000002")
    assert str(unknown.value) == "no tip has id 'p000002'"
    rolled.close()
    rolled.close()  # closing twice is harmless
    assert rolled.marker()["events_bytes"] is None  # a closed store has no files open


# --- adding and retrieving ----------------------------------------------------------------------


def test_a_persons_tip_keeps_its_score_provenance_and_is_keyed_by_its_text(embedder):
    store = MemoryStore.open(None, embedder)
    tip = store.add_tip(VK, "  check the fuse box  ", 30.0, author="ada", provenance={"source": "panel"})
    again = store.get(tip.id)
    assert (again.text, again.score, again.author, again.provenance) == (
        "check the fuse box",
        30.0,
        "ada",
        {"source": "panel"},
    )
    assert [(e["key_text"], e["action"]) for e in store.entries(VK)] == [("check the fuse box", "")]
    with pytest.raises(ValueError, match="^an edit id must be a string of 1 to 128 characters$"):
        store.add_tip(VK, "another tip", 1.0, edit_id="")
    assert store.count() == 1


def test_a_policy_tips_provenance_gets_its_score_unless_it_has_one(embedder):
    store = MemoryStore.open(None, embedder)
    plain = store.add_episode_tip(VK, "tip a", [(BULB, "look")], 20.0)
    told = store.add_episode_tip(
        VK, "tip b", [(BULB_NEAR, "look")], 20.0, provenance={"run": "r1", "iteration": 3, "score": 5.0}
    )
    assert store.get(plain.id).provenance == {"score": 20.0}
    assert store.get(told.id).provenance == {"run": "r1", "iteration": 3, "score": 5.0}


def test_an_add_without_steps_or_variation_is_refused_with_the_reason(embedder):
    store = MemoryStore.open(None, embedder)
    with pytest.raises(ValueError, match="^an episode tip needs at least one step to key it$"):
        store.add_episode_tip(VK, "a tip", [], 1.0)
    for bad in ("", None):
        with pytest.raises(ValueError, match="^variation_key must be a non-empty string$"):
            store.add_tip(bad, "a tip", 1.0, key_text=BULB)
    assert store.count() == 0 and store.variation_keys() == []


def test_the_log_has_an_evict_line_when_a_tips_last_entry_goes(tmp_path, embedder, caplog):
    folder = tmp_path / "memory"
    with MemoryStore.open(folder, embedder, capacity=2) as store:
        a = store.add_episode_tip(VK, "tip a", [(BULB, "look"), (BULB_NEAR, "flip")], 1.0)
        store.add_tip(VK, "tip b", 2.0, key_text=UNRELATED)  # takes a's first entry only
        c = store.add_tip(VK, "tip c", 3.0, key_text=BULB)  # takes its last
    events = lines(folder)
    assert [e["kind"] for e in events] == ["header", "add", "add", "add", "evict"]
    assert events[-1] == {"kind": "evict", "at": c.created, "tip_id": a.id, "variation_key": VK}
    with caplog.at_level(logging.WARNING, logger="empo2.memory"):
        with MemoryStore.open(folder, embedder, capacity=2) as store:
            assert store.get(a.id).evicted and store.count() == 2
    assert caplog.records == []


def test_top_k_of_zero_embeds_nothing_and_one_keeps_the_best(embedder):
    store = MemoryStore.open(None, embedder)
    best = store.add_episode_tip(VK, "the best tip", [(BULB, "look")], 90.0)
    store.add_episode_tip(VK, "a worse tip", [(BULB_NEAR, "look")], 10.0)
    before = embedder.n_embedded
    assert store.retrieve(VK, ["a query text no test embeds elsewhere"], top_k=0) == [[]]
    assert embedder.n_embedded == before  # no hit can come back: the model is not asked
    assert [h.tip_id for h in store.retrieve(VK, [BULB], top_k=1)[0]] == [best.id]


def test_capacity_one_keeps_the_newest_entry_and_the_history_says_who_did_what_when(embedder):
    with pytest.raises(ValueError, match="^memory capacity must be at least 1 entry per variation$"):
        MemoryStore(embedder, capacity=0)
    news = []
    store = MemoryStore(embedder, capacity=1, on_change=news.append)  # the constructor: in memory
    old = store.add_tip(VK, "old tip", 1.0, key_text=BULB)
    new = store.add_tip(VK, "new tip", 2.0, key_text=BULB_NEAR)  # evicts the old tip's entry
    assert [e["tip_id"] for e in store.entries(VK)] == [new.id]
    assert old.created == old.updated and old.created.endswith("+00:00")
    assert store.get(old.id).history == [
        {"version": 1, "text": "old tip", "author": PERSON, "at": old.created, "kind": "add"},
        {"version": 1, "text": "old tip", "author": SYSTEM, "at": new.created, "kind": "evict"},
    ]
    assert [(n["kind"], n["tip"]["id"], n["author"]) for n in news] == [
        ("add", old.id, PERSON),
        ("add", new.id, PERSON),
        ("evict", old.id, SYSTEM),
    ]


def test_a_failing_listener_is_logged_and_the_change_stays(embedder, caplog):
    def broken(change):
        raise RuntimeError("a bug in the listener")

    store = MemoryStore.open(None, embedder, on_change=broken)
    with caplog.at_level(logging.ERROR, logger="empo2.memory"):
        tip = store.add_tip(VK, "a tip", 1.0, key_text=BULB)
    assert store.get(tip.id).text == "a tip" and store.count() == 1
    [record] = caplog.records
    assert record.getMessage() == f"memory: on_change listener failed on add of {tip.id}"
    assert record.exc_info[0] is RuntimeError


def test_a_page_of_tips_holds_a_hundred_by_default_and_clamps_negative_bounds(embedder):
    store = MemoryStore.open(None, embedder, capacity=200)
    for i in range(101):
        store.add_tip(VK, f"tip {i}", 1.0, key_text=BULB)  # one key text: embedded once
    page, total = store.list_tips()
    assert total == 101 and len(page) == 100 and page[0].text == "tip 100"
    assert [t.text for t in store.list_tips(offset=0, limit=2)[0]] == ["tip 100", "tip 99"]
    assert [t.text for t in store.list_tips(offset=-3, limit=1)[0]] == ["tip 100"]
    assert store.list_tips(limit=0) == ([], 101) and store.list_tips(limit=-1) == ([], 101)


# --- the two files: repairs, refusals, their format (persistence.py) -----------------------------


def test_a_clean_reopen_warns_nothing_and_each_repair_says_what_it_cut(saved, embedder, caplog):
    sizes = [(saved / name).stat().st_size for name in (EVENTS_FILE, KEYS_FILE)]
    with caplog.at_level(logging.WARNING, logger="empo2.memory"):
        MemoryStore.open(saved, embedder, capacity=10).close()
    assert caplog.records == []
    with open(saved / EVENTS_FILE, "ab") as f:
        f.write(b'{"kind":"upd')  # a kill -9 mid-line
    with open(saved / KEYS_FILE, "ab") as f:
        f.write(bytes(ROW + 100))  # a whole row no event references, then part of one
    with caplog.at_level(logging.WARNING, logger="empo2.memory"):
        MemoryStore.open(saved, embedder, capacity=10).close()
    assert [r.getMessage() for r in caplog.records] == [
        f"memory: cut a torn tail of 12 bytes from {saved / EVENTS_FILE}",
        f"memory: cut a partial key row (100 bytes) from {saved / KEYS_FILE}",
        f"memory: cut 1 key rows that no event references from {saved / KEYS_FILE}",
    ]
    assert [(saved / name).stat().st_size for name in (EVENTS_FILE, KEYS_FILE)] == sizes


def test_a_damaged_line_inside_the_log_is_reported_with_its_offset(saved, embedder):
    header, *rest = (saved / EVENTS_FILE).read_bytes().splitlines(keepends=True)
    (saved / EVENTS_FILE).write_bytes(header + b"not json\n" + b"".join(rest))
    with pytest.raises(CorruptMemory) as refused:
        MemoryStore.open(saved, embedder, capacity=10)
    assert str(refused.value).startswith(f"{saved / EVENTS_FILE}: line at byte {len(header)} is not JSON (")


def test_a_memory_folder_is_created_with_its_missing_parents(tmp_path, embedder):
    folder = tmp_path / "runs" / "r1" / "memory"
    with MemoryStore.open(folder, embedder) as store:
        store.add_tip(VK, "a tip", 1.0)
    assert sorted(p.name for p in folder.iterdir()) == sorted([EVENTS_FILE, KEYS_FILE])


def test_a_marker_the_files_cannot_hold_is_refused_with_where_it_cuts(saved, embedder):
    with MemoryStore.open(saved, embedder, capacity=10) as store:
        marker = store.marker()
    size, keys = marker["events_bytes"], marker["keys_bytes"]
    files = [(saved / name).read_bytes() for name in (EVENTS_FILE, KEYS_FILE)]
    beyond = "memory marker ({}, {} bytes) lies beyond the files in {} ({}, {} bytes)"
    for changed, message in [
        ({"events_bytes": size + 10}, beyond.format(size + 10, keys, saved, size, keys)),
        ({"keys_bytes": keys + ROW}, beyond.format(size, keys + ROW, saved, size, keys)),
        ({"keys_bytes": keys - 2}, f"memory marker cuts a key row in half ({keys - 2} bytes)"),
        ({"events_bytes": size - 3}, f"memory marker cuts an event line in half (byte {size - 3})"),
    ]:
        with pytest.raises(CorruptMemory) as refused:
            MemoryStore.open(saved, embedder, capacity=10, rollback_to=dict(marker, **changed))
        assert str(refused.value) == message
    assert [(saved / name).read_bytes() for name in (EVENTS_FILE, KEYS_FILE)] == files


def test_a_marker_from_an_in_memory_store_cannot_roll_a_folder_back(saved, embedder):
    marker = MemoryStore.open(None, embedder).marker()
    with pytest.raises(ValueError, match="^this memory marker comes from an in-memory store; nothing to roll back$"):
        MemoryStore.open(saved, embedder, capacity=10, rollback_to=marker)
    MemoryStore.open(saved, embedder, capacity=10).close()  # the refusal let go of the folder


def test_a_marker_whose_key_rows_fall_short_of_its_events_is_refused_before_any_cut(saved, embedder):
    """The marker's counters match, but it keeps one key row where the log up to it references
    four: refused before either file is cut, so the folder still opens as it was (cutting first
    left a key file that no longer opened)."""
    before = {name: (saved / name).read_bytes() for name in (EVENTS_FILE, KEYS_FILE)}
    with MemoryStore.open(saved, embedder, capacity=10) as store:
        tips = [t.to_dict() for t in store.list_tips(include_deleted=True)[0]]
        marker = dict(store.marker(), keys_bytes=ROW)
    with pytest.raises(CorruptMemory) as refused:
        MemoryStore.open(saved, embedder, capacity=10, rollback_to=marker)
    assert str(refused.value) == (
        f"the checkpoint's memory marker keeps 1 key rows of {saved}, but the log up to it references 4"
    )
    assert {name: (saved / name).read_bytes() for name in before} == before
    with MemoryStore.open(saved, embedder, capacity=10) as reopened:
        assert [t.to_dict() for t in reopened.list_tips(include_deleted=True)[0]] == tips


def test_rolling_back_to_a_marker_gives_that_marker_again(saved, embedder):
    with MemoryStore.open(saved, embedder, capacity=10) as store:
        marker = store.marker()
        store.add_episode_tip(VK, "tip after the marker", [(UNRELATED, "wait")], 1.0)
    with MemoryStore.open(saved, embedder, capacity=10, rollback_to=marker) as rolled:
        assert json.dumps(rolled.marker()) == json.dumps(marker)  # a checkpoint keeps it as JSON


def test_a_persons_delete_after_the_marker_is_re_applied_and_the_policys_is_not(saved, embedder):
    with MemoryStore.open(saved, embedder, capacity=10) as store:
        marker = store.marker()
        store.delete("t000002", expected_version=1, author="ada")
        store.delete("t000001", expected_version=1, author="policy")
    with MemoryStore.open(saved, embedder, capacity=10, rollback_to=marker) as rolled:
        assert rolled.get("t000002").deleted and not rolled.get("t000001").deleted
        assert [e["tip_id"] for e in rolled.entries(VK)] == ["t000001", "t000001"]


def test_a_persons_add_whose_key_row_is_gone_is_reported_on_rollback(saved, embedder):
    with MemoryStore.open(saved, embedder, capacity=10) as store:
        marker = store.marker()
        store.add_tip(VK, "ask the gardener", 5.0, author="ada", key_text=UNRELATED)
    with open(saved / KEYS_FILE, "rb+") as f:
        f.truncate(4 * ROW)  # whole rows: only the row of the person's add is missing
    with pytest.raises(CorruptMemory) as refused:
        MemoryStore.open(saved, embedder, capacity=10, rollback_to=marker)
    assert str(refused.value) == (f"{saved / KEYS_FILE}: rows 4..4 are referenced but the file has 4 rows")


def test_the_key_file_holds_float32_rows_and_any_run_of_them_reads_back(tmp_path):
    log = EventLog(tmp_path / "memory", dim=3)
    rows = np.arange(12, dtype=np.float64).reshape(4, 3) / 8  # exact in float32
    log.append([{"kind": "header"}], rows[:1])
    log.append([{"kind": "add"}], rows[1:])  # a caller's float64 keys are stored as float32
    assert (tmp_path / "memory" / KEYS_FILE).stat().st_size == 4 * 3 * 4
    got = log.read_keys(1, 2)
    assert got.dtype == np.float32 and np.array_equal(got, rows[1:3])
    log.close()


def test_a_marker_taken_while_writing_names_the_files_lengths(tmp_path, embedder):
    folder = tmp_path / "memory"
    with MemoryStore.open(folder, embedder) as store:
        store.add_episode_tip(VK, "tip a", [(BULB, "look"), (BULB_NEAR, "flip")], 1.0)
        store.add_tip(VK, "a tip", 1.0)
        marker = store.marker()  # a checkpoint mid-run: no reopen has re-measured the files
        assert (marker["events_bytes"], marker["keys_bytes"]) == ((folder / EVENTS_FILE).stat().st_size, 3 * ROW)


def test_a_closed_log_lets_go_of_its_folder_while_it_is_still_referenced(tmp_path):
    first = EventLog(tmp_path / "memory", dim=3)
    first.close()
    EventLog(tmp_path / "memory", dim=3).close()  # the lock went with the close, not with `first`
    first.close()  # twice is harmless


# --- a variation's entries: eviction, duplicates, the key matrix (buffer.py) ---------------------


def test_the_log_has_an_evict_line_for_each_tip_an_add_pushes_out_and_no_other(tmp_path, embedder):
    folder = tmp_path / "memory"
    with MemoryStore.open(folder, embedder, capacity=3) as store:
        a = store.add_tip(VK, "tip a", 1.0, key_text=BULB)
        store.add_episode_tip(VK, "tip b", [(BULB_NEAR, "look"), (UNRELATED, "sell")], 2.0)
        assert [e["kind"] for e in lines(folder)] == ["header", "add", "add"]  # full, none out
        store.add_tip(VK, "tip c", 3.0, key_text=BULB_NEAR)  # pushes out a's one entry
        store.add_tip(VK, "tip d", 4.0, key_text=UNRELATED)  # one of b's two: b stays
        assert store.get(a.id).evicted and not store.get("t000001").evicted
    assert [(e["tip_id"], e["variation_key"]) for e in lines(folder) if e["kind"] == "evict"] == [(a.id, VK)]


def test_a_tip_with_more_steps_than_the_capacity_keeps_its_newest(embedder):
    store = MemoryStore.open(None, embedder, capacity=2)
    tip = store.add_episode_tip(VK, "a long episode", [(BULB, "a"), (BULB_NEAR, "b"), (UNRELATED, "c")], 5.0)
    assert (tip.n_entries, tip.evicted) == (2, False)
    assert [(e["action"], e["entry"]) for e in store.entries(VK)] == [("b", 1), ("c", 2)]
    assert store.marker()["next_entry"] == 3  # the dropped step's row is written all the same


def test_a_duplicate_add_returns_the_tip_that_held_the_entry_first(embedder):
    """Two live tips can hold one entry (an edit gave the second the first one's text); a
    duplicate is the first holder's until that tip is gone, then the other's."""
    store = MemoryStore.open(None, embedder)
    a = store.add_episode_tip(VK, "tip x", [(BULB, "look")], 5.0)
    b = store.add_episode_tip(VK, "tip y", [(BULB, "look")], 6.0)
    store.update(b.id, "tip x", expected_version=1, author="ada")  # b holds a's entry too
    store.update(a.id, "tip x", expected_version=1, author="ada")  # the same text: no change
    assert store.add_episode_tip(VK, "tip x", [(BULB, "look")], 7.0).id == a.id
    store.delete(a.id, expected_version=2)
    assert store.add_episode_tip(VK, "tip x", [(BULB, "look")], 7.0).id == b.id
    store.delete(b.id, expected_version=2)  # an edited tip's entries leave with it
    assert store.add_episode_tip(VK, "tip x", [(BULB, "look")], 7.0).id not in (a.id, b.id)


def test_a_repeated_tip_text_keeps_each_episodes_entries_with_its_own_score(tmp_path, embedder):
    """Deviation 10: the same text written after a later episode adds that episode's entries
    (key text, action), each with its episode's score, as the reference stores every entry; the
    tip keeps its first id and provenance and takes the best score. A replay rebuilds the same
    tip, and a rollback to before the repeat takes its entries away again."""
    folder = tmp_path / "memory"
    with MemoryStore.open(folder, embedder, capacity=10) as store:
        first = store.add_episode_tip(VK, "go to the attic", [(BULB, "go to hall")], 0.0, {"episode": "e1"})
        marker = store.marker()
        again = store.add_episode_tip(VK, "go to the attic", [(BULB_NEAR, "go to attic")], 100.0, {"episode": "e2"})
        later = store.add_episode_tip(VK, "go to the attic", [(UNRELATED, "sell")], 30.0, {"episode": "e3"})
        assert again.id == later.id == first.id and later.provenance["episode"] == "e1"
        assert later.n_entries == 3 and later.score == 100.0  # the best of 0, 100 and 30
        assert [(e["action"], e["score"]) for e in store.entries(VK)] == [
            ("go to hall", 0.0),
            ("go to attic", 100.0),
            ("sell", 30.0),
        ]
        [hits] = store.retrieve(VK, [BULB_NEAR], threshold=0.0)
        assert (hits[0].action, hits[0].score) == ("go to attic", 100.0)  # ranked by its own score
        assert [e["kind"] for e in lines(folder)][-2:] == ["extend", "extend"]
        tip = store.get(first.id).to_dict()
    with MemoryStore.open(folder, embedder, capacity=10) as replayed:
        assert replayed.get(first.id).to_dict() == tip
        assert len(replayed.entries(VK)) == 3
    with MemoryStore.open(folder, embedder, capacity=10, rollback_to=marker) as rolled:
        back = rolled.get(first.id)
        assert back.n_entries == 1 and back.score == 0.0
        assert [e["action"] for e in rolled.entries(VK)] == ["go to hall"]


def test_a_tip_text_a_person_wrote_is_not_extended_by_the_policy(embedder):
    """A person's text is no episode's: the policy writing it again adds no entry to it."""
    store = MemoryStore.open(None, embedder)
    tip = store.add_episode_tip(VK, "no bulb here", [(BULB, "go to hall")], 0.0)
    store.update(tip.id, "the bulb was in the attic", expected_version=1, author="ada")
    again = store.add_episode_tip(VK, "the bulb was in the attic", [(BULB_NEAR, "go to attic")], 100.0)
    assert again.id == tip.id and again.n_entries == 1 and again.score == 0.0
    assert [e["action"] for e in store.entries(VK)] == ["go to hall"]


def test_a_variations_keys_are_one_preallocated_float32_matrix():
    """The memory a variation takes is fixed by its capacity: capacity x dim float32 keys."""
    buf = VariationBuffer(capacity=5, dim=384)
    assert buf.keys.shape == (5, 384) and buf.keys.nbytes == 5 * 384 * 4


def test_rank_puts_the_newer_of_two_exact_ties_first():
    """Equal score, bit-equal similarity: the higher (newer) row first. Through the store two
    entries of one key text seldom tie exactly: the matrix product can give their rows cosines
    one float32 ulp apart (it does for test_memory.py's twins), so the rule is checked here."""
    sims = np.array([[0.5, 0.7, 0.5, 0.5, 0.2, 0.6]], dtype=np.float32)
    scores = np.array([1.0, 0.0, 1.0, 1.0, 9.0, 1.0])
    [rows] = rank(sims, scores, threshold=0.2, top_k=4)  # row 4 sits on the threshold: out
    assert rows.tolist() == [5, 3, 2, 0]


def test_a_tip_text_already_live_in_the_variation_is_not_stored_twice_and_the_first_wins(embedder):
    """Two episodes that end in the same advice: one tip, with the first one's id and
    provenance; another variation, an edit, or a deleted tip's text still make their own."""
    store = MemoryStore.open(None, embedder)
    first = store.add_episode_tip(VK, "Flip the switch.", [(BULB, "look")], 20.0, {"iteration": 1})
    again = store.add_episode_tip(VK, "  Flip the switch. ", [(UNRELATED, "sell")], 90.0, {"iteration": 7})
    assert again.id == first.id and again.provenance["iteration"] == 1
    assert store.add_tip(VK, "Flip the switch.", None, author="ada").id == first.id  # a person's: no entry
    tips, total = store.list_tips(VK)
    assert total == 1 and [e["action"] for e in store.entries(VK)] == ["look", "sell"]
    assert store.add_episode_tip("other/1", "Flip the switch.", [(BULB, "look")], 5.0).id != first.id
    other = store.add_episode_tip(VK, "Read the room.", [(BULB_NEAR, "look")], 5.0)
    store.update(other.id, "Flip the switch.", expected_version=1, author="ada")
    assert store.count(VK) == 2  # an edit asked for the same text: both stay
    store.delete(first.id, expected_version=1)
    store.delete(other.id, expected_version=2)
    assert store.add_episode_tip(VK, "Flip the switch.", [(BULB, "look")], 5.0).id not in (first.id, other.id)
