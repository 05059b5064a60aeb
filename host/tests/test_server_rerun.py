"""`update.*` and `branch.*` behind a real host (protocol 1.1.0): edit a tip, dry-run the update,
rerun it on a branch, cancel and continue, compare, adopt, delete; every message checked against
the schema. With EMPO2_RECORD_TRANSCRIPT=FILE the session is written out as an example
transcript (protocol/examples/rerun.jsonl was recorded this way)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from conftest import tiny_run_overrides
from empo2.client.host_client import HostClient, HostError
from empo2.server.transport.protocol import error_codes
from server_support import TOKEN, SchemaCheck, connect, copy_run, finished_run, hash_tree, make_host

pytestmark = pytest.mark.slow
CODES = error_codes()
SMALL = {"episodes": 2, "iterations": 1, "evalEpisodes": 1}


class Recorder:
    """Every frame of one client, for a transcript; paths and the pid normalised."""

    def __init__(self, check: SchemaCheck, root: Path):
        self.inner, self.root, self.lines = check.observer(), str(root), []

    def __call__(self, direction, message, method):
        self.inner(direction, message, method)
        self.lines.append({"direction": direction, "message": message})

    def write(self, path: str) -> None:
        text = "\n".join(json.dumps(line, ensure_ascii=False) for line in self.lines) + "\n"
        text = text.replace(self.root, "/home/ada/project/.empo2/runs")
        text = re.sub(r'"pid": \d+', '"pid": 4242', text)
        Path(path).write_text(text, encoding="utf-8")


def finished(client, job_id: str) -> dict:
    message = client.wait_for(
        lambda m: m["method"] == "update/finished" and m["params"]["jobId"] == job_id, timeout=900
    )
    return message["params"]


def test_edit_dry_run_rerun_cancel_continue_compare_adopt_delete(tmp_path_factory, tiny_policy, embedder):
    root = tmp_path_factory.mktemp("rerun-host") / "runs"
    parent = copy_run(finished_run(tmp_path_factory, tiny_policy, embedder), root)
    check = SchemaCheck()
    host = make_host([root], embedder)
    recorder = Recorder(check, root)
    client = HostClient(host.url, TOKEN, observe=recorder)
    client.initialize("studio")
    try:
        tip = client.request("memory.list", {"runId": "done", "limit": 1})["items"][0]
        edited = client.request(
            "memory.update",
            {
                "runId": "done",
                "tipId": tip["id"],
                "text": "the battery was in the drawer in the kitchen . it worked . score 100",
                "expectedVersion": tip["version"],
            },
        )["tip"]
        before = hash_tree(parent)

        # Errors first: one sentence each, nothing created.
        bad = pytest.raises(
            HostError, client.request, "update.rerun", {"runId": "done", "variations": ["power-device/999"], **SMALL}
        ).value
        assert bad.code == CODES["RerunInvalid"] and "unknown variation power-device/999" in bad.message
        bad = pytest.raises(HostError, client.request, "update.rerun", {"runId": "done", "checkpoint": 9}).value
        assert bad.code == CODES["RerunInvalid"] and "no checkpoint at iteration 9" in bad.message

        # The dry run: a report, one record in dry-runs/, the parent otherwise untouched.
        job = client.request("update.rerun", {"runId": "done", "dryRun": True, **SMALL})
        assert job["dryRun"] and job["branchId"] is None
        busy = pytest.raises(HostError, client.request, "update.rerun", {"runId": "done", **SMALL}).value
        assert busy.code == CODES["RunBusy"]
        done = finished(client, job["jobId"])
        assert done["status"] == "finished", done
        assert done["result"]["loss"] is not None and done["result"]["variations"] == [edited["variationKey"]]
        after = hash_tree(parent)
        assert {k: v for k, v in after.items() if k in before} == before
        assert [k.split("/")[0] for k in set(after) - set(before)] == ["dry-runs"]

        # The rerun, cancelled during its first iteration, then continued to the end.
        job = client.request(
            "update.rerun", {"runId": "done", "episodes": 2, "iterations": 2, "evalEpisodes": 1, "name": "what-if"}
        )
        assert job["branchId"] == "what-if" and not job["dryRun"]
        client.wait_for(
            lambda m: (
                m["method"] == "update/progress"
                and m["params"]["jobId"] == job["jobId"]
                and m["params"]["progress"]["phase"] == "rollout"
            ),
            timeout=600,
        )
        assert client.request("update.cancel", {"jobId": job["jobId"]})["cancelled"]
        stopped = finished(client, job["jobId"])
        assert stopped["status"] == "stopped" and stopped["branchId"] == "what-if"
        # The branch's live run ends (its last run/state says stopped); then it can go on.
        client.wait_for(
            lambda m: (
                m["method"] == "run/state"
                and m["params"]["run"]["runId"] == "what-if"
                and m["params"]["run"]["state"] == "stopped"
            ),
            timeout=300,
        )
        again = client.request("update.rerun", {"runId": "what-if"})
        assert again["branchId"] == "what-if"
        result = finished(client, again["jobId"])
        assert result["status"] == "finished", result
        comparison = result["result"]["comparison"]
        assert [c["variation"] for c in comparison] == [edited["variationKey"]]
        assert comparison[0]["before"] is not None and comparison[0]["after"] is not None
        assert result["result"]["tips"][0]["after"] == edited["text"]
        assert hash_tree(parent) == after  # the rerun never wrote the parent

        runs = {r["runId"]: r for r in client.request("run.list")["runs"]}
        assert runs["what-if"]["parent"] == {"runId": "done", "checkpoint": 2, "adopted": False}
        assert runs["what-if"]["state"] == "finished"  # its rerun finished: not "stopped"
        assert "parent" not in runs["done"]
        saved = client.request("update.compare", {"runId": "what-if"})["result"]
        assert saved["comparison"] == comparison
        not_branch = pytest.raises(HostError, client.request, "branch.delete", {"runId": "done"}).value
        assert not_branch.code == CODES["RerunInvalid"]
        adopted = client.request("branch.adopt", {"runId": "what-if"})["run"]
        assert adopted["parent"]["adopted"] is True
        assert client.request("branch.delete", {"runId": "what-if"}) == {"deleted": "what-if"}
        assert not (root / "what-if").exists()
        check.assert_clean()
    finally:
        client.close()
        host.stop()
    if os.environ.get("EMPO2_RECORD_TRANSCRIPT"):
        recorder.write(os.environ["EMPO2_RECORD_TRANSCRIPT"])


def test_a_paused_run_is_dry_run_and_rerun_beside_it_and_stays_paused(tmp_path, tiny_policy, embedder):
    """Pause, edit a tip, rerun: the loop reruns are for. The paused run stays the live run,
    paused and untouched (the branch is a run folder of its own); it resumes once the rerun has
    ended, and trains on."""
    check = SchemaCheck()
    root = tmp_path / "runs"
    host = make_host([root], embedder, follow_interval_s=0.1)  # looks often: the branch is this host's
    client = connect(host, check, "studio")
    try:
        config = tiny_run_overrides(tiny_policy, iterations=2, **{"eval.every": 0})
        client.request("run.start", {"config": config, "name": "live", "pauseAfterIteration": 1})
        client.wait_for(lambda m: m["method"] == "run/state" and m["params"]["run"]["state"] == "paused", timeout=600)
        tip = client.request("memory.list", {"runId": "live", "limit": 1})["items"][0]
        edited = client.request(
            "memory.update",
            {"runId": "live", "tipId": tip["id"], "text": "open the drawer first", "expectedVersion": tip["version"]},
        )["tip"]
        before = {k: v for k, v in hash_tree(root / "live").items() if k != "host.log"}

        job = client.request("update.rerun", {"runId": "live", "dryRun": True, **SMALL})
        done = finished(client, job["jobId"])
        assert done["status"] == "finished", done
        assert done["result"]["variations"] == [edited["variationKey"]]

        job = client.request("update.rerun", {"runId": "live", "name": "what-if", **SMALL})
        assert job["branchId"] == "what-if" and not job["dryRun"]
        busy = pytest.raises(HostError, client.request, "run.resume", {"runId": "live"}).value
        assert busy.code == CODES["RunBusy"]
        assert busy.message == (
            "a rerun on branch 'what-if' of run 'live' runs beside the paused run 'live'; "
            "it resumes once that has ended (or cancel it)."
        )
        result = finished(client, job["jobId"])
        assert result["status"] == "finished", result
        assert [c["variation"] for c in result["result"]["comparison"]] == [edited["variationKey"]]
        assert [t["after"] for t in result["result"]["tips"]] == [edited["text"]]

        status = client.request("run.status", {"runId": "live"})["run"]
        assert (status["live"], status["state"], status["iteration"]) == (True, "paused", 1)
        after = {k: v for k, v in hash_tree(root / "live").items() if k != "host.log"}
        assert {k: v for k, v in after.items() if k in before} == before  # the parent: untouched
        assert [k.split("/")[0] for k in set(after) - set(before)] == ["dry-runs"]
        runs = {r["runId"]: r for r in client.request("run.list")["runs"]}
        assert runs["what-if"]["parent"] == {"runId": "live", "checkpoint": 1, "adopted": False}
        assert runs["what-if"]["state"] == "finished"
        # The rerun wrote its branch in this host's own thread: not followed as another process's.
        assert [
            m["method"]
            for m in client.notifications
            if m["method"] in ("run/state", "run/metrics", "trajectory/added")
            and m["params"].get("runId", m["params"].get("run", {}).get("runId")) == "what-if"
        ] == []

        client.request("run.resume", {"runId": "live"})
        client.wait_for(
            lambda m: (
                m["method"] == "run/state"
                and m["params"]["run"]["runId"] == "live"
                and m["params"]["run"]["state"] == "finished"
            ),
            timeout=600,
        )
        check.assert_clean()
    finally:
        client.close()
        host.stop()
