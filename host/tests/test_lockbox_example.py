"""The example environment package (examples/lockbox-env) as a researcher uses it: installed into
the host's environment from its folder, listed by `empo2-host envs`, trained by its entry-point
name from the command line, the run folder it leaves, and what works on a run (rerun, dry or on a
branch, the episode debugger's replay, and export); then the same through the JSON-RPC host the
extension spawns (`empo2-host serve`): the environment list, the tree's trajectories, the tips,
the metrics, both reruns, and a replay in the episode debugger."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import tiny_run_overrides
from empo2.client.host_client import HostClient
from server_support import TOKEN, SchemaCheck
from test_server_process import Served

pytestmark = pytest.mark.slow

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "lockbox-env"
HOST = [sys.executable, "-m", "empo2.cli"]
# A debug session replaying the first recorded episode of a run (argv[1]), turn by turn, in a
# process of its own (one started after the example was installed).
REPLAY = """
import json, sys
from empo2.debug.launch import Launch, open_session
from empo2.memory.embedding import SentenceEmbedder
from empo2.run_folder.folder import RunFolder
folder = RunFolder.open(sys.argv[1])
record = next(iter(folder.trajectories(1)))
session, info = open_session(Launch(task=None, variation=None, seed=0, mode="memory-free", temperature=None,
                                    device="cpu", run=folder, record=record, record_run=folder), SentenceEmbedder())
matches = []
while not session.done:
    turn, _ = session.step("turn")
    matches.append(turn.replay["observationMatches"])
print(json.dumps({"turns": info["replay"]["turns"], "matches": matches, "same_actions":
                  [t.executed_action for t in session.turns] == [s["executed_action"] for s in record["steps"]]}))
"""


def host(args, cwd, timeout=600):
    environment = dict(os.environ, EMPO2_NO_PROGRESS="1")
    return subprocess.run(HOST + args, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=environment)


@pytest.fixture(scope="module")
def installed():
    """pip install -e of the example's folder, without the network (no index, no build
    isolation: the venv's setuptools builds it). Installing again is harmless, so the test can
    run any number of times; the venv keeps the package (an editable install: the folder)."""
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-index",
            "--no-build-isolation",
            "--disable-pip-version-check",
            "-e",
            str(EXAMPLE),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr


def lockbox_config(tiny_policy) -> dict:
    """One iteration of the tiny policy on all of the example's tasks, evaluated once."""
    config = tiny_run_overrides(tiny_policy, **{"iterations": 1, "env.max_steps": 4, "eval.every": 1})
    del config["env"]["tasks"]  # the config names another environment: all of its tasks
    config["env"]["name"] = "lockbox"
    return config


