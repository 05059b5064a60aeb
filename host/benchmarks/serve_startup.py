"""How long `empo2-host serve` takes to print its ready line, and what an idle host holds.

    .venv/bin/python host/benchmarks/serve_startup.py              # 3 starts of each path
    .venv/bin/python host/benchmarks/serve_startup.py --repeats 5

The extension starts the host on activation, so this is the first thing every user waits for.
Each start spawns the real host process (`python -m empo2.cli serve`, what the `empo2-host`
script runs) and measures, from the spawn: the ready line on stdout, then a client's
`initialize` answered (it carries the device, which the host finds without torch), then the
resident memory (VmRSS) of the idle host after `run.list` and a short settle.

The baseline is the old eager path, measured in the same run: the same command with the trainer
imported before the server starts (`import empo2.training.trainer`, which loads torch, transformers and
scipy, as the server did at start until the training stack became lazy). The two paths
alternate, so a busy machine slows both alike. For scale, each round also times a bare
interpreter (`python -c pass`): no host starts faster than that. Prints one line per start, the
medians, and the ratios eager / lazy.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HOST_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HOST_ROOT))

from empo2.client.host_client import HostClient  # noqa: E402

LAZY = "from empo2.cli import main; raise SystemExit(main(sys.argv[1:]))"
EAGER = "import empo2.training.trainer; " + LAZY  # the training stack loaded before serving, as before


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for pid {pid}")


def one_start(code: str, workdir: Path, settle_s: float) -> dict:
    token = secrets.token_hex(32)
    env = dict(
        os.environ,
        EMPO2_HOST_TOKEN=token,
        EMPO2_NO_PROGRESS="1",
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        PYTHONPATH=str(HOST_ROOT),
    )
    with open(workdir / "host.stderr", "a") as stderr:
        started = time.perf_counter()
        host = subprocess.Popen(
            [sys.executable, "-c", "import sys; " + code, "serve", "--port", "0", "--run-root", str(workdir / "runs")],
            cwd=workdir,
            env=env,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
        )
        try:
            line = host.stdout.readline()
            ready_s = time.perf_counter() - started
            if not line:
                raise RuntimeError(f"the host printed no ready line; see {workdir / 'host.stderr'}")
            port = json.loads(line)["port"]
            with HostClient(f"ws://127.0.0.1:{port}/", token) as client:
                device = client.initialize("startup-benchmark")["serverInfo"]["device"]["kind"]
                initialized_s = time.perf_counter() - started
                client.request("run.list", {})
                time.sleep(settle_s)
                rss = rss_mib(host.pid)
                client.request("shutdown", {})
            host.wait(60)
        finally:
            if host.poll() is None:
                host.kill()
                host.wait()
    return {"ready_s": ready_s, "initialized_s": initialized_s, "idle_rss_mib": rss, "device": device}


def bare_interpreter_s() -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3, help="starts of each path")
    parser.add_argument("--settle", type=float, default=1.0, help="seconds idle before reading RSS")
    args = parser.parse_args()
    if not Path("/proc/self/status").exists():
        print("serve_startup.py reads /proc/<pid>/status: Linux only.", file=sys.stderr)
        return 2
    results: dict[str, list[dict]] = {"lazy": [], "eager": []}
    bare: list[float] = []
    with tempfile.TemporaryDirectory(prefix="empo2-startup-") as scratch:
        workdir = Path(scratch)
        one_start(LAZY, workdir, 0.0)  # warm the OS file cache for both paths' first files
        for _ in range(args.repeats):
            bare.append(bare_interpreter_s())
            print(f"bare   interpreter start {bare[-1]:6.2f} s", flush=True)
            for name, code in (("lazy", LAZY), ("eager", EAGER)):
                result = one_start(code, workdir, args.settle)
                results[name].append(result)
                print(
                    f"{name:5s}  ready {result['ready_s']:6.2f} s  initialize answered "
                    f"{result['initialized_s']:6.2f} s  idle RSS {result['idle_rss_mib']:7.1f} MiB  "
                    f"({result['device']})",
                    flush=True,
                )
    median = {
        name: {key: statistics.median(r[key] for r in runs) for key in ("ready_s", "initialized_s", "idle_rss_mib")}
        for name, runs in results.items()
    }
    for name, m in median.items():
        print(
            f"median {name:5s}: ready {m['ready_s']:.2f} s, initialize answered "
            f"{m['initialized_s']:.2f} s, idle RSS {m['idle_rss_mib']:.0f} MiB"
        )
    print(f"median bare interpreter start: {statistics.median(bare):.2f} s")
    lazy, eager = median["lazy"], median["eager"]
    print(
        f"eager / lazy: ready {eager['ready_s'] / lazy['ready_s']:.1f}x, initialize "
        f"{eager['initialized_s'] / lazy['initialized_s']:.1f}x, idle RSS "
        f"{eager['idle_rss_mib'] / lazy['idle_rss_mib']:.1f}x"
    )
    print(
        json.dumps(
            {
                "repeats": args.repeats,
                "median": median,
                "bare_interpreter_s": statistics.median(bare),
                "cpus": os.cpu_count(),
                "load_average": os.getloadavg()[0],
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
