"""The run folder's crash-safe writing and its rollback on resume."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import numpy as np
import pytest

from empo2.atomic import (
    append_jsonl,
    atomic_write_json,
    dumps_line,
    encode_lines,
    intact_length,
    iter_jsonl,
    repair_jsonl,
    truncate_synced,
)
from empo2.memory.store import MemoryStore
from empo2.policy.prompting import with_tips
from empo2.rerun.branch import (
    PARENT_FILE,
    RERUN_FILE,
    STAGING,
    TRASH,
    BranchError,
    adopt_branch,
    branches_of,
    create_branch,
    delete_branch,
    parent_record,
    person_edits_after,
    rerun_status,
)
from empo2.run_folder import folder as folder_module
from empo2.run_folder.folder import WRITER_LOCK, RunFolder, RunFolderError, RunLockedError
from empo2.training.rollout import Episode, StepRecord
from empo2.training.stored_episode import episode_record, episode_summary


def test_torn_last_line_is_skipped_then_repaired(tmp_path):
    path = tmp_path / "m.jsonl"
    append_jsonl(path, [{"iteration": 1}, {"iteration": 2}])
    with open(path, "ab") as f:
        f.write(b'{"iteration": 3, "ret')  # a kill -9 in the middle of a write
    assert [r["iteration"] for r in iter_jsonl(path)] == [1, 2]
    repair_jsonl(path)
    append_jsonl(path, [{"iteration": 3}])
    assert [r["iteration"] for r in iter_jsonl(path)] == [1, 2, 3]


def test_nan_is_refused_rather_than_written(tmp_path):
    with pytest.raises(ValueError):
        append_jsonl(tmp_path / "m.jsonl", [{"x": float("nan")}])
    assert not (tmp_path / "m.jsonl").exists() or (tmp_path / "m.jsonl").read_text() == ""


def test_atomic_write_leaves_no_temporary_files(tmp_path):
    atomic_write_json(tmp_path / "a.json", {"k": 1})
    atomic_write_json(tmp_path / "a.json", {"k": 2})
    assert json.loads((tmp_path / "a.json").read_text()) == {"k": 2}
    assert [p.name for p in tmp_path.iterdir()] == ["a.json"]


def test_the_json_files_people_open_are_indented_sorted_and_keep_their_text(tmp_path):
    """config.json, run.json, trainer.json: two-space indent, sorted keys (stable diffs), tip
    texts and task names as written (not \\u escapes), one newline at the end."""
    atomic_write_json(tmp_path / "run.json", {"state": "running", "name": "café", "k": [1]})
    assert (tmp_path / "run.json").read_bytes() == (
        '{\n  "k": [\n    1\n  ],\n  "name": "café",\n  "state": "running"\n}\n'
    ).encode()


def test_whole_files_and_appends_make_their_missing_folders(tmp_path):
    atomic_write_json(tmp_path / "a" / "b" / "c.json", {"k": 1})
    append_jsonl(tmp_path / "d" / "e" / "f.jsonl", [{"k": 2}])
    assert json.loads((tmp_path / "a" / "b" / "c.json").read_text()) == {"k": 1}
    assert list(iter_jsonl(tmp_path / "d" / "e" / "f.jsonl")) == [{"k": 2}]


def test_a_whole_file_is_written_under_a_hidden_temporary_name_that_rollback_clears(tmp_path, monkeypatch):
    """A kill before the rename leaves `.<name>.<random>.tmp` beside the target: the pattern
    that `rollback_to` removes (an unhidden or differently named leftover would stay)."""
    renamed = []
    real_replace = os.replace
    monkeypatch.setattr(os, "replace", lambda src, dst: renamed.append(Path(src)) or real_replace(src, dst))
    atomic_write_json(tmp_path / "iter-000001.jsonl", {"k": 1})
    (src,) = renamed
    assert src.parent == tmp_path and src.match(".iter-000001.jsonl.*.tmp")


def test_a_failed_write_leaves_the_old_file_and_no_temporary_one(tmp_path, monkeypatch):
    target = tmp_path / "run.json"
    atomic_write_json(target, {"state": "created"})

    def full_disk(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full_disk)
    with pytest.raises(OSError, match="No space left"):
        atomic_write_json(target, {"state": "running"})
    assert json.loads(target.read_text()) == {"state": "created"}
    assert [p.name for p in tmp_path.iterdir()] == ["run.json"]


def test_an_interrupt_just_after_the_rename_is_raised_as_itself(tmp_path, monkeypatch):
    """Ctrl-C between os.replace and the end of the write: the temporary file is gone already
    (renamed), and the interrupt, not a FileNotFoundError, reaches the caller."""
    real_replace = os.replace

    def replace_then_interrupt(src, dst):
        real_replace(src, dst)
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", replace_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        atomic_write_json(tmp_path / "run.json", {"state": "running"})
    assert json.loads((tmp_path / "run.json").read_text()) == {"state": "running"}


def test_a_corrupt_line_in_the_middle_is_skipped_and_the_rest_read(tmp_path):
    path = tmp_path / "m.jsonl"
    path.write_bytes(b'{"iteration": 1}\n{"iteration": 2, oops}\n{"iteration": 3}\n')
    assert [r["iteration"] for r in iter_jsonl(path)] == [1, 3]


LONG = b'{"t":"' + b"x" * 70_000 + b'"}\n'  # longer than one 64 KiB read of _last_newline_end
READ = 1 << 16  # bytes of one read of _last_newline_end


@pytest.mark.parametrize(
    "content,intact",
    [
        (b"", 0),
        (b'{"a":', 0),  # one torn line: nothing is intact
        (b'{"a":1}\n', 8),
        (b'{"a":1}\n{"a":', 8),  # a torn last line
        (b'{"a":1}\n{garbage}\n', 8),  # a last complete line that does not parse is cut too
        (b'{"a":1}\n\n', 8),  # an empty last line does not parse
        (b'{"a":1}\n' + LONG, 8 + len(LONG)),
        (LONG + b'{"a":', len(LONG)),
        (LONG[:-1], 0),
        # The newline a 64 KiB read starts on: the byte just before a torn line of 64 KiB - 1, and
        # byte 0 (an empty first line) before a garbage line that ends one read after it.
        (b'{"a":1}\n' + b"x" * (READ - 1), 8),
        (b"\n" + b"x" * READ + b"\n", 1),
    ],
    ids=[
        "empty",
        "torn-only",
        "whole",
        "torn",
        "garbage",
        "empty-line",
        "long",
        "long-torn",
        "long-torn-only",
        "torn-after-read-start",
        "garbage-after-byte-0",
    ],
)
def test_intact_length_cuts_only_a_torn_or_unparsable_last_line(tmp_path, content, intact):
    path = tmp_path / "events.jsonl"
    path.write_bytes(content)
    assert intact_length(path) == intact
    repair_jsonl(path)
    assert path.read_bytes() == content[:intact]


def test_truncate_synced_leaves_the_file_at_its_new_end(tmp_path):
    """So that a writer that keeps the file open after the cut (not in append mode) continues
    at the cut, with no hole and nothing overwritten."""
    path = tmp_path / "log"
    path.write_bytes(b"keep|drop")
    with open(path, "rb+") as f:
        truncate_synced(f, 4)
        assert f.tell() == 4
        f.write(b"!new")
    assert path.read_bytes() == b"keep!new"


def test_encoded_lines_are_compact_ascii_json_one_per_record():
    assert encode_lines([{"b": 1, "a": "é"}, {"c": [1, 2]}]) == b'{"b":1,"a":"\\u00e9"}\n{"c":[1,2]}\n'
    assert dumps_line({"x": None}) == '{"x":null}\n'
    with pytest.raises(ValueError):
        dumps_line({"x": float("inf")})


def test_create_open_and_rollback(tmp_path):
    folder = RunFolder.create(tmp_path, "r1", {"seed": 0})
    with pytest.raises(RunFolderError, match="already exists"):
        RunFolder.create(tmp_path, "r1", {"seed": 0})
    with pytest.raises(RunFolderError, match="not a run folder"):
        RunFolder.open(tmp_path / "elsewhere")
    for it in (1, 2, 3):
        folder.write_trajectories(
            it, [{"id": f"i{it:06d}-e0000", "iteration": it}], [{"id": f"i{it:06d}-e0000", "iteration": it}]
        )
        folder.append_metrics({"iteration": it})
    assert folder.trajectory("i000002-e0000")["iteration"] == 2
    folder.rollback_to(2)
    assert [m["iteration"] for m in folder.metrics()] == [1, 2]
    assert [s["iteration"] for s in folder.trajectory_summaries()] == [1, 2]
    assert not folder.trajectory_path(3).exists()
    assert RunFolder.open(folder.path).config() == {"seed": 0}


def test_incomplete_checkpoints_are_ignored(tmp_path):
    folder = RunFolder.create(tmp_path, "r", {})
    tmp = folder.new_checkpoint_dir(1)
    (tmp / "trainer.json").write_text("{}")
    folder.commit_checkpoint(1, tmp, keep=2)
    half = folder.checkpoints_path / "iter-000002"
    half.mkdir()  # a checkpoint that a kill interrupted has no trainer.json
    assert folder.latest_checkpoint()[0] == 1
    for it in (3, 4, 5):
        tmp = folder.new_checkpoint_dir(it)
        (tmp / "trainer.json").write_text("{}")
        folder.commit_checkpoint(it, tmp, keep=2)
    assert folder.checkpoint_iterations() == [4, 5]


def refuse_rmdir(path, *args, **kwargs):
    """os.rmdir of a file system that will not let a folder go (shutil.rmtree calls it)."""
    raise PermissionError(f"cannot remove {path}")


def test_the_files_have_the_documented_names_and_the_state_its_defaults(tmp_path):
    """docs/run-folder.md is what the extension and people's scripts read: the names are fixed."""
    started = time.time()
    folder = RunFolder.create(tmp_path / "deep" / "root", "r", {"seed": 1})
    assert folder.run_id == "r" and folder.path == tmp_path / "deep" / "root" / "r"
    state = json.loads((folder.path / "run.json").read_text())
    assert (state["state"], state["iteration"]) == ("created", 0)
    assert started <= state["updated"] <= time.time()
    folder.set_state("running", iteration=3, episodes=12)
    folder.set_state("paused")  # keeps what it does not change
    assert {k: v for k, v in folder.state().items() if k != "updated"} == {
        "state": "paused",
        "iteration": 3,
        "episodes": 12,
    }
    (folder.path / "run.json").write_text("{torn")
    assert folder.state() == {"state": "created", "iteration": 0}  # unreadable: the defaults
    (folder.path / "run.json").unlink()
    assert folder.state() == {"state": "created", "iteration": 0}
    (tmp_path / "half").mkdir()  # a create that a kill cut before config.json: made again
    (tmp_path / "half" / "run.json").write_text('{"state": "running", "iteration": 5}')
    again = RunFolder.create(tmp_path, "half", {"seed": 2})
    assert (again.config(), again.state()["state"], again.state()["iteration"]) == ({"seed": 2}, "created", 0)
    (tmp_path / "lone").mkdir()
    (tmp_path / "lone" / "config.json").mkdir()  # not a file
    with pytest.raises(RunFolderError, match="lone is not a run folder"):
        RunFolder.open(tmp_path / "lone")

    folder.write_trajectories(
        12, [{"id": "i000012-e0001", "iteration": 12}], [{"id": "i000012-e0001", "iteration": 12}]
    )
    folder.append_metrics({"iteration": 12})
    assert sorted(str(p.relative_to(folder.path)) for p in folder.path.rglob("*") if p.is_file()) == [
        "config.json",
        "metrics.jsonl",
        "trajectories/index.jsonl",
        "trajectories/iter-000012.jsonl",
    ]
    assert folder.trajectory("i000012-e0001") == {"id": "i000012-e0001", "iteration": 12}
    assert folder.trajectory("i000012-e0002") is None
    assert list(folder.trajectories(13)) == []
    folder.write_trajectories(123456, [{"id": "i123456-e0000"}], [{"id": "i123456-e0000"}])
    assert folder.trajectory("i123456-e0000") == {"id": "i123456-e0000"}  # all six digits count
    assert (folder.memory_path, folder.log_path) == (folder.path / "memory", folder.path / "host.log")
    assert folder.checkpoint_iterations() == [] and folder.latest_checkpoint() is None


