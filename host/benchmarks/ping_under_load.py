"""Ping round trip of `empo2-host serve` while it trains on the CPU.

    .venv/bin/python host/benchmarks/ping_under_load.py                    # the built-in preset
    .venv/bin/python host/benchmarks/ping_under_load.py --model PATH --seconds 20 policy.device=cpu

Spawns the real host process (as the extension does), starts a training run, and sends a JSON-RPC
`ping` every `--interval` seconds over WebSocket while the run is in state `running`; the round
trip is timed on the client from send to response. Idle pings before the run are the baseline.
Training runs in the host's worker thread, so the numbers show what the event loop pays for
sharing the interpreter with it (the GIL): the target is a p99 under 100 ms. Prints one JSON
object with p50, p99 and max in milliseconds.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import sys
import time

from empo2.client.host_client import HostClient
from serve_process import served_host


def percentiles(samples: list[float]) -> dict:
    ordered = sorted(samples)
    if not ordered:
        return {"n": 0}

    def at(q: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000, 2)

    return {
        "n": len(ordered),
        "p50_ms": at(0.50),
        "p99_ms": at(0.99),
        "max_ms": round(ordered[-1] * 1000, 2),
        "mean_ms": round(statistics.mean(ordered) * 1000, 2),
    }


def ping_for(client: HostClient, seconds: float, interval: float, still) -> list[float]:
    samples = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and still():
        started = time.perf_counter()
        client.request("ping", timeout=30)
        samples.append(time.perf_counter() - started)
        time.sleep(max(0.0, interval - (time.perf_counter() - started)))
    return samples


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--preset", default="builtin")
    parser.add_argument("--model", help="a policy folder (default: the preset's model)")
    parser.add_argument("--seconds", type=float, default=30.0, help="seconds of pinging during training")
    parser.add_argument("--interval", type=float, default=0.02, help="seconds between pings")
    parser.add_argument("--idle-seconds", type=float, default=10.0, help="seconds of pinging before training")
    parser.add_argument("overrides", nargs="*", metavar="key=value")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # on kill: leave served_host, which stops the host

    with served_host("empo2-ping-") as (url, token):
        client = HostClient(url, token)
        client.initialize("ping-benchmark", {"logMessages": False})
        idle = ping_for(client, args.idle_seconds, args.interval, lambda: True)
        print(f"idle: {percentiles(idle)}; starting the run", file=sys.stderr)

        overrides = list(args.overrides) + ([f"policy.model={args.model}"] if args.model else [])
        overrides += ["iterations=1000"]  # the run outlives the measurement; it is stopped after
        client.request("run.start", {"preset": args.preset, "overrides": overrides, "name": "ping"})
        client.wait_for(
            lambda m: m["method"] == "run/state" and m["params"]["run"]["state"] in ("running", "failed"), timeout=1800
        )
        # Wait for the first rollout step: model loading is over and training is under way.
        client.wait_for(
            lambda m: (
                m["method"] == "run/progress"
                or (m["method"] == "run/state" and m["params"]["run"]["state"] == "failed")
            ),
            timeout=1800,
        )
        state = {"value": "running"}
        print("training; pinging", file=sys.stderr)

        def running() -> bool:
            for m in client.notifications[-20:]:
                if m["method"] == "run/state":
                    state["value"] = m["params"]["run"]["state"]
            return state["value"] == "running"

        busy = ping_for(client, args.seconds, args.interval, running)
        metrics = client.request("run.metrics", {"runId": "ping"})["records"]
        client.request("run.stop", {"runId": "ping"})
        client.request("shutdown")
        client.close()
        result = {
            "idle": percentiles(idle),
            "training": percentiles(busy),
            "iterations_during_measurement": len(metrics),
            "preset": args.preset,
            "model": args.model or "preset",
            "cpu_threads": os.cpu_count(),
        }
        print(json.dumps(result, indent=2))
        return 0


if __name__ == "__main__":
    sys.exit(main())