def test_the_example_installs_lists_and_trains_one_iteration_by_its_name(tmp_path, installed, tiny_policy):
    listed = host(["envs", "--json"], cwd=tmp_path, timeout=120)
    assert listed.returncode == 0, listed.stderr
    rows = {row["name"]: row for row in map(json.loads, listed.stdout.splitlines())}
    assert rows["lockbox"] == {
        "name": "lockbox",
        "source": "lockbox_env:LockboxEnv (package empo2-lockbox 0.1.0)",
        "tasks": ["escape", "open-chest"],
        "error": None,
    }

    (tmp_path / "lockbox.json").write_text(json.dumps(lockbox_config(tiny_policy)))
    trained = host(["train", "--config", "lockbox.json", "--root", "runs", "--name", "lockbox"], cwd=tmp_path)
    assert trained.returncode == 0, trained.stderr
    assert json.loads(trained.stdout.splitlines()[-1])["state"] == "finished"

    run = tmp_path / "runs" / "lockbox"
    assert json.loads((run / "config.json").read_text())["env"]["name"] == "lockbox"
    assert json.loads((run / "run.json").read_text())["state"] == "finished"
    assert json.loads((run / "run.json").read_text())["iteration"] == 1
    (metrics,) = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    assert metrics["iteration"] == 1 and "rollout/return" in metrics
    assert {"eval/memory_free/success/escape", "eval/memory_free/success/open-chest"} <= set(metrics)
    summaries = [json.loads(line) for line in (run / "trajectories" / "index.jsonl").read_text().splitlines()]
    assert len(summaries) == 2 * 2  # batch_tasks × group_size
    assert {s["task"] for s in summaries} <= {"escape", "open-chest"}
    assert {s["variation"] for s in summaries} <= set(range(6))  # the example's training split
    episodes = [json.loads(line) for line in (run / "trajectories" / "iter-000001.jsonl").read_text().splitlines()]
    for episode in episodes:
        assert episode["description"] in (
            "find the key and leave the house through the front door",
            "find the key and open the chest in the cellar",
        )
        assert 1 <= len(episode["steps"]) <= 4
        assert all(
            step["observation"].startswith(("you are in the", "you search", "you take", "the "))
            or step["observation"] == "nothing happens ."
            for step in episode["steps"]
        )
    assert (run / "checkpoints" / "iter-000001" / "trainer.json").is_file()
    # The tips the policy wrote after its lockbox episodes, in the run's memory log.
    events = [json.loads(line) for line in (run / "memory" / "events.jsonl").read_text().splitlines()]
    added = [event["tip"] for event in events if event["kind"] == "add"]
    assert added and {tip["variation_key"].split("/")[0] for tip in added} <= {"escape", "open-chest"}

    # What a run of the built-in worlds offers works on it too: a dry run and a branch of the
    # off-policy update, and the export of its checkpoint.
    dry = host(["rerun", str(run), "--dry-run", "--variations", "escape/0,open-chest/1"], cwd=tmp_path)
    assert dry.returncode == 0, dry.stderr
    report = json.loads(dry.stdout.splitlines()[-1])
    assert report["dry_run"] and report["variations"] == ["escape/0", "open-chest/1"]
    assert report["loss"] == report["loss"] and report["stats"]["ratio_mean"] > 0  # a number, not NaN
    branch = host(
        [
            "rerun",
            str(run),
            "--variations",
            "escape/0",
            "--episodes",
            "2",
            "--iterations",
            "1",
            "--eval-episodes",
            "1",
            "--held-out",
            "1",
        ],
        cwd=tmp_path,
    )
    assert branch.returncode == 0, branch.stderr
    result = json.loads(branch.stdout.splitlines()[-1])
    assert result["status"] == "finished" and result["iteration"] == 2
    # The chosen training variation, and the example's first held-out one (6).
    assert [row["variation"] for row in result["comparison"]] == ["escape/0", "escape/6"]
    # The episode debugger replays a recorded episode: the example's reset is deterministic in
    # its seed, so every replayed observation is the recorded one.
    replayed = subprocess.run(
        [sys.executable, "-c", REPLAY, str(run)], capture_output=True, text=True, timeout=300, cwd=tmp_path
    )
    assert replayed.returncode == 0, replayed.stderr
    replay = json.loads(replayed.stdout.splitlines()[-1])
    assert replay["turns"] == len(replay["matches"]) >= 1 and all(replay["matches"]) and replay["same_actions"]

    exported = host(["export", str(run), "--out", "exported"], cwd=tmp_path)
    assert exported.returncode == 0, exported.stderr
    assert (tmp_path / "exported" / "model.safetensors").is_file()