def test_checkpoint_folders_are_found_by_name_and_leftovers_are_cleared(tmp_path, monkeypatch):
    folder = RunFolder.create(tmp_path, "r", {})
    stale = folder.new_checkpoint_dir(3)
    (stale / "half.bin").write_bytes(b"x")  # a kill's leftover of the same iteration
    tmp = folder.new_checkpoint_dir(3)
    assert tmp == folder.checkpoints_path / ".iter-000003.tmp" and list(tmp.iterdir()) == []
    (tmp / "trainer.json").write_text("{}")
    final = folder.commit_checkpoint(3, tmp, keep=1)
    assert final == folder.checkpoints_path / "iter-000003" and not tmp.exists()
    tmp = folder.new_checkpoint_dir(3)  # the same iteration saved again replaces it whole
    (tmp / "trainer.json").write_text('{"again": 1}')
    folder.commit_checkpoint(3, tmp, keep=1)
    assert json.loads((final / "trainer.json").read_text()) == {"again": 1}
    (folder.checkpoints_path / "iter-000009").write_text("a file, not a folder")
    (folder.checkpoints_path / "old-000008").mkdir()
    (folder.checkpoints_path / "old-000008" / "trainer.json").write_text("{}")
    assert folder.checkpoint_iterations() == [3]
    assert folder.latest_checkpoint() == (3, final)
    tmp = folder.new_checkpoint_dir(4)
    (tmp / "trainer.json").write_text("{}")
    monkeypatch.setattr(os, "rmdir", refuse_rmdir)  # the old checkpoint will not go
    assert folder.commit_checkpoint(4, tmp, keep=1) == folder.checkpoints_path / "iter-000004"
    assert folder.latest_checkpoint()[0] == 4  # committed all the same; pruning is best effort


