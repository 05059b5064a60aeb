"""Live training behind the server: run control, tip edits reaching the very next retrieval,
concurrent edits from two clients while training writes tips, one notification order for all,
and a stuck client that cannot slow training."""

from __future__ import annotations

import json
import time

import pytest
from websockets.sync.client import connect as ws_connect

from conftest import tiny_run_overrides
from empo2.client.host_client import HostError
from empo2.server.transport.protocol import error_codes, protocol_version
from server_support import HEADERS, SchemaCheck, connect, make_host

pytestmark = pytest.mark.slow
CODES = error_codes()


def states(client, run_id):
    return [
        m["params"]["run"]["state"]
        for m in client.notifications
        if m["method"] == "run/state" and m["params"]["run"]["runId"] == run_id
    ]


def flattened(client):
    """Every notification item in order (lists unpacked, seq dropped); progress left out, since
    a client that lags a little sees fewer of them."""
    items = []
    for m in client.notifications:
        params = {k: v for k, v in m["params"].items() if k != "seq"}
        lists = [k for k in ("records", "summaries", "changes", "entries") if k in params]
        if m["method"] == "run/progress":
            continue
        if lists:
            items += [(m["method"], json.dumps(item, sort_keys=True)) for item in params[lists[0]]]
        else:
            items.append((m["method"], json.dumps(params, sort_keys=True)))
    return items


