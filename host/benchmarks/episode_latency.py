"""How soon an ended episode reaches a client: seconds from the moment the trainer ends an
episode to the `trajectory/progress` notification that carries it (the row the Trajectories
tree then draws), for the host's own run and for a run trained from a terminal beside it.

    .venv/bin/python host/benchmarks/episode_latency.py                 # both roads, 2 iterations
    .venv/bin/python host/benchmarks/episode_latency.py --iterations 3 env.max_steps=4

Both trainers are real processes: `empo2-host serve` (the host's own run, started with
`run.start`) and `empo2-host train` in the host's run root (a terminal's run, which the host
follows from its files). Each is started through a small probe that stamps, in a side file, the
wall-clock time at which the trainer ends each episode (`RecordedProgress.on_episode`, before
anything is written or sent); a client in this process stamps each episode's arrival. Prints
each road's median, 95th percentile and largest delay, and how many of the episodes arrived
one by one at all (an episode that arrives only with its written iteration, `trajectory/added`,
counts as missed). The tree draws the row in the same turn of the extension's event loop.
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

# Runs `empo2-host ARGS...` with each ended episode's id and time appended to $EMPO2_ENDED_AT.
PROBE = """
import json, os, sys, time
from empo2.training import run_control
stamps = open(os.environ["EMPO2_ENDED_AT"], "a", buffering=1)
played = run_control.RecordedProgress.on_episode
def on_episode(self, iteration, summary, record, done, total):
    stamps.write(json.dumps({"id": summary["id"], "t": time.time()}) + "\\n")
    return played(self, iteration, summary, record, done, total)
run_control.RecordedProgress.on_episode = on_episode
from empo2.cli import main
sys.exit(main(sys.argv[1:]))
"""


def probed(args: list[str], workdir: Path, stamps: Path, token: str, **popen) -> subprocess.Popen:
    env = dict(
        os.environ,
        EMPO2_HOST_TOKEN=token,
        EMPO2_NO_PROGRESS="1",
        EMPO2_ENDED_AT=str(stamps),
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        PYTHONPATH=str(HOST_ROOT),
    )
    return subprocess.Popen([sys.executable, "-c", PROBE, *args], cwd=workdir, env=env, **popen)


def ended_at(stamps: Path) -> dict[str, float]:
    with open(stamps) as f:
        return {entry["id"]: entry["t"] for entry in map(json.loads, f)}


def delays(ended: dict[str, float], arrived: dict[str, float]) -> dict:
    seconds = sorted(arrived[i] - ended[i] for i in ended if i in arrived)
    if not seconds:
        return {"episodes": len(ended), "streamed": 0}
    return {
        "episodes": len(ended),
        "streamed": len(seconds),
        "median_s": statistics.median(seconds),
        "p95_s": seconds[min(len(seconds) - 1, round(0.95 * (len(seconds) - 1)))],
        "max_s": seconds[-1],
    }


def measure(workdir: Path, iterations: int, overrides: list[str], timeout_s: float) -> dict:
    token = secrets.token_hex(32)
    runs = workdir / "runs"
    runs.mkdir()
    config = [f"iterations={iterations}", "eval.every=0", *overrides]
    host_stamps, terminal_stamps = workdir / "host-ended.jsonl", workdir / "terminal-ended.jsonl"
    with open(workdir / "host.stderr", "a") as stderr:
        host = probed(
            ["serve", "--port", "0", "--run-root", str(runs)],
            workdir,
            host_stamps,
            token,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
        )
        terminal = None
        try:
            line = host.stdout.readline()
            if not line:
                raise RuntimeError(f"the host printed no ready line; see {workdir / 'host.stderr'}")
            port = json.loads(line)["port"]
            arrived: dict[str, dict[str, float]] = {"own": {}, "terminal": {}}
            road = {"own": "own", "terminal": "terminal"}  # run id -> road

            def stamp(direction: str, message: dict, method: str | None) -> None:
                if direction == "host→client" and method == "trajectory/progress":
                    now = time.time()
                    into = arrived.get(road.get(message["params"]["runId"], ""))
                    for summary in message["params"]["summaries"] if into is not None else ():
                        into.setdefault(summary["id"], now)

            with HostClient(f"ws://127.0.0.1:{port}/", token, observe=stamp) as client:
                client.initialize("episode-latency-benchmark")
                client.request("run.start", {"preset": "builtin", "overrides": config, "name": "own"})
                terminal = probed(
                    ["train", "--preset", "builtin", "--root", str(runs), "--name", "terminal", *config],
                    workdir,
                    terminal_stamps,
                    token,
                    stdout=subprocess.DEVNULL,
                    stderr=stderr,
                )
                finished: set[str] = set()

                def both_finished(message: dict) -> bool:
                    if message.get("method") == "run/state":
                        run = message["params"]["run"]
                        if run["state"] in ("finished", "failed", "stopped"):
                            finished.add(run["runId"])
                    return finished >= {"own", "terminal"}

                client.wait_for(both_finished, timeout=timeout_s)
                terminal.wait(120)
                client.request("shutdown", {"now": True})
            host.wait(120)
        finally:
            for process in (host, terminal):
                if process is not None and process.poll() is None:
                    process.kill()
                    process.wait()
    return {
        "own": delays(ended_at(host_stamps), arrived["own"]),
        "terminal": delays(ended_at(terminal_stamps), arrived["terminal"]),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--iterations", type=int, default=2, help="iterations of each run")
    parser.add_argument("--timeout", type=float, default=900, help="seconds to wait for both runs")
    parser.add_argument("overrides", nargs="*", metavar="key=value", help="config overrides of both runs")
    args = parser.parse_args()
    if args.iterations < 1:
        parser.error("--iterations must be 1 or more")
    with tempfile.TemporaryDirectory(prefix="empo2-episode-latency-") as scratch:
        result = measure(Path(scratch), args.iterations, args.overrides, args.timeout)
    for name, label in (("own", "the host's own run"), ("terminal", "a terminal's run")):
        r = result[name]
        if r["streamed"]:
            print(
                f"{label:<20} {r['streamed']:>3} of {r['episodes']} episodes streamed; end to notification: "
                f"median {r['median_s']:.3f} s, p95 {r['p95_s']:.3f} s, max {r['max_s']:.3f} s"
            )
        else:
            print(f"{label:<20} none of {r['episodes']} episodes streamed")
    print(json.dumps({**result, "iterations": args.iterations, "overrides": args.overrides, "cpus": os.cpu_count()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