def test_rollback_removes_only_what_came_after_and_the_leftovers(tmp_path, monkeypatch):
    folder = RunFolder.create(tmp_path, "r", {})
    for it in (1, 2):
        folder.write_trajectories(
            it, [{"id": f"i{it:06d}-e0000", "iteration": it}], [{"id": f"i{it:06d}-e0000", "iteration": it}]
        )
        folder.append_metrics({"iteration": it})
    append_jsonl(folder.metrics_path, [{"note": "no iteration"}])  # counts as iteration 0
    (folder.path / "trajectories" / ".iter-000003.jsonl.tmp").write_text("half")
    (folder.checkpoints_path / ".iter-000003.tmp" / "model").mkdir(parents=True)
    (folder.checkpoints_path / "iter-000001").mkdir()
    folder.rollback_to(1)
    assert folder.metrics() == [{"iteration": 1}, {"note": "no iteration"}]
    assert sorted(p.name for p in (folder.path / "trajectories").iterdir()) == ["index.jsonl", "iter-000001.jsonl"]
    assert sorted(p.name for p in folder.checkpoints_path.iterdir()) == ["iter-000001"]
    folder.rollback_to(0)
    assert folder.metrics() == [{"note": "no iteration"}]
    assert not folder.trajectory_path(1).exists()
    RunFolder.create(tmp_path, "bare", {}).rollback_to(0)  # nothing written yet: nothing to do
    (folder.checkpoints_path / ".iter-000002.tmp" / "model").mkdir(parents=True)
    monkeypatch.setattr(os, "rmdir", refuse_rmdir)
    folder.rollback_to(0)  # a leftover that will not go does not stop the resume
    assert (folder.checkpoints_path / ".iter-000002.tmp").is_dir()


