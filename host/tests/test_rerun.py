"""Branch runs and the rerun of the off-policy update (rerun/runner.py, rerun/branch.py).

Real parts throughout: the tiny built-in policy, the real embedder, a parent trained by the real
trainer, a person's edit through the real memory store, the CLI in a subprocess for kill -9.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from empo2.config import load_config
from empo2.memory.store import MemoryStore
from empo2.rerun.branch import (
    STAGING,
    BranchError,
    adopt_branch,
    branches_of,
    create_branch,
    delete_branch,
    parent_record,
)
from empo2.rerun.runner import RERUN_FILE, RerunError, RerunSettings, rerun
from empo2.run_folder.folder import RunFolder, RunLockedError
from empo2.training.trainer import Trainer
from server_support import train_tiny_run

HOST = Path(__file__).resolve().parents[1]
CORRECTED = "the battery was in the drawer in the kitchen . it worked . score 100"
SMALL = dict(episodes=2, iterations=1, eval_episodes=1)


@pytest.fixture(scope="module")
def trained_parent(tmp_path_factory, tiny_policy, embedder):
    """A parent trained for one memory-mode iteration, then one of its tips corrected by a
    person (in the parent's own memory, as the tips panel does)."""
    folder, config = train_tiny_run(
        tmp_path_factory.mktemp("parent-root"), "parent", tiny_policy, embedder, iterations=1
    )
    with MemoryStore.open(folder.memory_path, embedder, capacity=config.memory.capacity) as store:
        tip = store.list_tips(author="policy")[0][0]
        store.update(tip.id, CORRECTED, tip.version, author="person")
    return folder, tip


@pytest.fixture
def parent(trained_parent, tmp_path):
    """A private copy of the trained parent (each test branches its own)."""
    folder, tip = trained_parent
    target = tmp_path / "runs" / "parent"
    shutil.copytree(folder.path, target)
    return RunFolder(target), tip


def snapshot(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_a_branch_records_its_parent_and_the_edit(parent):
    folder, tip = parent
    before = snapshot(folder.path)
    branch = create_branch(folder)
    record = parent_record(branch)
    assert record["run"] == "parent" and record["checkpoint"] == 1
    assert record["memory_version"] == (folder.memory_path / "events.jsonl").stat().st_size
    assert [(e["tip_id"], e["kind"], e["after"]) for e in record["tip_edits"]] == [(tip.id, "update", CORRECTED)]
    assert record["tip_edits"][0]["before"] == tip.text
    assert (branch.checkpoints_path / "iter-000001" / "trainer.json").is_file()
    assert snapshot(folder.path) == before
    assert [b.run_id for b in branches_of(folder)] == [branch.run_id]
    with pytest.raises(BranchError, match="no checkpoint at iteration 7"):
        create_branch(folder, checkpoint=7)


def test_rerun_updates_the_branch_through_the_training_loss(parent, embedder, monkeypatch):
    import empo2.training.trainer as trainer_module

    folder, tip = parent
    before = snapshot(folder.path)
    calls = []
    real = trainer_module.update_policy

    def spy(model, optimizer, episodes, update_mode, *args, **kwargs):
        calls.append((update_mode, [ep.rollout_mode for ep in episodes]))
        return real(model, optimizer, episodes, update_mode, *args, **kwargs)

    monkeypatch.setattr(trainer_module, "update_policy", spy)
    result = rerun(folder, RerunSettings(**SMALL), embedder=embedder)
    assert calls == [("off-policy", ["memory", "memory"])]  # the trainer's update, Table 3 row 3
    assert result["status"] == "finished" and result["variations"] == [tip.variation_key]
    assert [c["variation"] for c in result["comparison"]] == [tip.variation_key]
    assert all(c["before"] is not None and c["after"] is not None for c in result["comparison"])
    assert result["tips"][0]["after"] == CORRECTED and result["tips"][0]["before"] == tip.text
    branch = RunFolder(Path(result["path"]))
    metrics = branch.metrics()
    assert [m["update_mode"] for m in metrics] == ["off-policy"]
    assert "update/masked_fraction" in metrics[0] and metrics[0]["iteration"] == 2
    assert branch.latest_checkpoint()[0] == 2
    summaries = list(branch.trajectory_summaries())
    assert {s["variation"] for s in summaries} == {int(tip.variation_key.split("/")[1])}
    assert all(s["tip_id"] is None for s in summaries)  # the rerun writes no policy tips
    saved = json.loads((branch.path / RERUN_FILE).read_text())
    assert saved["status"] == "finished" and "after" in saved and saved["probe"]["after"]
    assert branch.state()["state"] == "finished"  # done, as its rerun.json says: not "stopped"
    weights_c = _weights(folder.checkpoints_path / "iter-000001" / "model")
    weights_after = _weights(branch.checkpoints_path / "iter-000002" / "model")
    assert any(not torch.equal(weights_c[k], weights_after[k]) for k in weights_c)
    assert snapshot(folder.path) == before  # the parent: not a byte changed


def test_rerun_honours_the_runs_memory_contrast(parent, embedder, monkeypatch):
    """A run configured with algo.memory_contrast=half is rerun as it trains: half of each group
    without tips (no tip block in their prompts), one off-policy update over the whole group."""
    import empo2.training.trainer as trainer_module

    folder, tip = parent
    config = load_config(folder.config(), ["algo.memory_contrast=half", "algo.off_policy_old_logprob=without_tips"])
    (folder.path / "config.json").write_text(json.dumps(config.to_dict()))
    calls = []
    real = trainer_module.update_policy

    def spy(model, optimizer, episodes, update_mode, *args, **kwargs):
        calls.append((update_mode, [(ep.group, ep.rollout_mode) for ep in episodes]))
        return real(model, optimizer, episodes, update_mode, *args, **kwargs)

    monkeypatch.setattr(trainer_module, "update_policy", spy)
    result = rerun(folder, RerunSettings(episodes=4, iterations=1, eval_episodes=1), embedder=embedder)
    assert calls == [("off-policy", [(0, "memory"), (0, "memory"), (0, "memory-free"), (0, "memory-free")])]
    branch = RunFolder(Path(result["path"]))
    episodes = [branch.trajectory(s["id"]) for s in branch.trajectory_summaries()]
    free = [e for e in episodes if e["rollout_mode"] == "memory-free"]
    assert len(free) == 2 and all(not s["tips"] for e in free for s in e["steps"])
    assert any(s["tips"] for e in episodes if e["rollout_mode"] == "memory" for s in e["steps"])


def test_the_comparison_shows_a_persons_edit_made_before_the_checkpoint(parent, embedder):
    """The edit is in the memory the rerun uses however early it was made: here the run trained
    on after it, so the chosen checkpoint already holds it (parent.json's tip_edits, the edits
    after the checkpoint, are empty)."""
    folder, tip = parent
    trainer = Trainer(load_config(folder.config(), ["iterations=2"]), folder, embedder=embedder)
    trainer.run(resume=True)
    trainer.memory.close()
    trainer.close()
    assert folder.checkpoint_iterations()[-1] == 2
    result = rerun(folder, RerunSettings(checkpoint=2, variations=[tip.variation_key], **SMALL), embedder=embedder)
    assert parent_record(RunFolder(Path(result["path"])))["tip_edits"] == []
    assert [(e["tip_id"], e["variation_key"], e["kind"], e["before"], e["after"]) for e in result["tips"]] == [
        (tip.id, tip.variation_key, "update", tip.text, CORRECTED)
    ]


def test_the_edits_in_a_memory_leave_out_what_the_policy_rewrote_later(tmp_path):
    from empo2.rerun.branch import person_edits_in

    events = [
        {"kind": "add", "tip": {"id": "t1", "author": "policy", "text": "a", "variation_key": "task/1"}},
        {"kind": "add", "tip": {"id": "t2", "author": "policy", "text": "b", "variation_key": "task/2"}},
        {"kind": "update", "tip_id": "t1", "author": "ada", "text": "a by ada"},
        {"kind": "update", "tip_id": "t2", "author": "ada", "text": "b by ada"},
        {"kind": "update", "tip_id": "t2", "author": "policy", "text": "b again"},
        {"kind": "add", "tip": {"id": "t3", "author": "ada", "text": "c", "variation_key": "task/1"}},
        {"kind": "delete", "tip_id": "t1", "author": "ada"},
    ]
    path = tmp_path / "events.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events) + '{"kind": "upd')  # torn last line
    assert [(e["tip_id"], e["kind"], e["before"], e["after"]) for e in person_edits_in(path)] == [
        ("t1", "update", "a", "a by ada"),
        ("t3", "add", None, "c"),
        ("t1", "delete", "a by ada", None),
    ]


def test_a_last_line_without_its_newline_is_not_yet_an_edit_even_when_it_is_whole_json(tmp_path):
    """A writer appends an event's line and then its newline: until the newline is there the
    event is not in the log, however complete the JSON before it. Neither the edits a rerun
    reports nor those after a checkpoint may count it."""
    from empo2.rerun.branch import person_edits_after, person_edits_in

    add = {"kind": "add", "tip": {"id": "t1", "author": "policy", "text": "a", "variation_key": "task/1"}}
    edit = {"kind": "update", "tip_id": "t1", "author": "ada", "text": "a by ada"}
    path = tmp_path / "events.jsonl"
    path.write_text(json.dumps(add) + "\n" + json.dumps(edit))  # whole JSON, newline not yet written
    marker = {"events_bytes": len(json.dumps(add)) + 1}
    assert person_edits_in(path) == [] and person_edits_after(path, marker) == []
    assert person_edits_after(path, None) == []
    with open(path, "a") as f:
        f.write("\n")
    assert [(e["tip_id"], e["before"], e["after"]) for e in person_edits_in(path)] == [("t1", "a", "a by ada")]
    assert [e["after"] for e in person_edits_after(path, marker)] == ["a by ada"]


def test_held_out_variations_are_evaluated_before_and_after_beside_the_chosen_ones(parent, embedder):
    """A rerun checks that it did not hurt what it was not aimed at: `held_out` test variations of
    each chosen variation's task are evaluated before and after, on the same seeds, and reported
    beside the chosen variation as not chosen."""
    from empo2.envs.registry import make_env

    folder, tip = parent
    task = tip.variation_key.split("/")[0]
    config = load_config(folder.config())
    expected = [f"{task}/{v}" for v in make_env(config.env).variations(task, "test")[:2]]
    result = rerun(folder, RerunSettings(held_out=2, **SMALL), embedder=embedder)
    rows = {c["variation"]: c for c in result["comparison"]}
    assert list(rows) == [tip.variation_key, *expected]
    assert rows[tip.variation_key]["chosen"] and not any(rows[k]["chosen"] for k in expected)
    assert all(rows[k]["before"] is not None and rows[k]["after"] is not None for k in expected)
    assert result["variations"] == [tip.variation_key]  # trained on the chosen one only


def test_dry_run_writes_only_its_record_and_keeps_the_weights(parent, embedder):
    folder, tip = parent
    before = snapshot(folder.path)
    result = rerun(folder, RerunSettings(dry_run=True, **SMALL), embedder=embedder)
    after = snapshot(folder.path)
    added = sorted(set(after) - set(before))
    assert len(added) == 1 and added[0].startswith("dry-runs/dry-run-")
    assert {k: v for k, v in after.items() if k in before} == before
    assert not branches_of(folder) and not list(folder.path.parent.glob("parent-branch-*"))
    assert result["dry_run"] and result["loss"] is not None
    assert 0.0 <= result["masked_fraction"] <= 1.0
    assert result["kl_to_checkpoint"] == pytest.approx(0.0, abs=1e-6)
    ratios = [r for row in result["ratios"] for r in row["ratios"]]
    assert ratios and any(abs(r - 1.0) > 1e-4 for r in ratios)  # tips removed: π differs
    guided = [e for e in result["episodes"] if e["tip_guided_steps"]]
    assert guided and all(e["logprob_before"] < 0 for e in guided)
    saved = json.loads((folder.path / added[0]).read_text())
    assert saved["loss"] == result["loss"]


def test_dry_run_loss_takes_no_step(parent, embedder):
    from empo2.training.update import dry_run_loss

    folder, tip = parent
    branch = create_branch(folder)
    trainer = Trainer(load_config(branch.config()), branch, embedder=embedder)
    trainer.start(resume=True)
    pair = (tip.variation_key.split("/")[0], int(tip.variation_key.split("/")[1]))
    episodes, *_ = trainer.play(2, [pair], memory_mode=True, group_size=2, tips=False)
    weights = {k: v.clone() for k, v in trainer.model.state_dict().items()}
    optimizer = json.dumps(str(trainer.optimizer.state_dict()))
    report = dry_run_loss(trainer.model, episodes, "off-policy", trainer.config.algo, trainer.tokenizer.pad_token_id)
    assert report["stats"]["update_samples"] > 0
    assert all(torch.equal(weights[k], v) for k, v in trainer.model.state_dict().items())
    assert json.dumps(str(trainer.optimizer.state_dict())) == optimizer
    trainer.memory.close()
    trainer.close()


def test_branch_of_a_branch_adopt_and_delete(parent, embedder):
    folder, tip = parent
    first = rerun(folder, RerunSettings(**SMALL), embedder=embedder)
    branch = RunFolder(Path(first["path"]))
    second = rerun(branch, RerunSettings(variations=[tip.variation_key], **SMALL), embedder=embedder)
    grandchild = RunFolder(Path(second["path"]))
    assert parent_record(grandchild)["run"] == branch.run_id and second["checkpoint"] == 2
    adopt_branch(grandchild)
    assert parent_record(grandchild)["adopted"]
    config = load_config(grandchild.config(), ["iterations=4"])
    trainer = Trainer(config, grandchild, embedder=embedder)
    trainer.run(resume=True)  # an adopted branch trains on as a normal run
    trainer.memory.close()
    trainer.close()
    assert grandchild.latest_checkpoint()[0] == 4 and grandchild.state()["state"] == "finished"
    delete_branch(grandchild)
    assert not grandchild.path.exists() and branch.path.exists()
    with pytest.raises(BranchError, match="not a branch"):
        delete_branch(folder)


def test_rerun_refuses_bad_requests_in_one_sentence(parent, embedder):
    folder, tip = parent
    with pytest.raises(RerunError, match="unknown variation power-device/999"):
        rerun(folder, RerunSettings(variations=["power-device/999"], **SMALL), embedder=embedder)
    with pytest.raises(RerunError, match="unknown variation nosuch/1"):
        rerun(folder, RerunSettings(variations=["nosuch/1"], **SMALL), embedder=embedder)
    with pytest.raises(BranchError, match="no checkpoint at iteration 5"):
        rerun(folder, RerunSettings(checkpoint=5, **SMALL), embedder=embedder)
    with folder.writer_lock():  # as a trainer holds it
        with pytest.raises(RunLockedError, match="being trained"):
            rerun(folder, RerunSettings(**SMALL), embedder=embedder)
    assert not branches_of(folder)


def test_cli_rerun_json_and_errors(parent):
    folder, tip = parent
    out = _cli("rerun", str(folder.path), "--episodes", "2", "--iterations", "1", "--eval-episodes", "1", "--dry-run")
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["dry_run"] and "iteration 2: rollout" in out.stderr
    bad = _cli("rerun", str(folder.path), "--variations", "grow-plant/999")
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr.strip().startswith("empo2-host: error: unknown variation grow-plant/999")
    assert len(bad.stderr.strip().splitlines()) == 1
    missing = _cli("rerun", str(folder.path.parent / "nope"))
    assert missing.returncode == 2 and "is not a run folder" in missing.stderr


def test_kill_9_at_any_moment_never_touches_the_parent(parent):
    """Kills `empo2-host rerun` at many points: while it starts, while the branch is staged,
    right after the branch appears, after its before-evaluation, after each update checkpoint,
    and at fixed delays after the branch appears. The parent stays byte-identical every time,
    and a killed branch finishes its rerun when run again on it. The points are found by
    watching the files, so a slow machine moves them, not the test's meaning."""
    folder, tip = parent
    root = folder.path.parent
    before = snapshot(folder.path)
    args = ("rerun", str(folder.path), "--episodes", "2", "--iterations", "2", "--eval-episodes", "1")

    def newest_branch():
        found = [b for b in branches_of(folder)]
        return found[-1] if found else None

    def staged():
        return (root / STAGING).exists() and any((root / STAGING).iterdir())

    def rerun_has(key):
        def probe():
            branch = newest_branch()
            record = json.loads((branch.path / RERUN_FILE).read_text()) if branch else {}
            return key(record, branch)

        return probe

    seen = {b.path for b in branches_of(folder)}

    def a_new_branch():
        return any(b.path not in seen for b in branches_of(folder))

    moments = [
        ("starting", lambda: True, 0.0),
        ("staging", staged, 0.0),
        ("born", a_new_branch, 0.0),
        ("evaluated", rerun_has(lambda r, b: "before" in r), 0.0),
        ("first update", rerun_has(lambda r, b: len(r.get("updates", [])) >= 1), 0.0),
        ("born + 2 s", a_new_branch, 2.0),
        ("born + 6 s", a_new_branch, 6.0),
    ]
    for name, ready, extra in moments:
        seen = {b.path for b in branches_of(folder)}
        proc = _start_cli(*args)
        deadline = time.monotonic() + 600
        while proc.poll() is None and time.monotonic() < deadline:
            try:
                if ready():
                    break
            except (OSError, ValueError):
                pass  # a file half-way through its atomic replace: look again
            time.sleep(0.02)
        time.sleep(extra)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert snapshot(folder.path) == before, f"parent changed by a kill at {name}"
    branches = branches_of(folder)
    assert branches
    for branch in branches:
        assert (branch.path / RERUN_FILE).is_file()  # born with its record
        assert (branch.path / "config.json").is_file()
    unfinished = [b for b in branches if json.loads((b.path / RERUN_FILE).read_text()).get("status") != "finished"]
    assert unfinished, "every kill came too late: each rerun had finished"
    resumed = _cli("rerun", str(unfinished[-1].path))
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["status"] == "finished"
    assert snapshot(folder.path) == before


def _weights(model_dir: Path) -> dict:
    from safetensors.torch import load_file

    out = {}
    for shard in sorted(model_dir.glob("*.safetensors")):
        out.update(load_file(shard))
    return out


def _env() -> dict:
    return {**os.environ, "PYTHONPATH": str(HOST), "EMPO2_NO_PROGRESS": "1"}


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "empo2.cli", *args], capture_output=True, text=True, env=_env(), timeout=600
    )


def _start_cli(*args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "empo2.cli", *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=_env()
    )
