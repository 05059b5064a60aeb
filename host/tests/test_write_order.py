"""The order of every crash-safe write (atomic.py), call by call.

A dropped fsync or a rename before the data is on disk passes every functional test (the page
cache hides it) and loses data only on a power cut, so the order is checked directly:
`os.fsync` and `os.replace` are wrapped to record each call (with the path the descriptor
names) and then do the real thing. Linux only: a descriptor's path comes from /proc/self/fd.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest

from empo2 import atomic
from empo2.atomic import (
    append_jsonl,
    atomic_write_json,
    commit_folder,
    iter_jsonl,
    move_folder,
    repair_jsonl,
    rewrite_jsonl,
)
from empo2.memory.persistence import EventLog
from empo2.run_folder.folder import RunFolder

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/fd")


@pytest.fixture
def calls(monkeypatch):
    """[("fsync", path, bytes on disk then) | ("replace", src, dst)], in call order."""
    log: list[tuple] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd):
        path = Path(os.readlink(f"/proc/self/fd/{fd}"))
        log.append(("fsync", path, path.read_bytes() if path.is_file() else None))
        return real_fsync(fd)

    def replace(src, dst, *args, **kwargs):
        log.append(("replace", Path(src), Path(dst)))
        return real_replace(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    return log


def test_atomic_write_fsyncs_the_file_then_replaces_then_fsyncs_the_folder(tmp_path, calls):
    target = tmp_path / "run.json"
    atomic_write_json(target, {"state": "created"})
    atomic_write_json(target, {"state": "running"})
    second = calls[3:]
    assert [c[0] for c in calls] == ["fsync", "replace", "fsync"] * 2
    (_, synced, data), (_, src, dst), (_, folder, _) = second
    assert synced == src and src.parent == tmp_path and src != target and dst == target
    assert data == target.read_bytes()  # the whole new content was on disk before the rename
    assert folder == tmp_path
    assert [p.name for p in tmp_path.iterdir()] == ["run.json"]


def test_the_trainer_s_progress_is_replaced_whole_without_fsync(tmp_path, calls):
    folder = RunFolder(tmp_path)
    folder.write_progress({"iteration": 1, "phase": "rollout", "done": 2, "total": 9})
    folder.write_progress({"iteration": 1, "phase": "update", "done": 0, "total": 1})
    assert [c[0] for c in calls] == ["replace", "replace"]  # whole or absent, but not durable
    assert folder.progress() == {"iteration": 1, "phase": "update", "done": 0, "total": 1}
    folder.write_progress(None)
    assert folder.progress() is None and [p.name for p in tmp_path.iterdir()] == []


def test_the_iteration_s_ended_episodes_are_appended_and_dropped_when_it_is_written(tmp_path, calls):
    """What a host in another process streams: one line per ended episode, the iteration's first
    a new file, no fsync (it means something only until the iteration is written)."""
    from empo2.training.run_control import RecordedProgress, TrainerHooks

    folder = RunFolder.create(tmp_path, "r", {})
    hooks = RecordedProgress(TrainerHooks(), folder)
    hooks.on_state("running", 1)
    calls.clear()
    hooks.on_episode(1, {"id": "i000001-e0000"}, {"id": "i000001-e0000", "steps": []}, 1, 2)
    first = folder.ended_episodes_path.stat().st_ino
    hooks.on_episode(1, {"id": "i000001-e0001"}, {"id": "i000001-e0001", "steps": []}, 2, 2)
    assert [(e["iteration"], e["done"], e["total"], e["summary"]["id"]) for e in folder.ended_episodes()] == [
        (1, 1, 2, "i000001-e0000"),
        (1, 2, 2, "i000001-e0001"),
    ]
    assert folder.ended_episodes_path.stat().st_ino == first  # appended to
    assert not [c for c in calls if c[0] == "fsync"]
    hooks.on_trajectories(1, [])
    assert not folder.ended_episodes_path.exists() and folder.ended_episodes() == []
    hooks.on_episode(2, {"id": "i000002-e0000"}, {"id": "i000002-e0000", "steps": []}, 1, 2)
    hooks.on_state("stopped", 2)  # a run that ends mid-iteration leaves none behind
    assert not folder.ended_episodes_path.exists()


def test_an_atomic_write_leaves_the_mode_a_plain_write_would(tmp_path):
    # mkstemp's temporary file is 0o600; the run folder's files must stay as readable as any file
    # the host's user makes (another account reading a shared run folder).
    (tmp_path / "plain.json").write_text("{}")
    atomic_write_json(tmp_path / "run.json", {"state": "created"})
    assert (tmp_path / "run.json").stat().st_mode & 0o777 == (tmp_path / "plain.json").stat().st_mode & 0o777


def test_the_plain_file_mode_is_the_umask_s_and_reading_it_leaves_the_umask_alone():
    # _FILE_MODE is read once at import; here the reading itself runs under a umask of our own
    # (0o002: a group sharing its run folders).
    before = os.umask(0o002)
    try:
        assert atomic._plain_file_mode() == 0o664
        assert os.umask(0o002) == 0o002  # still the umask it found
    finally:
        os.umask(before)


def test_an_append_fsyncs_the_file_and_a_new_files_folder(tmp_path, calls):
    path = tmp_path / "sub" / "metrics.jsonl"
    append_jsonl(path, [{"iteration": 1}])
    assert calls == [("fsync", path, b'{"iteration":1}\n'), ("fsync", path.parent, None)]
    calls.clear()
    append_jsonl(path, [{"iteration": 2}, {"iteration": 3}])  # the folder entry exists already
    assert calls == [("fsync", path, b'{"iteration":1}\n{"iteration":2}\n{"iteration":3}\n')]


def test_repair_cuts_a_torn_line_durably(tmp_path, calls):
    path = tmp_path / "index.jsonl"
    path.write_bytes(b'{"a":1}\n{"a":2}\n{"a":')
    repair_jsonl(path)
    assert calls == [("fsync", path, b'{"a":1}\n{"a":2}\n')]
    calls.clear()
    repair_jsonl(path)  # nothing torn: nothing written
    assert calls == []


def test_rewrite_on_resume_is_an_atomic_write(tmp_path, calls):
    path = tmp_path / "metrics.jsonl"
    path.write_bytes(b'{"iteration":1}\n{"iteration":2}\n')
    rewrite_jsonl(path, lambda r: r["iteration"] <= 1)
    assert [c[0] for c in calls] == ["fsync", "replace", "fsync"]
    assert calls[0][2] == b'{"iteration":1}\n' and calls[1][2] == path
    assert list(iter_jsonl(path)) == [{"iteration": 1}]


def test_a_folder_is_fsynced_whole_before_it_is_renamed_into_place(tmp_path, calls):
    tmp = tmp_path / ".iter-000001.tmp"
    (tmp / "model").mkdir(parents=True)
    (tmp / "model" / "weights.bin").write_bytes(b"w" * 100)
    (tmp / "trainer.json").write_text("{}")
    final = tmp_path / "iter-000001"
    commit_folder(tmp, final)
    kinds = [c[0] for c in calls]
    assert kinds.count("replace") == 1
    at = kinds.index("replace")
    assert calls[at][1:] == (tmp, final)
    before = {c[1] for c in calls[:at]}
    assert {tmp / "model" / "weights.bin", tmp / "trainer.json", tmp / "model", tmp} <= before
    assert calls[at + 1 :] == [("fsync", tmp_path, None)]


def test_a_moved_folder_is_durable_in_both_parents(tmp_path, calls):
    """A branch going to the trash: one rename, then both folders' entries fsynced."""
    (tmp_path / "runs" / "b").mkdir(parents=True)
    (tmp_path / "trash").mkdir()
    move_folder(tmp_path / "runs" / "b", tmp_path / "trash" / "b-1")
    assert calls == [
        ("replace", tmp_path / "runs" / "b", tmp_path / "trash" / "b-1"),
        ("fsync", tmp_path / "trash", None),
        ("fsync", tmp_path / "runs", None),
    ]


