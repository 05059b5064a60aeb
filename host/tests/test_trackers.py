"""report_to: the run folder mirrored to TensorBoard, W&B and trackio, never at the run's cost.

The fast tests drive the mirror over hand-written run folders with a recording tracker; the slow
ones train the tiny policy and read every number back with each tracker's own reader.
"""

from __future__ import annotations

import json
import logging
import os
import re
import struct
import tempfile
from pathlib import Path

import pytest

# trackio fixes its store when first imported: the tests' store is a scratch folder.
os.environ.setdefault("TRACKIO_DIR", tempfile.mkdtemp(prefix="empo2-trackio-test-"))

from conftest import tiny_run_overrides  # noqa: E402
from empo2.atomic import append_jsonl, atomic_write_json  # noqa: E402
from empo2.config import TRACKERS, ConfigError, load_config  # noqa: E402
from empo2.rerun.branch import create_branch  # noqa: E402
from empo2.run_folder.folder import RunFolder  # noqa: E402
from empo2.trackers import (  # noqa: E402
    STATE_FILE,
    TrackerMirror,
    sinks as sinks_module,  # noqa: E402
)
from empo2.trackers.sinks import ENV_STEPS_PREFIX, SINKS, TENSORBOARD_FOLDER, WANDB_FOLDER, scalars  # noqa: E402
from empo2.training.trainer import Trainer  # noqa: E402


class Recording:
    """A tracker that keeps every call (class-level, so a test sees what each instance got)."""

    calls: list = []
    opened: list = []

    def open(self, run):
        Recording.opened.append(run)
        return {"id": f"rec-{len(Recording.opened)}"}

    def metrics(self, record, iteration, env_steps):
        Recording.calls.append(("metrics", iteration, env_steps, record))

    def texts(self, iteration, tips, episodes):
        Recording.calls.append(("texts", iteration, tips, episodes))

    def flush(self):
        pass

    def close(self):
        Recording.calls.append(("close",))


class RaisingAtEveryCall:
    def open(self, run):
        raise RuntimeError("the tracker's server refused the connection")


class RaisingAfterOpen:
    def open(self, run):
        return {}

    def _fail(self, *args):
        raise OSError(28, "No space left on device")

    metrics = texts = flush = close = _fail


@pytest.fixture
def recording():
    Recording.calls, Recording.opened = [], []
    return {"recording": Recording}


def _metrics_line(iteration: int) -> dict:
    return {
        "iteration": iteration,
        "env_steps": 10 * iteration,
        "rollout/return": 0.5 * iteration,
        "rollout_mode": "memory",
        "memory/tips": iteration,
    }


def _tip_added(tip_id: str, iteration: int) -> dict:
    return {
        "kind": "add",
        "at": "now",
        "tip": {
            "id": tip_id,
            "variation_key": "power-device/0",
            "text": f"tip of iteration {iteration}",
            "score": 1.0,
            "author": "policy",
            "provenance": {"iteration": iteration},
        },
        "entries": [],
        "first_entry": 0,
    }


def _episode(iteration: int, k: int) -> dict:
    return {
        "id": f"i{iteration}-e{k}",
        "iteration": iteration,
        "task": "power-device",
        "variation": 0,
        "rollout_mode": "memory",
        "return": 1.0,
        "success": True,
        "steps": [{"executed_action": "go east"}, {"executed_action": "press button"}],
    }


def _fake_run(root: Path, iterations: int) -> RunFolder:
    folder = RunFolder.create(root, "run", {"name": "run", "report_to": ["recording"]})
    for i in range(1, iterations + 1):
        _write_iteration(folder, i)
    return folder


def _write_iteration(folder: RunFolder, i: int) -> None:
    folder.memory_path.mkdir(exist_ok=True)
    append_jsonl(folder.memory_path / "events.jsonl", [_tip_added(f"t{i:06d}", i)])
    episodes = [_episode(i, k) for k in range(4)]
    folder.write_trajectories(i, episodes, [{"id": e["id"], "iteration": i} for e in episodes])
    folder.append_metrics(_metrics_line(i))


