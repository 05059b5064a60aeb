"""Steps per second of an environment of one's own: the example (examples/lockbox-env) alone, and
through the trainer's environment pool (registry → PluginEnv's checks → EnvPool), with and without
the step timeout's thread (env.step_timeout_s: 60 s by default, 0 off).

    .venv/bin/python host/benchmarks/plugin_env_steps.py [--seconds 2] [--rounds 5]

Random valid actions, resets included; the three ways take turns, `--rounds` times each, and the
median round is reported with the per-step latency (median and p99, µs) of all rounds, and the
ratio to alone. Run it on a quiet machine: on a shared one the rounds spread widely.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "host"))
sys.path.insert(0, str(ROOT / "examples" / "lockbox-env"))

from empo2.config import load_config  # noqa: E402
from empo2.envs.pool import EnvPool  # noqa: E402
from empo2.envs.registry import make_env  # noqa: E402
from lockbox_env import LockboxEnv  # noqa: E402

NAME = "lockbox_env:LockboxEnv"


def play(env, seconds: float) -> tuple[float, list[float]]:
    """Steps/s of random valid play for `seconds`, and each step's seconds."""
    rng, latencies = random.Random(0), []
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        task = rng.choice(["escape", "open-chest"])
        _, info = env.reset(task, rng.randrange(6), seed=rng.randrange(4))
        done = False
        while not done:
            action = rng.choice(info.valid_actions)
            before = time.perf_counter()
            _, _, done, info = env.step(action)
            latencies.append(time.perf_counter() - before)
            steps += 1
    return steps / (time.perf_counter() - start), latencies


def pooled(timeout_s: float):
    config = load_config("builtin", [f"env.name={NAME}", "env.max_steps=20", f"env.step_timeout_s={timeout_s}"])
    return EnvPool(lambda: make_env(config.env)).take(1)[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    ways = {"alone": LockboxEnv(max_steps=20), "pool, step timeout 60 s": pooled(60.0),
            "pool, no step timeout": pooled(0.0)}
    rates = {way: [] for way in ways}
    latencies = {way: [] for way in ways}
    for _ in range(args.rounds):
        for way, env in ways.items():
            rate, each = play(env, args.seconds)
            rates[way].append(rate)
            latencies[way] += each
    alone = statistics.median(rates["alone"])
    for way in ways:
        each = sorted(latencies[way])
        print(json.dumps({"way": way, "steps_per_s": round(statistics.median(rates[way])),
                          "rounds": [round(r) for r in rates[way]],
                          "ratio_to_alone": round(statistics.median(rates[way]) / alone, 3),
                          "latency_us_median": round(each[len(each) // 2] * 1e6, 1),
                          "latency_us_p99": round(each[int(len(each) * 0.99)] * 1e6, 1)}))


if __name__ == "__main__":
    main()
