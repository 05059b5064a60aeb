"""A flood of requests against `empo2-host serve`: how fast it is refused, and what it costs others.

    .venv/bin/python host/benchmarks/rate_limit_flood.py                 # 2,000 pings, 3 floods
    .venv/bin/python host/benchmarks/rate_limit_flood.py --pings 5000 --floods 5

Spawns the real host process (as the extension does, default limits: the token bucket's burst and
refill and the inbox from `initialize`'s capabilities), then on one connection sends `--pings`
pings at once and reads every answer, while a second connection pings one at a time. Prints one
JSON object: per flood, the answers a second, how many were served and how many RateLimited, and
the most the bucket could have admitted in that time (burst + refill x seconds); the calm
connection's round trip idle (the baseline, measured in the same run before the floods) and
during the floods, with their ratio. The functional test (host/tests/test_server_basics.py,
test_a_flood_is_answered_with_rate_limit_errors_not_queued) checks what a flood gets; this says
how fast, which a test with a time limit could only guess on a loaded machine.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import sys
import threading
import time

from empo2.client.host_client import HostClient
from serve_process import served_host


def round_trips(client: HostClient, count: int | None, until=None) -> list[float]:
    """Sequential ping round trips in seconds: `count` of them, or until `until()` is true."""
    samples = []
    while (count is None or len(samples) < count) and not (until and until()):
        started = time.perf_counter()
        client.request("ping", timeout=60)
        samples.append(time.perf_counter() - started)
    return samples


def summary(samples: list[float]) -> dict:
    if not samples:
        return {"n": 0}
    ordered = sorted(samples)
    return {
        "n": len(ordered),
        "p50_ms": round(statistics.median(ordered) * 1000, 3),
        "p99_ms": round(ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))] * 1000, 3),
        "max_ms": round(ordered[-1] * 1000, 3),
    }


def flood(url: str, token: str, pings: int, limits: dict) -> dict:
    with HostClient(url, token) as flooder:
        flooder.initialize("flood-benchmark", {"logMessages": False})
        started = time.perf_counter()
        ids = [flooder.send("ping") for _ in range(pings)]
        answers = [flooder.response(i, timeout=300) for i in ids]
        seconds = time.perf_counter() - started
    limited = sum(1 for a in answers if "error" in a)
    others = sum(1 for a in answers if "error" in a and a["error"].get("data", {}).get("retryAfterMs") is None)
    admissible = limits["requestBurst"] + limits["requestsPerSecond"] * seconds
    return {
        "pings": pings,
        "seconds": round(seconds, 3),
        "answers_per_s": round(pings / seconds),
        "served": pings - limited,
        "rate_limited": limited,
        "errors_without_retry_after": others,
        "bucket_admits_at_most": int(admissible),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pings", type=int, default=2000, help="pings per flood, sent at once")
    parser.add_argument("--floods", type=int, default=3)
    parser.add_argument("--idle-pings", type=int, default=300, help="calm round trips before the floods")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # on kill: leave served_host, which stops the host

    with served_host("empo2-flood-") as (url, token):
        calm = HostClient(url, token)
        capabilities = calm.initialize("calm-benchmark", {"logMessages": False})["capabilities"]
        limits = {k: capabilities[k] for k in ("requestsPerSecond", "requestBurst")}
        idle = round_trips(calm, args.idle_pings)
        floods, during = [], []
        for _ in range(args.floods):
            done = threading.Event()
            result: dict = {}

            def run_flood(result=result, done=done) -> None:
                try:
                    result.update(flood(url, token, args.pings, limits))
                finally:
                    done.set()

            thread = threading.Thread(target=run_flood, name="flood")
            thread.start()
            during += round_trips(calm, None, until=done.is_set)
            thread.join()
            floods.append(result)
        calm.request("shutdown")
        calm.close()
        idle_s, during_s = summary(idle), summary(during)
        print(
            json.dumps(
                {
                    "limits": limits,
                    "floods": floods,
                    "calm_ping_idle": idle_s,
                    "calm_ping_during_floods": during_s,
                    "calm_p50_during_over_idle": round(during_s["p50_ms"] / idle_s["p50_ms"], 2) if during else None,
                    "cpu_count": os.cpu_count(),
                    "load_average_1m": round(os.getloadavg()[0], 2),
                },
                indent=2,
            )
        )
        return 0


if __name__ == "__main__":
    sys.exit(main())