def test_a_live_run_pause_edit_resume_concurrent_edits_pause_stop(tmp_path, tiny_policy, embedder):
    check = SchemaCheck()
    host = make_host([tmp_path / "runs"], embedder)
    alice, bob = connect(host, check, "alice"), connect(host, check, "bob")
    stuck = ws_connect(host.url, additional_headers=HEADERS, max_queue=1, legacy=True)
    stuck.send(
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {"protocolVersion": protocol_version(), "clientInfo": {"name": "stuck"}},
            }
        )
    )
    try:
        config = tiny_run_overrides(
            tiny_policy, iterations=4, **{"env.tasks": ["power-device"], "env.train_variations": [0], "eval.every": 0}
        )
        run = alice.request("run.start", {"config": config, "name": "live", "pauseAfterIteration": 1})["run"]
        assert run["state"] == "starting" and run["live"] and run["iterations"] == 4
        busy = pytest.raises(HostError, bob.request, "run.start", {"config": config}).value
        assert busy.code == CODES["RunBusy"] and busy.data == {"runId": "live"}

        # 1. Paused after iteration 1: a person rewrites every tip; the next retrieval sees it.
        alice.wait_for(lambda m: m["method"] == "run/state" and m["params"]["run"]["state"] == "paused")
        status = bob.request("run.status")["run"]
        assert status["live"] and status["state"] == "paused" and status["iteration"] == 1
        assert bob.request("run.list")["runs"][0]["state"] == "paused"
        # A new run meets the paused one: the refusal says to stop it, since pausing cannot help.
        refused = pytest.raises(HostError, bob.request, "run.start", {"config": config}).value
        assert refused.code == CODES["RunBusy"] and "'live' is paused" in str(refused)
        assert "stop it first" in str(refused) and "pause or stop" not in str(refused)
        tips = alice.request("memory.list", {"runId": "live", "limit": 1000})["items"]
        assert tips and all(t["author"] == "policy" for t in tips)
        edited = {}
        for tip in tips:
            text = f"EDITED {tip['id']}: open the shed before the kitchen."
            edited[tip["id"]] = alice.request(
                "memory.update", {"runId": "live", "tipId": tip["id"], "text": text, "expectedVersion": tip["version"]}
            )["tip"]
        alice.request("run.resume", {"runId": "live"})
        alice.wait_for(lambda m: m["method"] == "trajectory/added" and m["params"]["summaries"][0]["iteration"] == 2)
        shown = []
        for summary in alice.request("trajectory.list", {"runId": "live", "filter": {"iteration": 2}})["items"]:
            episode = alice.request("trajectory.get", {"runId": "live", "episodeId": summary["id"]})["episode"]
            shown += [
                (tip_id, text) for step in episode["steps"] for tip_id, text in zip(step["tip_ids"], step["tips"])
            ]
        assert shown, "iteration 2 retrieved no tips at all"
        assert all(tip_id in edited and text.startswith(edited[tip_id]["text"]) for tip_id, text in shown), shown[:3]

        # 2. Two people edit the same tip at once while training writes new tips: one wins, the
        #    other gets VersionConflict carrying the winner's tip; after a retry both edits are
        #    in the history.
        def seen_policy():
            return sum(
                c["by"]["kind"] == "policy"
                for m in alice.notifications
                if m["method"] == "memory/changed"
                for c in m["params"]["changes"]
            )

        rounds, first, deadline = 0, seen_policy(), time.monotonic() + 120
        while time.monotonic() < deadline and (rounds < 3 or seen_policy() == first):
            rounds += 1
            time.sleep(0.05)
            tip = alice.request("memory.list", {"runId": "live", "limit": 1})["items"][0]
            ids = (
                alice.send(
                    "memory.update",
                    {
                        "runId": "live",
                        "tipId": tip["id"],
                        "author": "Alice",
                        "text": f"alice {rounds}",
                        "expectedVersion": tip["version"],
                    },
                ),
                bob.send(
                    "memory.update",
                    {
                        "runId": "live",
                        "tipId": tip["id"],
                        "author": "Bob",
                        "text": f"bob {rounds}",
                        "expectedVersion": tip["version"],
                    },
                ),
            )
            answers = [alice.response(ids[0]), bob.response(ids[1])]
            won = [a for a in answers if "result" in a]
            lost = [a for a in answers if "error" in a]
            assert len(won) == 1 and len(lost) == 1, answers
            assert lost[0]["error"]["code"] == CODES["VersionConflict"]
            current = lost[0]["error"]["data"]["tip"]
            assert current == won[0]["result"]["tip"] and current["version"] == tip["version"] + 1
            loser = bob if lost[0] is answers[1] else alice
            retried = loser.request(
                "memory.update",
                {"runId": "live", "tipId": tip["id"], "text": "retry", "expectedVersion": current["version"]},
            )["tip"]
            history = alice.request("memory.history", {"runId": "live", "tipId": tip["id"]})["versions"]
            assert [v["version"] for v in history] == list(range(1, retried["version"] + 1))
            assert [v["text"] for v in history[-2:]] == [current["text"], "retry"]
        policy_tips_between = seen_policy() - first
        assert policy_tips_between > 0, "training wrote no tip while people edited"

        # 3. Pause at the next boundary, then stop from paused.
        alice.wait_for(lambda m: m["method"] == "trajectory/added" and m["params"]["summaries"][0]["iteration"] == 3)
        assert alice.request("run.pause")["run"]["state"] in ("pausing", "paused")
        alice.wait_for(
            lambda m: (
                m["method"] == "run/state"
                and m["params"]["run"]["state"] == "paused"
                and m["params"]["run"]["iteration"] == 3
            )
        )
        assert alice.request("run.stop", {"runId": "live"})["run"]["state"] == "stopping"
        alice.wait_for(lambda m: m["method"] == "run/state" and m["params"]["run"]["state"] == "stopped")
        stopped = bob.wait_for(lambda m: m["method"] == "run/state" and m["params"]["run"]["state"] == "stopped")
        assert stopped["params"]["run"]["live"] is False  # the host has let the run go
        seen = states(alice, "live")
        assert seen[:3] == ["starting", "running", "paused"] and seen[-3:] == ["paused", "stopping", "stopped"]
        assert "pausing" in seen
        final = alice.request("run.status", {"runId": "live"})["run"]
        assert final["state"] == "stopped" and not final["live"] and final["iteration"] == 3
        assert [r["iteration"] for r in alice.request("run.metrics", {"runId": "live"})["records"]] == [1, 2, 3]
        assert alice.request("run.status")["run"] is None

        # 4. Every client saw the same notifications in the same order, seq increasing.
        assert flattened(alice) == flattened(bob)
        for client in (alice, bob):
            seqs = [m["params"]["seq"] for m in client.notifications]
            assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
        changes = [c for m in alice.notifications if m["method"] == "memory/changed" for c in m["params"]["changes"]]
        people = {(c["by"]["name"], c["by"]["connection"]) for c in changes if c["by"]["kind"] == "person"}
        # An edit that names no author is by "you" (never the client program's name).
        assert ("you", alice.connection_number) in people  # the pause-time edits
        assert people & {("Alice", alice.connection_number), ("Bob", bob.connection_number)}  # winners
        assert people <= {
            ("you", alice.connection_number),
            ("Alice", alice.connection_number),
            ("you", bob.connection_number),
            ("Bob", bob.connection_number),
        }
        metrics = [r for m in alice.notifications if m["method"] == "run/metrics" for r in m["params"]["records"]]
        assert [r["iteration"] for r in metrics] == [1, 2, 3]
        assert any(m["method"] == "run/progress" for m in alice.notifications)

        # 5. A run that fails says why, and the host takes the next one. (A folder with no model
        # at all is refused before the run starts; this one looks like a model until it loads.)
        broken_model = tmp_path / "no-such-model"
        broken_model.mkdir()
        (broken_model / "config.json").write_text(json.dumps({"model_type": "no-such-architecture"}))
        bad = dict(config, policy={**config["policy"], "model": str(broken_model)})
        (tmp_path / "runs" / "broken.json").write_text(json.dumps(bad))
        alice.request(
            "run.start",
            {"configFile": str(tmp_path / "runs" / "broken.json"), "name": "broken", "overrides": ["iterations=2"]},
        )
        failed = alice.wait_for(
            lambda m: (
                m["method"] == "run/state"
                and m["params"]["run"]["runId"] == "broken"
                and m["params"]["run"]["state"] == "failed"
            )
        )
        assert "no-such-model" in failed["params"]["run"]["error"]
        assert alice.request("run.status", {"runId": "broken"})["run"]["error"] == failed["params"]["run"]["error"]
        check.assert_clean()
    finally:
        stuck.close()
        alice.close()
        bob.close()
        host.stop()