def test_a_checkpoint_is_committed_in_that_order_and_nothing_points_at_it(tmp_path, calls):
    """checkpoints/LATEST is gone: a checkpoint is found by its folder, which appears complete.
    A stale LATEST left by an older version changes nothing."""
    folder = RunFolder.create(tmp_path, "r", {})
    for iteration in (1, 2):
        tmp = folder.new_checkpoint_dir(iteration)
        (tmp / "trainer.json").write_text("{}")
        calls.clear()
        folder.commit_checkpoint(iteration, tmp, keep=2)
        at = [c[0] for c in calls].index("replace")
        assert ("fsync", tmp / "trainer.json", b"{}") in calls[:at]
        assert calls[at][2] == folder.checkpoints_path / f"iter-00000{iteration}"
        assert calls[at + 1 :] == [("fsync", folder.checkpoints_path, None)]
    (folder.checkpoints_path / "LATEST").write_text("iter-000001\n")
    assert sorted(p.name for p in folder.checkpoints_path.iterdir()) == ["LATEST", "iter-000001", "iter-000002"]
    assert folder.latest_checkpoint() == (2, folder.checkpoints_path / "iter-000002")


def test_a_branch_has_its_checkpoint_folder_and_no_latest_pointer(tmp_path):
    """A branch is born with a copy of its parent's checkpoint, found by its folder like every
    checkpoint: no LATEST file (nothing reads one)."""
    from empo2.rerun.branch import create_branch

    parent = RunFolder.create(tmp_path, "r", {})
    tmp = parent.new_checkpoint_dir(3)
    (tmp / "trainer.json").write_text("{}")
    parent.commit_checkpoint(3, tmp, keep=2)
    branch = create_branch(parent)
    assert sorted(p.name for p in branch.checkpoints_path.iterdir()) == ["iter-000003"]
    assert branch.latest_checkpoint() == (3, branch.checkpoints_path / "iter-000003")