def _mirror(folder: RunFolder, kinds: dict, names=("recording",)) -> None:
    mirror = TrackerMirror(folder, list(names), interval_s=0.01, sinks=kinds)
    mirror.start()
    mirror.stop()


def _mirrored(kind: str) -> list:
    return [c for c in Recording.calls if c[0] == kind]


def test_report_to_names_the_trackers_and_refuses_any_other():
    assert load_config({}).report_to == []
    assert load_config({}, ["report_to=tensorboard,trackio"]).report_to == ["tensorboard", "trackio"]
    assert load_config({"report_to": ["wandb"]}).report_to == ["wandb"]
    with pytest.raises(ConfigError) as err:
        load_config({}, ["report_to=tensorboard,mlflow"])
    assert str(err.value) == "config key 'report_to' names no tracker: 'mlflow' (trackers: tensorboard, wandb, trackio)"
    assert tuple(SINKS) == TRACKERS


def test_each_iteration_goes_with_its_steps_its_tips_and_sampled_episodes(tmp_path, recording):
    folder = _fake_run(tmp_path, 2)
    _mirror(folder, recording)
    assert [(c[1], c[2], c[3]) for c in _mirrored("metrics")] == [(1, 10, _metrics_line(1)), (2, 20, _metrics_line(2))]
    texts = _mirrored("texts")
    assert [[row[0] for row in c[2]] for c in texts] == [["t000001"], ["t000002"]]  # each tip at its iteration
    assert texts[0][2][0][1:] == ["new", "power-device/0", "policy", 1, 1.0, "tip of iteration 1"]
    assert [[row[0] for row in c[3]] for c in texts] == [["i1-e0", "i1-e1", "i1-e2"], ["i2-e0", "i2-e1", "i2-e2"]]
    assert texts[0][3][0][-1] == "go east → press button"
    assert Recording.opened[0].name == "run" and Recording.opened[0].config["report_to"] == ["recording"]
    assert Recording.calls[-1] == ("close",)


def test_a_resumed_run_continues_its_tracker_run_without_repeating_a_step(tmp_path, recording):
    folder = _fake_run(tmp_path, 2)
    _mirror(folder, recording)
    # A kill after iteration 3 was mirrored, a resume from checkpoint 2 that retrains it, then 4.
    _write_iteration(folder, 3)
    _mirror(folder, recording)
    folder.rollback_to(2)
    append_jsonl(
        folder.memory_path / "events.jsonl",
        [{"kind": "update", "tip_id": "t000001", "author": "person", "text": "edited"}],
    )
    _write_iteration(folder, 3)
    _write_iteration(folder, 4)
    _mirror(folder, recording)
    assert [c[1] for c in _mirrored("metrics")] == [1, 2, 3, 4]
    assert [run.remembered for run in Recording.opened] == [{}, {"id": "rec-1"}, {"id": "rec-2"}]
    state = json.loads((folder.path / STATE_FILE).read_text())
    assert state["iteration"] == 4 and state["trackers"] == {"recording": {"id": "rec-3"}}
    last = _mirrored("texts")[-1]
    assert last[1] == 4 and ["t000001", "edited"] in [row[:2] for row in last[2]]


def test_a_branch_is_a_tracker_run_of_its_own_named_after_its_parent_and_checkpoint(tmp_path, recording):
    parent = _fake_run(tmp_path, 2)
    checkpoint = parent.checkpoints_path / "iter-000002"
    checkpoint.mkdir(parents=True)
    atomic_write_json(checkpoint / "trainer.json", {"iteration": 2, "memory_marker": None})
    _mirror(parent, recording)
    branch = create_branch(parent, 2)
    assert not (branch.path / STATE_FILE).exists()
    _write_iteration(branch, 3)
    _mirror(branch, recording)
    run = Recording.opened[-1]
    assert (run.name, run.group, run.remembered, run.folder) == ("run@2 (run-branch-1)", "run", {}, branch.path)
    assert [c[1] for c in _mirrored("metrics")] == [1, 2, 3]
    # Its tips table holds its own tip, not the parent's copied ones again.
    assert [row[0] for row in _mirrored("texts")[-1][2]] == ["t000003"]


