"""A real `empo2-host serve` for the benchmarks that talk to one (ping_under_load.py,
rate_limit_flood.py): spawned as the extension spawns it, with a fresh token and run root in a
temporary folder, and never left running afterwards."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def served_host(prefix: str) -> Iterator[tuple[str, str]]:
    """Yields the host's WebSocket URL and token. On exit the host gets 10 s to end on its own
    (a run being stopped), then is terminated, then killed."""
    token = secrets.token_hex(32)
    workdir = Path(tempfile.mkdtemp(prefix=prefix))
    env = dict(os.environ, EMPO2_HOST_TOKEN=token, EMPO2_NO_PROGRESS="1")
    host_log = open(workdir / "host.stderr", "w")
    host = subprocess.Popen(
        [sys.executable, "-m", "empo2.cli", "serve", "--run-root", str(workdir / "runs")],
        cwd=workdir,
        env=env,
        stdout=subprocess.PIPE,
        stderr=host_log,
        text=True,
    )
    print(f"host log: {workdir / 'host.stderr'}", file=sys.stderr)
    try:
        yield f"ws://127.0.0.1:{json.loads(host.stdout.readline())['port']}/", token
    finally:
        try:
            host.wait(10 if host.poll() is None else 0)
        except subprocess.TimeoutExpired:
            host.terminate()  # never leave a training host behind
            try:
                host.wait(30)
            except subprocess.TimeoutExpired:
                host.kill()
        host_log.close()
