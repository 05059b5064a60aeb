"""Steps per second of an environment of one's own: the example (examples/lockbox-env) alone,
through the trainer's environment pool (registry → PluginEnv's checks → EnvPool), with and without
the step timeout's thread (env.step_timeout_s: 60 s by default, 0 off), and through OpenEnv over
loopback (`empo2-host serve-env` in a process of its own, the pool's `openenv:<url>` environments
each a WebSocket session on it; with --no-openenv, or without OpenEnv installed, not measured).

    .venv/bin/python host/benchmarks/plugin_env_steps.py [--seconds 2] [--rounds 5] [--group 8]

Each way plays `--group` environments in lockstep as a rollout does (one reset or step of each
per turn, through the rollout's own turn function for the pool), random valid actions, resets
included; the ways take turns, `--rounds` times each, and the median round is reported with the
per-step latency (a turn's time over its steps; median and p99, µs) of all rounds, and the ratio
to alone. Run it on a quiet machine: on a shared one the rounds spread widely.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "host"))
sys.path.insert(0, str(ROOT / "examples" / "lockbox-env"))

from empo2.config import load_config  # noqa: E402
from empo2.envs.pool import EnvPool  # noqa: E402
from empo2.envs.registry import make_env  # noqa: E402
from empo2.training.rollout import _each  # noqa: E402
from lockbox_env import LockboxEnv  # noqa: E402

NAME = "lockbox_env:LockboxEnv"


def alone_turn(call, envs, items) -> list:
    return [call(env, item) for env, item in zip(envs, items)]


def pool_turn(call, envs, items) -> list:
    return _each(1, call, envs, items)


def play(envs: list, turn, seconds: float) -> tuple[float, list[float]]:
    """Steps/s of random valid lockstep play for `seconds`, and each step's seconds."""
    rng, latencies = random.Random(0), []
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        starts = [(rng.choice(["escape", "open-chest"]), rng.randrange(6), rng.randrange(4)) for _ in envs]
        infos = [info for _, info in turn(lambda env, s: env.reset(*s[:2], seed=s[2]), envs, starts)]
        playing = list(range(len(envs)))
        while playing:
            actions = [rng.choice(infos[i].valid_actions) for i in playing]
            before = time.perf_counter()
            results = turn(lambda env, action: env.step(action), [envs[i] for i in playing], actions)
            latencies.append((time.perf_counter() - before) / len(playing))
            steps += len(playing)
            for i, (_, _, done, info) in zip(list(playing), results):
                infos[i] = info
                if done:
                    playing.remove(i)
    return steps / (time.perf_counter() - start), latencies


def pooled(timeout_s: float, group: int) -> list:
    config = load_config("builtin", [f"env.name={NAME}", "env.max_steps=20", f"env.step_timeout_s={timeout_s}"])
    return EnvPool(lambda: make_env(config.env)).take(group)


def served() -> tuple[subprocess.Popen, str]:
    """The example served by `empo2-host serve-env` in its own process, and its URL."""
    server = subprocess.Popen(
        [sys.executable, "-m", "empo2.cli", "serve-env", NAME, "env.max_steps=20", "env.step_timeout_s=0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=ROOT / "host",
        env={**os.environ, "PYTHONPATH": str(ROOT / "examples" / "lockbox-env")},
    )
    url = server.stdout.readline().strip()
    if not url.startswith("http"):
        server.kill()
        raise SystemExit(f"plugin_env_steps: serve-env printed no URL (exit {server.wait()})")
    return server, url


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--group", type=int, default=8, help="environments played in lockstep")
    parser.add_argument("--no-openenv", action="store_true", help="leave out the OpenEnv way")
    args = parser.parse_args()
    ways = {
        "alone": ([LockboxEnv(max_steps=20) for _ in range(args.group)], alone_turn),
        "pool, step timeout 60 s": (pooled(60.0, args.group), pool_turn),
        "pool, no step timeout": (pooled(0.0, args.group), pool_turn),
    }
    server = None
    if not args.no_openenv and importlib.util.find_spec("openenv") is not None:
        server, url = served()
        ways["OpenEnv over loopback"] = (
            EnvPool(lambda: make_env(load_config("builtin", [f"env.name=openenv:{url}", "env.max_steps=20"]).env)).take(
                args.group
            ),
            pool_turn,
        )
    rates = {way: [] for way in ways}
    latencies = {way: [] for way in ways}
    for _ in range(args.rounds):
        for way, (envs, turn) in ways.items():
            rate, each = play(envs, turn, args.seconds)
            rates[way].append(rate)
            latencies[way] += each
    if server is not None:
        server.terminate()
        server.wait(timeout=30)
    alone = statistics.median(rates["alone"])
    for way in ways:
        each = sorted(latencies[way])
        print(
            json.dumps(
                {
                    "way": way,
                    "steps_per_s": round(statistics.median(rates[way])),
                    "rounds": [round(r) for r in rates[way]],
                    "ratio_to_alone": round(statistics.median(rates[way]) / alone, 3),
                    "latency_us_median": round(each[len(each) // 2] * 1e6, 1),
                    "latency_us_p99": round(each[int(len(each) * 0.99)] * 1e6, 1),
                }
            )
        )


if __name__ == "__main__":
    main()