def test_a_tracker_that_raises_at_every_call_costs_one_warning_and_nothing_else(tmp_path, recording, caplog):
    folder = _fake_run(tmp_path, 2)
    kinds = {**recording, "wandb": RaisingAtEveryCall, "trackio": RaisingAfterOpen, "tensorboard": None}
    with caplog.at_level(logging.WARNING, logger="empo2.trackers"):
        _mirror(folder, kinds, names=("wandb", "recording", "trackio", "tensorboard"))
    warnings = [r.getMessage() for r in caplog.records if r.name == "empo2.trackers"]
    assert len(warnings) == 3, warnings
    assert warnings[0] == (
        "tracker wandb cannot mirror run run (training goes on, metrics.jsonl keeps every "
        "iteration): the tracker's server refused the connection"
    )
    assert warnings[1].startswith("tracker tensorboard cannot mirror run run (")
    assert (
        warnings[2].startswith("tracker trackio stops mirroring run run (") and "No space left on device" in warnings[2]
    )
    assert [c[1] for c in _mirrored("metrics")] == [1, 2]  # the others go on


def test_a_tracker_that_is_not_installed_says_so(tmp_path, recording, caplog, monkeypatch):
    class NotInstalled:
        def open(self, run):
            import empo2_no_such_tracker  # noqa: F401

    with caplog.at_level(logging.WARNING, logger="empo2.trackers"):
        _mirror(_fake_run(tmp_path, 1), {"wandb": NotInstalled}, names=("wandb",))
    (warning,) = [r.getMessage() for r in caplog.records if r.name == "empo2.trackers"]
    assert "its package is not installed" in warning and "requirements-trackers.lock" in warning


def test_wandb_goes_online_only_with_an_account(tmp_path, monkeypatch):
    monkeypatch.delenv("WANDB_API_KEY", raising=False)
    monkeypatch.delenv("WANDB_BASE_URL", raising=False)
    netrc = tmp_path / "netrc"
    netrc.write_text("machine example.org login a password b\n")
    netrc.chmod(0o600)
    monkeypatch.setenv("NETRC", str(netrc))
    assert not sinks_module.wandb_account_configured()
    netrc.write_text("machine api.wandb.ai login user password secret\n")
    assert sinks_module.wandb_account_configured()
    netrc.unlink()
    monkeypatch.setenv("WANDB_API_KEY", "x" * 40)
    assert sinks_module.wandb_account_configured()


@pytest.mark.slow
def test_a_tracker_raising_mid_run_leaves_training_and_metrics_whole(
    tmp_path, tiny_policy, embedder, recording, monkeypatch, caplog
):
    """The real trainer with report_to: one tracker raises at every call after it opened, one
    cannot start; the run finishes, metrics.jsonl has every iteration, the other tracker got them."""
    for name, kind in (("tensorboard", Recording), ("wandb", RaisingAfterOpen), ("trackio", RaisingAtEveryCall)):
        monkeypatch.setitem(SINKS, name, kind)
    config = load_config(tiny_run_overrides(tiny_policy, iterations=2, report_to=list(TRACKERS), **{"eval.every": 0}))
    config.root, config.name = str(tmp_path), "run"
    folder = RunFolder.create(tmp_path, "run", config.to_dict())
    with caplog.at_level(logging.WARNING, logger="empo2.trackers"):
        Trainer(config, folder, embedder=embedder).run()
    assert folder.state()["state"] == "finished"
    assert [r["iteration"] for r in folder.metrics()] == [1, 2]
    assert [c[3] for c in _mirrored("metrics")] == folder.metrics()
    warnings = [r.getMessage() for r in caplog.records if r.name == "empo2.trackers"]
    assert len(warnings) == 2 and any("wandb stops" in w for w in warnings), warnings


