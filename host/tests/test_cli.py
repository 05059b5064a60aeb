"""The command line, run as a user would: real subprocesses, one sentence per mistake."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import tiny_run_overrides

HOST = [sys.executable, "-m", "empo2.cli"]


def run(args, cwd, timeout=600, env=None):
    environment = dict(os.environ, EMPO2_NO_PROGRESS="1", **(env or {}))
    return subprocess.run(HOST + args, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=environment)


@pytest.mark.parametrize(
    "args, message",
    [
        (["train", "--preset", "nope"], "no preset or config file named 'nope'"),
        (["train", "algo.nonsense=1"], "unknown config key 'algo.nonsense'"),
        (["train", "iterations=lots"], "'iterations' must be an integer"),
        (["train", "policy.model=/no/such/model", "--root", "ROOT"], "/no/such/model"),
        (["resume", "/no/such/run"], "is not a run folder"),
        (["eval", "--model", "/no/such/model"], "/no/such/model"),
        (["bench", "--seeds", "a,b"], "--seeds must be comma-separated integers"),
        (["runs", "--root", "/no/such/root"], "/no/such/root is not a folder of run folders"),
        (["runs", "--root", "ROOT", "--state", "runing"], "unknown run state 'runing'"),
        (["build-policy", "--two-fact-explorers", "0"], "--two-fact-explorers is for --two-facts"),
        (["build-policy", "--two-facts", "--two-fact-explorers", "some"], "expected a whole number of zero or more"),
        (["build-policy", "--three-fact-followers", "500"], "--three-fact-followers is for --three-facts"),
        (["build-policy", "--three-facts", "--model", "smollm2-135m-instruct"], "--three-facts is for the built-in"),
        # `config` checks a config without training: a name that finds no environment is refused
        # as train refuses it, whether its form is wrong or its module cannot be imported.
        (["config", "env.name=alfworld"], "config key 'env.name' names no environment: 'alfworld'"),
        (["config", "env.name=no_such_module_x:make"], "environment 'no_such_module_x:make' cannot be imported"),
    ],
)
def test_bad_input_is_one_sentence_and_exit_2(tmp_path, args, message):
    args = [str(tmp_path) if a == "ROOT" else a for a in args]
    result = run(args, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.strip().count("\n") == 0
    root = Path(args[args.index("--root") + 1]) if "--root" in args else None
    if root is not None and root.is_dir():  # refused before anything is made there
        assert list(root.iterdir()) == [], "a refused command left a run folder behind"


def test_runs_lists_each_run_s_state_and_an_interrupted_one_by_itself(tmp_path):
    """A run whose run.json says it trains while no process holds its writer lock was cut off
    (kill -9, a closed terminal): `runs` calls it interrupted, as the host and the tree do."""
    from empo2.run_folder.folder import RunFolder

    cut = RunFolder.create(tmp_path, "cut", {"iterations": 40})
    cut.set_state("running", iteration=3)
    done = RunFolder.create(tmp_path, "done", {"iterations": 2})
    done.set_state("finished", iteration=2)
    listed = run(["runs", "--root", str(tmp_path), "--json"], cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    rows = [json.loads(line) for line in listed.stdout.splitlines()]
    assert [(r["run"], r["state"], r["iteration"], r["iterations"]) for r in rows] == [
        ("cut", "interrupted", 3, 40),
        ("done", "finished", 2, 2),
    ]
    only = run(["runs", "--root", str(tmp_path), "--state", "interrupted"], cwd=tmp_path)
    assert only.stdout.splitlines() == [f"cut  interrupted  iteration 3/40  {tmp_path / 'cut'}"]


def test_runs_lists_a_rerun_branch_by_its_own_iterations_not_its_parent_s_total(tmp_path):
    """A branch counts on from its parent's checkpoint and copies its config: one rerun
    iteration at checkpoint 5 is "1/1 iterations" of a branch, not "iteration 6/40"."""
    from empo2.rerun.branch import PARENT_FILE, RERUN_FILE
    from empo2.run_folder.folder import RunFolder

    branch = RunFolder.create(tmp_path, "base-branch-1", {"iterations": 40})
    branch.set_state("finished", iteration=6)
    (branch.path / PARENT_FILE).write_text(json.dumps({"run": "base", "checkpoint": 5}))
    (branch.path / RERUN_FILE).write_text(json.dumps({"status": "finished", "settings": {"iterations": 1}}))
    listed = run(["runs", "--root", str(tmp_path)], cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.splitlines() == [
        f"base-branch-1  finished  branch of base @ it 5: 1/1 iterations  {branch.path}"
    ]
    row = json.loads(run(["runs", "--root", str(tmp_path), "--json"], cwd=tmp_path).stdout)
    assert row["branch"] == {"parent": "base", "checkpoint": 5, "done": 1, "planned": 1}


def test_a_rank_of_a_launched_job_leaves_with_its_exit_status_and_everything_it_printed(tmp_path):
    """Under torchrun (WORLD_SIZE > 1) the command line ends through os._exit, past the
    interpreter's teardown: its status is the command's, and its piped stdout (block-buffered)
    and its sentence arrive whole."""
    from empo2.run_folder.folder import RunFolder

    for n in range(300):  # more than one buffer of stdout
        RunFolder.create(tmp_path, f"run{n:03d}", {"iterations": 2}).set_state("finished", iteration=2)
    rank = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # stdout block-buffered
    rank.update(WORLD_SIZE="2", RANK="1", EMPO2_NO_PROGRESS="1")

    def as_rank(args):
        return subprocess.run(HOST + args, cwd=tmp_path, capture_output=True, text=True, timeout=600, env=rank)

    listed = as_rank(["runs", "--root", str(tmp_path), "--json"])
    assert listed.returncode == 0, listed.stderr
    assert [json.loads(line)["run"] for line in listed.stdout.splitlines()] == [f"run{n:03d}" for n in range(300)]
    bad = as_rank(["runs", "--root", str(tmp_path / "none")])
    assert bad.returncode == 2 and bad.stderr.strip().endswith("is not a folder of run folders.")


def test_the_job_size_is_torchrun_s_word_and_one_outside_it(monkeypatch):
    from empo2.torchrun import world_size

    monkeypatch.delenv("WORLD_SIZE", raising=False)
    assert world_size() == 1
    monkeypatch.setenv("WORLD_SIZE", "")  # set but empty, as some launchers leave it
    assert world_size() == 1
    monkeypatch.setenv("WORLD_SIZE", "4")
    assert world_size() == 4


def _metrics(path: Path) -> list[dict]:
    drop = {"time"}
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [{k: v for k, v in m.items() if k not in drop and not k.startswith(("time/", "throughput/"))} for m in lines]


def _tips(run: Path) -> list[tuple]:
    lines = [json.loads(line) for line in (run / "memory" / "events.jsonl").read_text().splitlines()]
    return [(e.get("kind"), json.dumps(e.get("tip", {}).get("text")), e.get("tip", {}).get("id")) for e in lines]


@pytest.mark.slow
def test_kill_9_then_resume_reproduces_the_uninterrupted_run(tmp_path, tiny_policy):
    config = tiny_run_overrides(
        tiny_policy, iterations=5, **{"algo.p_memory": 0.5, "algo.q_off_policy": 0.5, "eval.every": 2}
    )
    config_path = tmp_path / "config.json"
    config_path.write_text(json.dumps(config))
    root = tmp_path / "runs"

    straight = run(["train", "--config", str(config_path), "--root", str(root), "--name", "straight"], tmp_path)
    assert straight.returncode == 0, straight.stderr

    proc = subprocess.Popen(
        HOST + ["train", "--config", str(config_path), "--root", str(root), "--name", "killed"],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=dict(os.environ, EMPO2_NO_PROGRESS="1"),
    )
    metrics = root / "killed" / "metrics.jsonl"
    deadline = time.time() + 300
    while time.time() < deadline and proc.poll() is None:
        if metrics.exists() and metrics.read_text().count("\n") >= 2:
            break
        time.sleep(0.05)
    time.sleep(0.3)  # land somewhere inside iteration 3
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL

    resumed = run(["resume", str(root / "killed")], tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert _metrics(root / "killed" / "metrics.jsonl") == _metrics(root / "straight" / "metrics.jsonl")
    assert _tips(root / "killed") == _tips(root / "straight")
    for it in range(1, 6):
        name = f"trajectories/iter-{it:06d}.jsonl"
        assert (root / "killed" / name).read_text() == (root / "straight" / name).read_text()


@pytest.mark.slow
def test_eval_reports_memory_trials(tmp_path, tiny_policy):
    result = run(
        [
            "eval",
            "--model",
            str(tiny_policy),
            "--tasks",
            "power-device,repair-radio",
            "--trials",
            "2",
            "--variations",
            "1",
        ],
        tmp_path,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["tasks"] == ["power-device", "repair-radio"] and report["episodes_per_trial"] == 2
    assert len(report["memory_success_by_trial"]) == 2
    assert report["memory_free_success"] == report["memory_success_by_trial"][0]
    assert all(0 <= s <= 1 for s in report["memory_success_by_trial"])


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.slow
def test_a_run_being_trained_refuses_a_second_writer_and_is_left_as_it_was(tmp_path, tiny_policy):
    from empo2.run_folder.folder import RunFolder

    config_path = tmp_path / "config.json"
    config_path.write_text(json.dumps(tiny_run_overrides(tiny_policy, iterations=1)))
    first = run(["train", "--config", str(config_path), "--root", str(tmp_path), "--name", "r"], tmp_path)
    assert first.returncode == 0, first.stderr
    folder = RunFolder.open(tmp_path / "r")

    with folder.writer_lock():  # this test process plays the trainer that is still running
        before = _snapshot(folder.path)
        second = run(["resume", str(folder.path), "iterations=2"], tmp_path)
        assert second.returncode == 2, second.stderr
        assert f"run r is being trained by pid {os.getpid()}; stop it first." in second.stderr
        assert _snapshot(folder.path) == before  # nothing rolled back, nothing appended

    third = run(["resume", str(folder.path), "iterations=2"], tmp_path)  # the lock went with it
    assert third.returncode == 0, third.stderr
    assert [m["iteration"] for m in _metrics(folder.metrics_path)] == [1, 2]
