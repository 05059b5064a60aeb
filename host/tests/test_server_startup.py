"""The idle host stays light: no server module imports the training stack, and a real
`empo2-host serve` that answers a client's browsing requests has not loaded it either.

(How fast it starts and how much memory it holds is measured by benchmarks/serve_startup.py,
not here: timings do not belong in tests.)
"""

from __future__ import annotations

import ast
import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from empo2.client.host_client import HostClient
from empo2.config import load_config
from empo2.run_folder.folder import RunFolder
from server_support import TOKEN, SchemaCheck
from test_server_process import Served

TRAINING_STACK = ("torch", "transformers", "scipy", "sentence_transformers", "empo2.training.trainer")
# What a process that imported them has mapped (torch and scipy ship shared libraries).
MAPPED = ("/torch/lib/", "/scipy/")
# Not needed to serve either: numpy alone is a third of a second of the ready line (memory files).
NOT_AT_START = TRAINING_STACK + ("numpy",)


def test_importing_every_server_module_loads_no_training_stack():
    """In a fresh interpreter: each module under empo2.server, and the CLI that starts it."""
    script = (
        "import importlib, json, pkgutil, sys\n"
        "import empo2.cli, empo2.server\n"
        "for info in pkgutil.walk_packages(empo2.server.__path__, 'empo2.server.'):\n"
        "    importlib.import_module(info.name)\n"
        f"print(json.dumps([m for m in {NOT_AT_START!r} if m in sys.modules]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, PYTHONPATH=str(Path(__file__).parents[1])),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout) == [], "a server module imports the training stack (or numpy) at import time"


def _imports_on_the_loop() -> dict[str, str]:
    """Module -> where, for every import statement an `async def` of empo2.server runs itself
    (nested plain functions are left out: they are what runs in the handler threads)."""
    package = Path(__file__).parents[1] / "empo2" / "server"
    found: dict[str, str] = {}
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(package.parent.parent).with_suffix("").parts
        here = ".".join(parts if path.name == "__init__.py" else parts[:-1])
        for fn in ast.walk(ast.parse(path.read_text())):
            if not isinstance(fn, ast.AsyncFunctionDef):
                continue
            pending = list(fn.body)
            while pending:
                node = pending.pop()
                if isinstance(node, (ast.FunctionDef, ast.Lambda)):
                    continue
                if isinstance(node, ast.Import):
                    found.update({a.name: f"{path.name}:{fn.name}" for a in node.names})
                elif isinstance(node, ast.ImportFrom):
                    base = here.split(".")[: len(here.split(".")) - node.level + 1] if node.level else []
                    found[".".join(base + ([node.module] if node.module else []))] = f"{path.name}:{fn.name}"
                pending.extend(ast.iter_child_nodes(node))
    return found


def test_no_request_handler_imports_the_training_stack_on_the_event_loop():
    """An import of torch on the loop stalls every connection for seconds (its pongs too, so a
    client's keepalive drops the link: seen in CI at a first debug.start). Each module an async
    handler imports itself is imported in a fresh interpreter: none may bring torch in; those
    that do go through HostServer.load, which imports in a handler thread."""
    on_loop = _imports_on_the_loop()
    script = (
        "import importlib, json, sys\n"
        f"heavy = []\nfor name in {sorted(on_loop)!r}:\n"
        "    importlib.import_module(name)\n"
        "    if 'torch' in sys.modules:\n"
        "        heavy.append(name); break\n"
        "print(json.dumps(heavy))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, PYTHONPATH=str(Path(__file__).parents[1])),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    heavy = json.loads(done.stdout)
    assert heavy == [], f"{on_loop[heavy[0]]} imports {heavy[0]} (torch) on the event loop"


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="reads /proc/<pid>/maps (Linux)")
def test_a_served_host_browsing_a_run_has_not_loaded_torch_or_scipy(tmp_path):
    """The real `serve` process: initialize, list and open a run, its status, metrics, tips and
    checkpoints; then no shared library of torch or scipy is mapped into it."""
    root = tmp_path / "runs"
    config = load_config("builtin-smoke")
    RunFolder.create(root, "idle", config.to_dict())
    check = SchemaCheck()
    with Served(["--port", "0", "--run-root", str(root)], tmp_path) as served:
        with HostClient(served.url, TOKEN, observe=check.observer()) as client:
            info = client.initialize("startup-test")
            assert info["serverInfo"]["device"]["kind"] in ("cpu", "cuda")
            assert [r["runId"] for r in client.request("run.list", {})["runs"]] == ["idle"]
            for method in ("run.status", "run.metrics", "memory.list", "checkpoint.list", "trajectory.list"):
                client.request(method, {"runId": "idle"})
            client.request("ping", {})
            maps = Path(f"/proc/{served.proc.pid}/maps").read_text()
    loaded = sorted({line.split()[-1] for line in maps.splitlines() if any(m in line for m in MAPPED)})
    assert loaded == [], f"the idle host mapped {loaded[:3]}"
    check.assert_clean()


def test_the_device_probe_asks_torch_in_a_child_process():
    """The probe a GPU machine runs, forced here: a real child imports torch and answers; the
    host's own interpreter does not import it."""
    from empo2.server.device import DeviceProbe, torch_device_info

    async def ask():
        probe = DeviceProbe(asyncio.get_running_loop(), force_child=True)
        return await asyncio.wait_for(probe.info(), timeout=120)

    was_loaded = "torch" in sys.modules
    answer = asyncio.run(ask())
    assert answer["kind"] in ("cpu", "cuda") and answer["name"]
    assert ("torch" in sys.modules) == was_loaded
    assert answer == torch_device_info()  # the same question asked in-process