def wandb_records(path: Path):
    """The records of a .wandb file, parsed with W&B's own protobuf (wandb.proto). The file is a
    LevelDB-style log: a 7-byte header, then 32 KiB blocks of chunks (crc32, length, type), a
    record whole (type 1) or in first/middle/last pieces (2, 3, 4)."""
    from wandb.proto import wandb_internal_pb2 as pb

    data = path.read_bytes()
    assert data[:4] == b":W&B"
    pos, block, pending = 7, 32768, b""
    while pos + 7 <= len(data):
        left = block - pos % block
        if left < 7:
            pos += left
            continue
        _, length, kind = struct.unpack("<IHB", data[pos : pos + 7])
        pending += data[pos + 7 : pos + 7 + length]
        pos += 7 + length
        if kind in (1, 4):
            record = pb.Record()
            record.ParseFromString(pending)
            yield record
            pending = b""


@pytest.mark.slow
def test_the_trackers_own_readers_hold_every_number_of_metrics_jsonl_after_a_resume(
    tmp_path, tiny_policy, embedder, monkeypatch
):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    from trackio.sqlite_storage import SQLiteStorage

    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_CONFIG_DIR", str(tmp_path / "wandb-config"))
    monkeypatch.setenv("TRACKIO_PROJECT", f"empo2-test-{tmp_path.name}")
    config = load_config(tiny_run_overrides(tiny_policy, iterations=2, report_to=list(TRACKERS), **{"eval.every": 0}))
    config.root, config.name = str(tmp_path), "run"
    folder = RunFolder.create(tmp_path, "run", config.to_dict())
    Trainer(config, folder, embedder=embedder).run()
    Trainer(load_config(folder.config(), ["iterations=3"]), folder, embedder=embedder).run(resume=True)
    metrics = folder.metrics()
    assert [r["iteration"] for r in metrics] == [1, 2, 3]
    state = json.loads((folder.path / STATE_FILE).read_text())
    assert state["iteration"] == 3 and set(state["trackers"]) == set(TRACKERS)

    # TensorBoard: every number at its iteration and again at its env_steps, each step once.
    events = EventAccumulator(str(folder.path / TENSORBOARD_FOLDER), size_guidance={"scalars": 0})
    events.Reload()
    for key in scalars(metrics[0]):
        assert [e.step for e in events.Scalars(key)] == [1, 2, 3], key
        for tag, step in ((key, "iteration"), (ENV_STEPS_PREFIX + key, "env_steps")):
            got = {e.step: e.value for e in events.Scalars(tag)}
            want = {int(r[step]): pytest.approx(r[key], rel=1e-6, abs=1e-30) for r in metrics}
            assert got == want, tag
    assert events.Tags()["tensors"] and "tips/changed/text_summary" in events.Tags()["tensors"]

    # W&B: one run id across both processes; its history, read from the offline run folders.
    run_id = state["trackers"]["wandb"]["id"]
    files = sorted((folder.path / WANDB_FOLDER).glob("offline-run-*/run-*.wandb"))
    assert len(files) == 2 and all(f.name == f"run-{run_id}.wandb" for f in files)
    history: dict[int, dict] = {}
    for path in files:
        for record in wandb_records(path):
            if record.WhichOneof("record_type") == "history":
                items = {
                    item.key or "/".join(item.nested_key): json.loads(item.value_json) for item in record.history.item
                }
                step = record.history.step.num
                assert "rollout/return" not in history.get(step, {}) or "rollout/return" not in items
                history.setdefault(step, {}).update(items)
    assert sorted(history) == [1, 2, 3]
    for r in metrics:
        row = history[r["iteration"]]
        assert {k: row[k] for k in r if k != "iteration"} == {k: v for k, v in r.items() if k != "iteration"}
        assert row["episodes/sampled/_type"] == "table-file"  # a table's fields are nested keys
    assert any(row.get("tips/changed/_type") == "table-file" for row in history.values())

    # trackio: its local store holds the same numbers, each step once.
    logs = [row for row in SQLiteStorage.get_logs(os.environ["TRACKIO_PROJECT"], "run") if "rollout/return" in row]
    assert [row["step"] for row in logs] == [1, 2, 3]
    for row, r in zip(logs, metrics):
        assert {k: row[k] for k in scalars(r) if k != "time"} == {k: v for k, v in scalars(r).items() if k != "time"}