def test_the_memory_log_writes_key_rows_before_the_event_that_references_them(tmp_path, calls):
    log = EventLog(tmp_path / "memory", dim=2)
    calls.clear()
    log.append([{"kind": "add", "first_entry": 0}], keys=np.ones((1, 2), dtype=np.float32))
    assert [(c[0], c[1].name) for c in calls] == [("fsync", "keys.f32"), ("fsync", "events.jsonl")]
    assert calls[0][2] == np.ones((1, 2), dtype=np.float32).tobytes()
    calls.clear()
    log.truncate_to(0, 0)
    assert [(c[1].name, c[2]) for c in calls] == [("events.jsonl", b""), ("keys.f32", b"")]
    log.close()


def test_a_new_memory_folder_is_fsynced_once_and_a_reopen_fsyncs_nothing(tmp_path, calls):
    """The two files' entries are made durable when they are created, not on every open."""
    folder = tmp_path / "memory"
    EventLog(folder, dim=2).close()
    assert calls == [("fsync", folder, None)]
    calls.clear()
    EventLog(folder, dim=2).close()
    assert calls == []


def test_every_writer_uses_the_one_kit():
    """No module but the kit fsyncs, replaces or renames by itself (memory/persistence.py and
    atomic.py were two kits)."""
    root = Path(atomic.__file__).parent  # the package
    offenders = []
    for path in root.rglob("*.py"):
        if path == Path(atomic.__file__):
            continue
        text = path.read_text()
        for call in ("os.fsync(", "os.replace(", ".rename(", "os.truncate("):
            # textworld.py moves tw-make's output into its game cache: no run data.
            if call in text and not (path.name == "textworld.py" and call == "os.replace("):
                offenders.append(f"{path.relative_to(root)}: {call}")
    assert offenders == []