def test_one_writer_holds_the_lock_and_a_reader_only_probes_it(tmp_path, monkeypatch):
    import fcntl

    folder = RunFolder.create(tmp_path, "r", {})
    lock = folder.path / WRITER_LOCK
    assert folder.writer_alive() is False and not lock.exists()  # never trained; the probe writes nothing
    lock.write_text("pid 1 of an earlier trainer\n")
    with folder.writer_lock():
        assert lock.read_text() == f"pid {os.getpid()}"  # the holder's own pid, nothing stale
        assert folder.writer_alive() is True
        with pytest.raises(RunLockedError, match=f"^run r is being trained by pid {os.getpid()}; stop it first$"):
            with folder.writer_lock():
                pass
    assert folder.writer_alive() is False
    real_sleep, waits = time.sleep, []
    monkeypatch.setattr(folder_module.time, "sleep", lambda seconds: waits.append(seconds))
    with open(lock) as other:  # a holder that wrote nothing yet
        fcntl.flock(other.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        lock.write_text("")
        with pytest.raises(RunLockedError, match="being trained by another process"):
            with folder.writer_lock():
                pass
    assert waits == [0.005] * 19  # 20 tries ~0.1 s apart in all, no wait after the last
    waits.clear()
    probe = open(lock)  # a reader's probe holds it shared for a moment...
    fcntl.flock(probe.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)

    def let_go_while_the_writer_waits(seconds):
        waits.append(seconds)
        probe.close()  # ...and lets go while the writer waits to try again
        real_sleep(seconds)

    monkeypatch.setattr(folder_module.time, "sleep", let_go_while_the_writer_waits)
    with folder.writer_lock():  # retried: a real writer never fails on a probe
        assert folder.writer_alive() is True
    assert len(waits) == 1


def test_a_branch_whose_rerun_finished_reads_finished_not_stopped(tmp_path):
    """The tree showed a finished rerun's branch as stopped (red): run.json said so. A branch
    that an earlier host left `stopped` after its rerun finished is reported finished; one whose
    rerun was stopped stays stopped (a rerun on it continues); a run without a rerun is as stored."""
    from empo2.server.runs.stored_run import stored_state

    folder = RunFolder.create(tmp_path, "branch", {"iterations": 3})
    folder.set_state("stopped", iteration=4)
    assert stored_state(folder, folder.state()) == "stopped"  # no rerun.json: as stored
    for status, shown in (("finished", "finished"), ("stopped", "stopped"), ("running", "stopped")):
        atomic_write_json(folder.path / RERUN_FILE, {"status": status})
        assert stored_state(folder, folder.state()) == shown, status
    (folder.path / RERUN_FILE).write_text("{torn")
    assert stored_state(folder, folder.state()) == "stopped"  # unreadable: as stored, no crash
    for odd in ({"status": 3}, ["finished"]):  # not a status, not a record: none
        atomic_write_json(folder.path / RERUN_FILE, odd)
        assert rerun_status(folder) is None


def test_an_episode_record_carries_every_field_of_every_step(tmp_path):
    """The record the UI and an off-policy rerun read (docs/run-folder.md): every value distinct,
    so a field dropped, renamed or taken from its neighbour shows; the summary is its head."""

    def step(t: int, intrinsic: float) -> StepRecord:
        return StepRecord(
            observation=f"obs {t}",
            user_text=f"user {t}",
            tips=[f"tip a{t}", f"tip b{t}"],
            tip_ids=[f"t{t}a", f"t{t}b"],
            prompt_ids=[10 + t, 11],
            prompt_ids_no_tips=[20 + t],
            action=f"raw {t}",
            executed_action=f"go {t}",
            action_ids=[30 + t, 31],
            behaviour_logprobs=[-0.5 - t, -0.25],
            reward=1.5 + t,
            intrinsic=intrinsic,
            score=7.0 + t,
            tip_texts=[f"text a{t}"],
            tip_actions=[f"act a{t}"],
        )

    ep = Episode(
        id="i000004-e0002",
        task="find-a",
        variation=3,
        group=5,
        rollout_mode="memory",
        description="find the battery",
        steps=[step(0, 0.5), step(1, 0.25)],
        final_score=9.0,
        success=True,
        tip="look in the drawer",
        tip_id="t000009",
    )
    summary = {
        "id": "i000004-e0002",
        "iteration": 4,
        "task": "find-a",
        "variation": 3,
        "group": 5,
        "rollout_mode": "memory",
        "update_mode": "off-policy",
        "return": 9.0,
        "success": True,
        "steps": 2,
        "intrinsic": 0.75,
        "tip_id": "t000009",
    }
    assert episode_summary(ep, "off-policy", 4) == summary
    record = episode_record(ep, "off-policy", 4, ["after 0", "after 1"])
    # The record's "steps" is the list of steps, where the summary has their count.
    assert {k: v for k, v in record.items() if k in summary and k != "steps"} == {
        k: v for k, v in summary.items() if k != "steps"
    }
    assert (record["description"], record["tip"]) == ("find the battery", "look in the drawer")
    assert set(record) == set(summary) | {"description", "tip", "steps"}
    for t, s in enumerate(record["steps"]):
        assert s == {
            "t": t,
            "observation": f"obs {t}",
            "prompt": with_tips(f"user {t}", [f"tip a{t}", f"tip b{t}"]),
            "prompt_no_tips": f"user {t}",
            "tips": [f"tip a{t}", f"tip b{t}"],
            "tip_ids": [f"t{t}a", f"t{t}b"],
            "tip_texts": [f"text a{t}"],
            "tip_actions": [f"act a{t}"],
            "prompt_ids": [10 + t, 11],
            "prompt_ids_no_tips": [20 + t],
            "action": f"raw {t}",
            "executed_action": f"go {t}",
            "action_ids": [30 + t, 31],
            "behaviour_logprobs": [-0.5 - t, -0.25],
            "reward": 1.5 + t,
            "intrinsic": ep.steps[t].intrinsic,
            "score": 7.0 + t,
            "next_observation": f"after {t}",
        }
    assert record["steps"][0]["prompt"] != "user 0"  # the tips are in the prompt with tips


# -- branches (rerun/branch.py) -----------------------------------------------------------------
# tests/test_rerun.py branches a parent the real trainer trained (minutes); these build the
# parent's folder by hand, so that each rule of a branch is checked in a second.


class OneHotEmbedder:
    """Test double for the sentence embedder (the real one takes seconds to load, and a branch
    never reads a key vector, only copies the key file): one direction per distinct text."""

    dim = 8

    def __init__(self):
        self.index: dict[str, int] = {}

    def encode(self, texts):
        rows = np.zeros((len(texts), self.dim), dtype=np.float32)
        for r, text in enumerate(texts):
            rows[r, self.index.setdefault(text, len(self.index)) % self.dim] = 1.0
        return rows


def checkpoint(folder: RunFolder, iteration: int, marker: dict | None) -> None:
    tmp = folder.new_checkpoint_dir(iteration)
    atomic_write_json(tmp / "trainer.json", {"iteration": iteration, "memory_marker": marker})
    (tmp / "optimizer.pt").write_bytes(bytes(range(iteration, iteration + 16)))
    folder.commit_checkpoint(iteration, tmp, keep=5)


def files(path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


@pytest.fixture
def parent(tmp_path):
    """A parent with checkpoints 1 and 2 and a memory in which, after checkpoint 1, a person
    rewrote the policy's tip, the policy added one, a person added one and deleted another."""

    folder = RunFolder.create(tmp_path / "runs", "parent", {"seed": 3, "name": "parent"})
    store = MemoryStore.open(folder.memory_path, OneHotEmbedder(), capacity=10)
    policy_tip = store.add_episode_tip("find/1", "look left", [("room a", "go left")], score=5.0)
    old = store.add_tip("find/1", "ask first", None, author="ana")
    store.update(old.id, "ask twice", old.version, author="ana")  # before the marker: not listed
    checkpoint(folder, 1, store.marker())
    rewritten = store.update(policy_tip.id, "look right", policy_tip.version, author="bo")
    store.add_episode_tip("find/2", "open it", [("room b", "open box")], score=1.0)
    added = store.add_tip("find/2", "the key is red", 2.0, author="ana")
    deleted = store.delete(old.id, old.version + 1, author="ana")
    checkpoint(folder, 2, store.marker())
    store.close()
    edits = [
        {
            "tip_id": policy_tip.id,
            "kind": "update",
            "variation_key": "find/1",
            "author": "bo",
            "at": rewritten.updated,
            "before": "look left",
            "after": "look right",
        },
        {
            "tip_id": added.id,
            "kind": "add",
            "variation_key": "find/2",
            "author": "ana",
            "at": added.created,
            "before": None,
            "after": "the key is red",
        },
        {
            "tip_id": old.id,
            "kind": "delete",
            "variation_key": "find/1",
            "author": "ana",
            "at": deleted.updated,
            "before": "ask twice",
            "after": None,
        },
    ]
    return folder, edits


def test_a_branch_copies_its_checkpoint_and_memory_and_records_the_edits_after_it(parent):

    folder, edits = parent
    before = files(folder.path)
    started = time.time()
    branch = create_branch(folder, checkpoint=1, name="what-if", records={"rerun.json": {"status": "running"}})
    assert branch.path == folder.path.parent / "what-if"
    assert files(folder.path) == before  # the parent is only read
    record = parent_record(branch)
    assert started <= record.pop("created") <= time.time()
    marker = json.loads((folder.checkpoints_path / "iter-000001" / "trainer.json").read_text())["memory_marker"]
    assert record == {
        "format": 1,
        "run": "parent",
        "path": str(folder.path.resolve()),
        "checkpoint": 1,
        "memory_version": (folder.memory_path / "events.jsonl").stat().st_size,
        "memory_marker": marker,
        "tip_edits": edits,
        "adopted": None,
    }
    assert RunFolder.open(branch.path).config() == {"seed": 3, "name": "what-if", "root": str(folder.path.parent)}
    assert (branch.state()["state"], branch.state()["iteration"]) == ("created", 1)
    assert json.loads((branch.path / "rerun.json").read_text()) == {"status": "running"}
    copied = files(branch.path)
    assert {k: v for k, v in copied.items() if k.startswith("memory/")} == {
        k: v for k, v in before.items() if k.startswith("memory/")
    }
    assert {k: v for k, v in copied.items() if k.startswith("checkpoints/")} == {
        k: v for k, v in before.items() if k.startswith("checkpoints/iter-000001/")
    }
    assert sorted(copied) == sorted(
        [k for k in copied if k.startswith(("memory/", "checkpoints/"))]
        + ["config.json", "run.json", PARENT_FILE, "rerun.json"]
    )
    assert list((folder.path.parent / STAGING).iterdir()) == []  # assembled there, then moved

    latest = parent_record(create_branch(folder))  # default: the latest checkpoint, a free name
    assert (latest["checkpoint"], latest["tip_edits"]) == (2, [])


def test_a_branch_name_is_free_valid_and_never_a_half_run(parent):

    folder, _ = parent
    root = folder.path.parent
    assert [create_branch(folder).run_id for _ in range(2)] == ["parent-branch-1", "parent-branch-2"]
    (root / STAGING / "parent-branch-3").mkdir(parents=True)  # a kill's leftover staging folder
    (root / STAGING / "parent-branch-3" / "junk").write_text("half")
    assert create_branch(folder).run_id == "parent-branch-4"
    again = create_branch(folder, name="parent-branch-3")  # named: the leftover is cleared
    assert not (again.path / "junk").exists() and not (root / STAGING / "parent-branch-3").exists()
    for bad in ("a/b", ".hidden"):
        with pytest.raises(BranchError, match="cannot name a run folder"):
            create_branch(folder, name=bad)
    with pytest.raises(BranchError, match="a run named parent-branch-1 already exists"):
        create_branch(folder, name="parent-branch-1")
    with pytest.raises(BranchError, match=r"no checkpoint at iteration 7 \(it has 1, 2\)"):
        create_branch(folder, checkpoint=7)
    empty = RunFolder.create(root, "empty", {})
    with pytest.raises(BranchError, match="run empty has no checkpoint to branch from"):
        create_branch(empty)
    assert sorted(p.name for p in root.iterdir() if not p.name.startswith(".")) == [
        "empty",
        "parent",
        "parent-branch-1",
        "parent-branch-2",
        "parent-branch-3",
        "parent-branch-4",
    ]
    scratch = root.parent / "scratch"  # a dry run branches into a scratch root of its own
    elsewhere = create_branch(folder, name="try", root=scratch)
    assert elsewhere.path == scratch / "try" and not (root / "try").exists()
    assert parent_record(elsewhere)["path"] == str(folder.path.resolve())
    assert elsewhere.config()["root"] == str(scratch)


def test_a_parent_without_memory_branches_with_an_empty_one(tmp_path):

    folder = RunFolder.create(tmp_path, "plain", {})
    checkpoint(folder, 4, None)
    branch = create_branch(folder)
    record = parent_record(branch)
    assert (record["memory_version"], record["memory_marker"], record["tip_edits"]) == (0, None, [])
    assert (branch.memory_path.is_dir(), list(branch.memory_path.iterdir())) == (True, [])


def test_a_parent_being_trained_is_not_branched_and_a_branch_being_trained_not_deleted(parent):

    folder, _ = parent
    with folder.writer_lock():
        with pytest.raises(RunLockedError, match=f"run parent is being trained by pid {os.getpid()}"):
            create_branch(folder)
    assert not (folder.path.parent / "parent-branch-1").exists()
    assert not (folder.path.parent / STAGING).exists()
    branch = create_branch(folder)
    with branch.writer_lock():
        with pytest.raises(RunLockedError, match="being trained"):
            delete_branch(branch)
    assert branch.path.is_dir()


def test_branches_of_adopt_and_delete(parent, monkeypatch):

    folder, _ = parent
    root = folder.path.parent
    assert branches_of(folder) == [] and parent_record(folder) is None
    second = create_branch(folder, name="b-second")
    first = create_branch(folder, name="c-first")
    record = json.loads((first.path / PARENT_FILE).read_text())
    atomic_write_json(first.path / PARENT_FILE, {**record, "created": 0.5})  # made earlier
    other = create_branch(second, name="a-grandchild")  # a branch of the branch, not of parent
    (root / "a-half").mkdir()
    (root / "a-half" / PARENT_FILE).write_text(  # no config.json: not a run
        (first.path / PARENT_FILE).read_text()
    )
    broken = create_branch(folder, name="a0-broken")  # sorted before the others: skipped, not the end
    (broken.path / PARENT_FILE).write_text("{torn")
    undated = create_branch(folder, name="e-undated")  # a record without its time sorts first
    record = json.loads((undated.path / PARENT_FILE).read_text())
    del record["created"]
    atomic_write_json(undated.path / PARENT_FILE, record)
    tied = create_branch(folder, name="f-tied")  # as old as the undated one: kept in name order
    atomic_write_json(tied.path / PARENT_FILE, {**record, "created": 0})
    assert [b.run_id for b in branches_of(folder)] == ["e-undated", "f-tied", "c-first", "b-second"]
    assert [b.run_id for b in branches_of(second)] == ["a-grandchild"]
    with pytest.raises(BranchError, match="is not valid JSON"):
        parent_record(broken)

    adopted = adopt_branch(other)["adopted"]
    assert adopted and parent_record(other)["adopted"] == adopted
    assert adopt_branch(other)["adopted"] == adopted  # adopting again keeps the first time
    with pytest.raises(BranchError, match="run parent is not a branch"):
        adopt_branch(folder)

    delete_branch(second)
    assert not second.path.exists() and other.path.is_dir() and folder.path.is_dir()
    assert list((root / TRASH).iterdir()) == []  # moved out of the root, then removed
    real_rmdir = os.rmdir
    monkeypatch.setattr(os, "rmdir", refuse_rmdir)  # a file system that will not let the trash go
    delete_branch(tied)  # the trash folder exists already; clearing it fails quietly
    monkeypatch.setattr(os, "rmdir", real_rmdir)
    assert not tied.path.exists() and len(list((root / TRASH).iterdir())) == 1
    with pytest.raises(BranchError, match="run parent is not a branch; only branches"):
        delete_branch(folder)


def test_person_edits_after_a_marker_stop_at_a_torn_line(parent, tmp_path):

    folder, edits = parent
    events = tmp_path / "events.jsonl"
    events.write_bytes((folder.memory_path / "events.jsonl").read_bytes())
    marker = json.loads((folder.checkpoints_path / "iter-000001" / "trainer.json").read_text())["memory_marker"]
    assert person_edits_after(events, marker) == edits
    everything = person_edits_after(events, None)  # no marker: every person's edit
    assert [(e["kind"], e["after"]) for e in everything] == [("add", "ask first"), ("update", "ask twice")] + [
        (e["kind"], e["after"]) for e in edits
    ]
    assert person_edits_after(events, {"events_bytes": None}) == everything
    with open(events, "ab") as f:
        f.write(b'{"kind":"update","tip_id":"t000001"')  # a torn last line: not an event yet
    assert person_edits_after(events, marker) == edits
    with open(events, "ab") as f:
        f.write(b'\n{"kind":"add"}\n')  # the torn line, ended later, does not parse: it ends the log
    assert person_edits_after(events, marker) == edits
    assert person_edits_after(tmp_path / "none.jsonl", marker) == []