def test_a_trackers_warning_reaches_the_clients_as_a_training_line(tmp_path):
    """The warning goes where every training line goes: the host's log/message to the clients."""
    from empo2.server.logs import LogForwarder

    class Hub:
        sent: list = []

        def publish_threadsafe(self, method, params):
            Hub.sent.append((method, params))

    forwarder = LogForwarder(Hub(), lambda: "run")
    logging.getLogger("empo2").addHandler(forwarder)
    try:
        _mirror(_fake_run(tmp_path, 1), {"wandb": RaisingAtEveryCall}, names=("wandb",))
    finally:
        logging.getLogger("empo2").removeHandler(forwarder)
    (entry,) = [p["entries"][0] for m, p in Hub.sent if m == "log/message"]
    assert (entry["level"], entry["logger"], entry["runId"]) == ("WARNING", "empo2.trackers", "run")
    assert entry["message"].startswith("tracker wandb cannot mirror run run (training goes on")


@pytest.mark.slow
def test_the_overhead_benchmark_compares_both_arms_and_reports_the_mirrors_cpu(tiny_policy, tmp_path):
    import subprocess
    import sys

    script = Path(__file__).resolve().parents[1] / "benchmarks" / "tracker_overhead.py"
    env = dict(os.environ, EMPO2_NO_PROGRESS="1", HF_HUB_OFFLINE="1", WANDB_CONFIG_DIR=str(tmp_path))
    result = subprocess.run(
        [sys.executable, str(script), "--iterations", "2", "--policy", str(tiny_policy)],
        capture_output=True,
        text=True,
        timeout=900,
        env=env,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    lines = result.stdout.splitlines()
    assert sum(line.strip().startswith(("off ", "all three ")) and "run 0" in line for line in lines) == 4
    assert any(line.startswith("all three ") and len(line.split()) == 6 for line in lines), lines
    assert any(line.startswith("difference ") and "95% interval" in line for line in lines), lines
    assert any(
        re.match(r"the mirror's thread: [0-9.]+ s of CPU per run of 2 iterations \(runs: [0-9.]+, [0-9.]+\)", line)
        for line in lines
    ), lines
    assert any(line.startswith("load average before ") for line in lines)


@pytest.mark.slow
def test_a_rerun_branch_is_mirrored_as_its_own_run_and_a_dry_run_not_at_all(
    tmp_path, tiny_policy, embedder, recording, monkeypatch
):
    from empo2.rerun.runner import RerunSettings, rerun

    monkeypatch.setitem(SINKS, "tensorboard", Recording)
    config = load_config(tiny_run_overrides(tiny_policy, iterations=1, report_to=["tensorboard"], **{"eval.every": 0}))
    config.root, config.name = str(tmp_path), "run"
    folder = RunFolder.create(tmp_path, "run", config.to_dict())
    Trainer(config, folder, embedder=embedder).run()
    small = dict(variations=["power-device/0"], episodes=2, iterations=1, eval_episodes=1)
    rerun(folder, RerunSettings(dry_run=True, **small), embedder=embedder)
    assert [run.name for run in Recording.opened] == ["run"]  # the dry run: no tracker run
    result = rerun(folder, RerunSettings(**small), embedder=embedder)
    branch = Recording.opened[-1]
    assert (branch.name, branch.group) == (f"run@1 ({result['branch']})", "run")
    assert [(c[1], c[3]["iteration"]) for c in _mirrored("metrics")] == [(1, 1), (2, 2)]
    assert json.loads((tmp_path / result["branch"] / STATE_FILE).read_text())["iteration"] == 2
