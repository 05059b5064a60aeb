"""`empo2-host serve` as the extension runs it: a subprocess, its ready line, its refusals, and a
kill -9 in the middle of an iteration followed by a restart that opens and resumes the run."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time

import pytest

from conftest import tiny_run_overrides
from empo2.client.host_client import HostClient, HostError
from empo2.run_folder.folder import RunFolder
from empo2.server.transport.protocol import error_codes, protocol_version
from server_support import TOKEN, SchemaCheck

HOST = [sys.executable, "-m", "empo2.cli", "serve"]


def environment(**extra):
    env = dict(os.environ, EMPO2_NO_PROGRESS="1", HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    env.pop("EMPO2_HOST_TOKEN", None)
    env.update(extra)
    return env


class Served:
    """A `serve` subprocess: its ready line read with a deadline, stderr kept in a file."""

    def __init__(self, args, cwd, token=TOKEN):
        self.stderr_path = cwd / f"host-{time.monotonic_ns()}.stderr"
        self.stderr = open(self.stderr_path, "w")
        env = environment(**({"EMPO2_HOST_TOKEN": token} if token else {}))
        self.proc = subprocess.Popen(
            HOST + args, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=self.stderr, text=True
        )
        self.ready = self._ready_line(timeout=120)

    def _ready_line(self, timeout):
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        assert ready, f"no ready line; stderr: {self.stderr_path.read_text()[-2000:]}"
        line = self.proc.stdout.readline()
        assert line.endswith("\n"), f"stdout: {line!r}; stderr: {self.stderr_path.read_text()[-2000:]}"
        return json.loads(line)

    @property
    def url(self):
        return f"ws://127.0.0.1:{self.ready['port']}/"

    def log(self) -> str:
        self.stderr.flush()
        return self.stderr_path.read_text()[-3000:]

    def kill(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(30)
        self.stderr.close()

    def wait(self, timeout=60):
        code = self.proc.wait(timeout)
        self.stderr.close()
        return code

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        """A failed test must not leave a host behind."""
        if self.proc.poll() is None:
            self.kill()


def test_ready_line_is_one_json_line_and_shutdown_exits_cleanly(tmp_path):
    check = SchemaCheck()
    with Served(["--port", "0", "--run-root", str(tmp_path / "runs")], tmp_path) as served:
        assert set(served.ready) == {"event", "port", "pid", "protocolVersion"}
        assert served.ready["event"] == "ready" and served.ready["pid"] == served.proc.pid
        assert served.ready["protocolVersion"] == protocol_version() and served.ready["port"] > 0
        with HostClient(served.url, TOKEN, observe=check.observer()) as client:
            client.initialize("spawner")
            assert client.request("run.list")["roots"] == [str((tmp_path / "runs").resolve())]
            assert client.request("shutdown") == {"stoppedRun": None}
        assert served.wait(30) == 0
        assert served.proc.stdout.read() == ""  # nothing after the ready line
    check.assert_clean()


@pytest.mark.parametrize(
    "args, token, message",
    [
        ([], None, "set EMPO2_HOST_TOKEN"),
        ([], "short", "at least 16 characters"),
        (["--host", "0.0.0.0"], TOKEN, "pass --allow-remote"),
        (["--host", "0.0.0.0", "--allow-remote", "--insecure-no-token"], None, "needs a token"),
    ],
)
def test_unsafe_starts_are_refused_in_one_sentence(tmp_path, args, token, message):
    result = subprocess.run(
        HOST + args,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env=environment(**({"EMPO2_HOST_TOKEN": token} if token else {})),
    )
    assert result.returncode == 2 and result.stdout == ""
    assert message in result.stderr and "Traceback" not in result.stderr
    assert result.stderr.strip().count("\n") == 0


def until(client, served, predicate, timeout=300):
    """The first matching notification; fails at once (with the host's log) if the run fails."""
    found = client.wait_for(
        lambda m: predicate(m) or (m["method"] == "run/state" and m["params"]["run"]["state"] == "failed"),
        timeout=timeout,
    )
    assert predicate(found), f"{found}\n{served.log()}"
    return found


@pytest.mark.slow
def test_kill_9_mid_iteration_then_restart_open_and_resume(tmp_path, tiny_policy):
    """Every tip and trajectory up to the last completed iteration survives; resume finishes."""
    root = tmp_path / "runs"
    args = ["--port", "0", "--run-root", str(root)]
    check = SchemaCheck()
    config = tiny_run_overrides(tiny_policy, iterations=3, **{"eval.every": 0})

    with Served(args, tmp_path) as served:
        client = HostClient(served.url, TOKEN, observe=check.observer())
        client.initialize("before-the-crash")
        client.request("run.start", {"config": config, "name": "crash"})
        # Iteration 2 starts only after iteration 1's checkpoint is committed: kill inside it.
        until(client, served, lambda m: m["method"] == "run/progress" and m["params"]["progress"]["iteration"] == 2)
        served.kill()
        client.close()
    summaries = [s for m in client.notifications if m["method"] == "trajectory/added" for s in m["params"]["summaries"]]
    added = {
        c["tip"]["id"]: c["tip"]
        for m in client.notifications
        if m["method"] == "memory/changed"
        for c in m["params"]["changes"]
        if c["change"] == "added"
    }

    with Served(args, tmp_path) as served:
        client = HostClient(served.url, TOKEN, observe=check.observer())
        client.initialize("after-the-crash")
        run = client.request("run.open", {"path": str(root / "crash")})["run"]
        assert not run["live"] and run["state"] == "interrupted"  # its writer lock is free
        done = max(c["iteration"] for c in run["checkpoints"])
        assert done >= 1
        listed = client.request("trajectory.list", {"runId": "crash", "limit": 1000})["items"]
        kept = [s for s in summaries if s["iteration"] <= done]
        assert kept and [s for s in listed if s["iteration"] <= done] == kept
        tips = {t["id"]: t for t in client.request("memory.list", {"runId": "crash", "limit": 1000})["items"]}
        survivors = {i: t for i, t in added.items() if t["provenance"]["iteration"] <= done}
        assert survivors and all(i in tips and tips[i]["text"] == t["text"] for i, t in survivors.items())

        # While another process trains the run (this test plays one), resuming it is refused
        # and the folder is left exactly as it was.
        folder = RunFolder.open(root / "crash")
        with folder.writer_lock():
            before = (root / "crash" / "run.json").read_bytes()
            with pytest.raises(HostError) as refused:
                client.request("run.resume", {"runId": "crash"})
            assert refused.value.code == error_codes()["RunBusy"]
            assert "is being trained by pid" in refused.value.message
            assert (root / "crash" / "run.json").read_bytes() == before

        client.request("run.resume", {"runId": "crash"})
        until(client, served, lambda m: m["method"] == "run/state" and m["params"]["run"]["state"] == "finished")
        status = client.request("run.status", {"runId": "crash"})["run"]
        assert status["iteration"] == 3 and status["episodes"] == 3 * 4
        assert [r["iteration"] for r in client.request("run.metrics", {"runId": "crash"})["records"]] == [1, 2, 3]
        after = client.request("trajectory.list", {"runId": "crash", "limit": 1000})["items"]
        assert [s for s in after if s["iteration"] <= done] == kept
        tips = {t["id"]: t for t in client.request("memory.list", {"runId": "crash", "limit": 1000})["items"]}
        assert all(i in tips and tips[i]["text"] == t["text"] for i, t in survivors.items())
        assert client.request("shutdown") == {"stoppedRun": None}
        client.close()
        assert served.wait(60) == 0
    check.assert_clean()
