"""What the host trains on (`serverInfo.device`), found without loading torch into the host.

Importing torch costs an idle host seconds and hundreds of MiB, and only a run needs it. So a
machine with no GPU driver at all (Linux without /proc/driver/nvidia or /dev/kfd) is a CPU host
at once; otherwise a child process asks torch and exits, taking its memory with it. The probe
starts with the host, in the background, so the ready line never waits for it; `initialize`
does. When torch is loaded anyway (a run trains), the host asks in-process.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
import sys
import threading
from pathlib import Path

log = logging.getLogger("empo2.server")

PROBE_TIMEOUT_S = 20.0  # under a client's 30 s request timeout; past it the host reports the CPU
_PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])  # the folder holding `empo2/`
_CHILD = (
    "import json, sys; sys.path.insert(0, sys.argv[1]); "
    "from empo2.server.device import torch_device_info; print(json.dumps(torch_device_info()))"
)


def cpu_info() -> dict:
    return {"kind": "cpu", "name": f"CPU ({os.cpu_count() or 1} cores)", "memoryBytes": None, "count": 1}


def torch_device_info() -> dict:
    """The first GPU's name and memory as torch sees it, or the CPU (training may pick another
    device per run with `policy.device`). Imports torch."""
    import torch

    if torch.cuda.is_available():
        props = torch.cuda.get_device_properties(0)
        return {
            "kind": "cuda",
            "name": props.name,
            "memoryBytes": int(props.total_memory),
            "count": torch.cuda.device_count(),
        }
    return cpu_info()


def no_gpu_driver() -> bool:
    """True where torch cannot see a GPU whatever is installed (Linux without NVIDIA or ROCm
    drivers); elsewhere only torch can tell."""
    return sys.platform.startswith("linux") and not (Path("/proc/driver/nvidia").exists() or Path("/dev/kfd").exists())


class DeviceProbe:
    """Finds the device in the background from construction on; `await probe.info()`."""

    def __init__(self, loop: asyncio.AbstractEventLoop, force_child: bool = False):
        """force_child: ask a child process even where the answer is known without one (tests)."""
        self._loop = loop
        self._answer: asyncio.Future = loop.create_future()
        self._child: subprocess.Popen | None = None
        self._closed = False
        if "torch" in sys.modules and not force_child:
            self._answer.set_result(torch_device_info())
        elif no_gpu_driver() and not force_child:
            self._answer.set_result(cpu_info())
        else:  # a daemon thread: a host that shuts down at once never waits for the probe
            threading.Thread(target=self._ask_child, name="empo2-device-probe", daemon=True).start()

    async def info(self) -> dict:
        return await asyncio.shield(self._answer)

    def close(self) -> None:
        """Ends a probe still running (the host is shutting down)."""
        self._closed = True
        child = self._child
        if child is not None and child.poll() is None:
            child.kill()

    def _ask_child(self) -> None:
        found = None
        try:
            self._child = subprocess.Popen(
                [sys.executable, "-c", _CHILD, _PACKAGE_ROOT],
                text=True,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
            out, err = self._child.communicate(timeout=PROBE_TIMEOUT_S)
            if self._child.returncode == 0:
                found = json.loads(out.strip().splitlines()[-1])
            elif not self._closed:
                log.warning(
                    "device probe failed (exit %d: %s); reporting the CPU",
                    self._child.returncode,
                    (err.strip().splitlines() or [""])[-1][:200],
                )
        except (OSError, subprocess.TimeoutExpired, ValueError, IndexError) as error:
            if self._child is not None:
                self._child.kill()
            log.warning("device probe failed (%s); reporting the CPU", error)
        try:
            self._loop.call_soon_threadsafe(self._settle, found or cpu_info())
        except RuntimeError:
            pass  # the loop is closed: nobody waits for the answer

    def _settle(self, info: dict) -> None:
        if not self._answer.done():
            self._answer.set_result(info)


__all__ = ["DeviceProbe", "cpu_info", "no_gpu_driver", "torch_device_info"]
