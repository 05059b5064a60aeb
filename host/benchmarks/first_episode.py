"""How soon a newcomer sees training: seconds from the host's start to the first streamed
episode and to the first metrics line, on the built-in default, from a clean cache.

    .venv/bin/python host/benchmarks/first_episode.py              # 2 runs
    .venv/bin/python host/benchmarks/first_episode.py --repeats 3
    .venv/bin/python host/benchmarks/first_episode.py env.max_steps=3   # overrides, as train takes
    .venv/bin/python host/benchmarks/first_episode.py --burners 2   # two busy processes beside it

This is the path `scripts/run.sh` takes once its installs are done: the extension spawns the
real host (`python -m empo2.cli serve`), connects, and starts the `builtin` preset. Each repeat
spawns a host with an empty `EMPO2_CACHE_DIR` (so nothing a previous run left in the cache
helps: the policy comes from the package's shipped weights), starts the run and measures, from
the spawn: the ready line, `run.start` answered, the first `trajectory/progress` (the first
episode, streamed the moment it ends: the first row of the Trajectories tree), the first
`run/metrics` (the first chart point) and the first `trajectory/added` (the first iteration
written).

The baseline, measured in the same run, is the first `trajectory/added`: until episodes were
streamed, the tree showed nothing before the first iteration was written. Prints one line per
run (with the first iteration's phase times from its metrics line), the medians, and the ratio
baseline / streamed.

`--burners N` starts N pure-Python busy loops beside the host for the whole measurement (and
ends them): a machine whose cores other work keeps busy, as a laptop running a build or a shared
server is. On two cores, two burners leave the host about a third of the machine; the first
metrics line should then come within a few times its quiet figure, not fifteen.
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

MARKS = {  # what the client sees first -> the name of its moment
    "trajectory/progress": "first_episode_s",
    "run/metrics": "first_metrics_s",
    "trajectory/added": "first_iteration_written_s",
}
PHASES = ("rollout", "tips", "intrinsic", "update")  # time/<phase> of the first metrics line
BURN = "while True: pass"  # one core's worth of pure-Python work, no I/O, no threads


def start_burners(count: int) -> list[subprocess.Popen]:
    return [subprocess.Popen([sys.executable, "-c", BURN]) for _ in range(count)]


def stop_burners(burners: list[subprocess.Popen]) -> None:
    for burner in burners:
        burner.kill()
    for burner in burners:
        burner.wait()


def one_run(workdir: Path, timeout_s: float, overrides: list[str]) -> dict:
    token = secrets.token_hex(32)
    cache = workdir / "cache"
    env = dict(
        os.environ,
        EMPO2_HOST_TOKEN=token,
        EMPO2_NO_PROGRESS="1",
        EMPO2_CACHE_DIR=str(cache),
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        PYTHONPATH=str(HOST_ROOT),
    )
    with open(workdir / "host.stderr", "a") as stderr:
        started = time.perf_counter()
        host = subprocess.Popen(
            [sys.executable, "-m", "empo2.cli", "serve", "--port", "0", "--run-root", str(workdir / "runs")],
            cwd=workdir,
            env=env,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
        )
        try:
            line = host.stdout.readline()
            if not line:
                raise RuntimeError(f"the host printed no ready line; see {workdir / 'host.stderr'}")
            result = {"ready_s": time.perf_counter() - started}
            port = json.loads(line)["port"]
            with HostClient(f"ws://127.0.0.1:{port}/", token) as client:
                client.initialize("first-episode-benchmark")
                name = "builtin-first-episode"
                client.request("run.start", {"preset": "builtin", "overrides": overrides, "name": name})
                result["run_started_s"] = time.perf_counter() - started
                seen: dict[str, float] = {}

                def mark(message: dict) -> bool:
                    key = MARKS.get(message.get("method", ""))
                    if key and key not in seen and message["params"].get("runId") == name:
                        seen[key] = time.perf_counter() - started
                        if key == "first_metrics_s":
                            first = message["params"]["records"][0]
                            result["phases"] = {p: first.get(f"time/{p}", 0.0) for p in PHASES}
                    return len(seen) == len(MARKS)

                client.wait_for(mark, timeout=timeout_s)
                result.update(seen)
                client.request("run.stop", {"runId": name})
                client.request("shutdown", {"now": True})
            host.wait(120)
        finally:
            if host.poll() is None:
                host.kill()
                host.wait()
    result["cache_after"] = sorted(p.name for p in cache.rglob("*")) if cache.exists() else []
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=2, help="runs, each from a clean cache")
    parser.add_argument("--timeout", type=float, default=900, help="seconds to wait for the marks")
    parser.add_argument(
        "--burners", type=int, default=0, help="busy-looping processes to run beside the host (default 0: quiet)"
    )
    parser.add_argument("overrides", nargs="*", metavar="key=value", help="config overrides of the run")
    args = parser.parse_args()
    if args.burners < 0:
        parser.error("--burners must be 0 or more")
    runs = []
    load_before = os.getloadavg()[0]
    burners = start_burners(args.burners)
    try:
        for _ in range(args.repeats):
            with tempfile.TemporaryDirectory(prefix="empo2-first-episode-") as scratch:
                result = one_run(Path(scratch), args.timeout, args.overrides)
            result["load_average"] = os.getloadavg()[0]
            runs.append(result)
            phases = ", ".join(f"{p} {result['phases'][p]:.1f}" for p in PHASES)
            print(
                f"ready {result['ready_s']:5.1f} s  run started {result['run_started_s']:5.1f} s  "
                f"first episode {result['first_episode_s']:5.1f} s  first metrics "
                f"{result['first_metrics_s']:5.1f} s ({phases})  first iteration written "
                f"{result['first_iteration_written_s']:5.1f} s  load {result['load_average']:.1f}  "
                f"(cache after: {', '.join(result['cache_after']) or 'nothing'})",
                flush=True,
            )
    finally:
        stop_burners(burners)
    keys = ("ready_s", "run_started_s", "first_episode_s", "first_metrics_s", "first_iteration_written_s")
    median = {key: statistics.median(r[key] for r in runs) for key in keys}
    print(
        f"median: first episode {median['first_episode_s']:.1f} s, first metrics "
        f"{median['first_metrics_s']:.1f} s, first iteration written "
        f"{median['first_iteration_written_s']:.1f} s after the host's spawn"
    )
    print(
        f"first iteration written / first episode streamed: "
        f"{median['first_iteration_written_s'] / median['first_episode_s']:.1f}x"
    )
    print(
        json.dumps(
            {
                "repeats": args.repeats,
                "overrides": args.overrides,
                "burners": args.burners,
                "median": median,
                "phases": [r["phases"] for r in runs],
                "cache_after": runs[-1]["cache_after"],
                "cpus": os.cpu_count(),
                "load_average_before": load_before,
                "load_average": [r["load_average"] for r in runs],
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
