"""The run folder's crash-safe writing and its rollback on resume."""

from __future__ import annotations

import json

import pytest

from empo2.runs.atomic import append_jsonl, atomic_write_json, iter_jsonl, repair_jsonl
from empo2.runs.folder import RunFolder, RunFolderError


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


def test_create_open_and_rollback(tmp_path):
    folder = RunFolder.create(tmp_path, "r1", {"seed": 0})
    with pytest.raises(RunFolderError, match="already exists"):
        RunFolder.create(tmp_path, "r1", {"seed": 0})
    with pytest.raises(RunFolderError, match="not a run folder"):
        RunFolder.open(tmp_path / "elsewhere")
    for it in (1, 2, 3):
        folder.write_trajectories(it, [{"id": f"i{it:06d}-e0000", "iteration": it}],
                                  [{"id": f"i{it:06d}-e0000", "iteration": it}])
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


def test_a_branch_whose_rerun_finished_reads_finished_not_stopped(tmp_path):
    """The tree showed a finished rerun's branch as stopped (red): run.json said so. A branch
    that an earlier host left `stopped` after its rerun finished is reported finished; one whose
    rerun was stopped stays stopped (a rerun on it continues); a run without a rerun is as stored."""
    from empo2.runs.branch import RERUN_FILE
    from empo2.server.runs import stored_state

    folder = RunFolder.create(tmp_path, "branch", {"iterations": 3})
    folder.set_state("stopped", iteration=4)
    assert stored_state(folder, folder.state()) == "stopped"  # no rerun.json: as stored
    for status, shown in (("finished", "finished"), ("stopped", "stopped"), ("running", "stopped")):
        atomic_write_json(folder.path / RERUN_FILE, {"status": status})
        assert stored_state(folder, folder.state()) == shown, status
    (folder.path / RERUN_FILE).write_text("{torn")
    assert stored_state(folder, folder.state()) == "stopped"  # unreadable: as stored, no crash