def test_every_view_of_the_spawned_host_works_on_the_example(tmp_path, installed, tiny_policy):
    """What the extension's views ask `empo2-host serve` for, on a run of the example trained
    through it: every message checked against the protocol's schema."""
    check = SchemaCheck()
    root = tmp_path / "runs"
    with (
        Served(["--port", "0", "--run-root", str(root)], tmp_path) as served,
        HostClient(served.url, TOKEN, observe=check.observer()) as client,
    ):
        client.initialize("studio")
        listed = {env["name"]: env for env in client.request("env.list", timeout=120)["environments"]}
        assert listed["lockbox"]["tasks"] == ["escape", "open-chest"] and listed["lockbox"]["error"] is None

        run = client.request("run.start", {"config": lockbox_config(tiny_policy), "name": "lockbox"})["run"]
        assert run["runId"] == "lockbox"
        ended = client.wait_for(
            lambda m: (
                m["method"] == "run/state"
                and m["params"]["run"]["runId"] == "lockbox"
                and m["params"]["run"]["state"] in ("finished", "failed")
            ),
            timeout=600,
        )
        assert ended["params"]["run"]["state"] == "finished", f"{ended}\n{served.log()}"

        # The Trajectories tree: the run's episodes under the example's task names.
        items = client.request("trajectory.list", {"runId": "lockbox"})["items"]
        assert len(items) == 2 * 2 and {item["task"] for item in items} <= {"escape", "open-chest"}
        episode = client.request("trajectory.get", {"runId": "lockbox", "episodeId": items[0]["id"]})["episode"]
        assert episode["description"] in (
            "find the key and leave the house through the front door",
            "find the key and open the chest in the cellar",
        )
        # The Memory Tips view: the tips the policy wrote after its lockbox episodes.
        tips = client.request("memory.list", {"runId": "lockbox", "limit": 100})["items"]
        assert tips and {tip["variationKey"].split("/")[0] for tip in tips} <= {"escape", "open-chest"}
        # The metrics view: iteration 1, with the example's per-task evaluation.
        (record,) = client.request("run.metrics", {"runId": "lockbox"})["records"]
        assert record["iteration"] == 1 and "rollout/return" in record
        assert {"eval/memory_free/success/escape", "eval/memory_free/success/open-chest"} <= set(record)

        # Rerun: a dry run, then a branch.
        small = {"variations": ["escape/0"], "episodes": 2, "iterations": 1, "evalEpisodes": 1}

        def rerun(params):
            job = client.request("update.rerun", {"runId": "lockbox", **small, **params})
            done = client.wait_for(
                lambda m: m["method"] == "update/finished" and m["params"]["jobId"] == job["jobId"], timeout=600
            )["params"]
            assert done["status"] == "finished", f"{done}\n{served.log()}"
            return done["result"]

        dry = rerun({"dryRun": True})
        assert dry["dry_run"] and dry["variations"] == ["escape/0"] and dry["loss"] == dry["loss"]
        branch = rerun({"dryRun": False, "name": "lockbox-what-if"})
        assert not branch["dry_run"] and branch["iteration"] == 2
        assert [row["variation"] for row in branch["comparison"]][0] == "escape/0"
        runs = {r["runId"]: r for r in client.request("run.list")["runs"]}
        assert runs["lockbox-what-if"]["parent"]["runId"] == "lockbox"

        # The episode debugger replays a recorded episode turn by turn, every observation the
        # recorded one (the example's reset is deterministic in its seed).
        session = client.request(
            "debug.start", {"replay": {"runId": "lockbox", "episodeId": items[0]["id"]}, "device": "cpu"}, timeout=300
        )["session"]
        assert session["task"] == items[0]["task"] and session["replay"]["observationMismatch"] is None
        steps = []
        while not steps or not steps[-1]["episode"]["done"]:
            steps.append(client.request("debug.step", {"sessionId": session["sessionId"]}, timeout=120))
        assert len(steps) == session["replay"]["turns"] == len(episode["steps"])
        assert all(s["turn"]["replay"]["observationMatches"] for s in steps)
        # Replaying while recorded turns remain; the last one ends the recording.
        assert [s["episode"]["replaying"] for s in steps] == [True] * (len(steps) - 1) + [False]
        assert all(s["episode"]["observationMismatch"] is None for s in steps)
        assert [s["turn"]["executedAction"] for s in steps] == [s["executed_action"] for s in episode["steps"]]
        assert client.request("debug.stop", {"sessionId": session["sessionId"]}) == {"stopped": True}
        assert client.request("shutdown") == {"stoppedRun": None}
        assert served.wait(60) == 0
    check.assert_clean()

    # export is a terminal command: it exports the checkpoint of the run the served host trained.
    exported = host(["export", str(root / "lockbox"), "--out", "exported"], cwd=tmp_path)
    assert exported.returncode == 0, exported.stderr
    assert (tmp_path / "exported" / "model.safetensors").is_file()
