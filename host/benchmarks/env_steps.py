"""Environment steps per second of the built-in worlds, on one core.

    .venv/bin/python host/benchmarks/env_steps.py [--seconds 3]

Plays random valid actions over every task kind and variation, with action correction on (the
trainer's setting) and with policy-like text (corrected) as well as exact valid actions. Prints
steps/s and the ratio to the 5,000 steps/s the trainer needs, next to a baseline measured in the
same run: the same loop with an environment that does nothing (the harness's own cost).
"""

from __future__ import annotations

import argparse
import os
import random
import time

from empo2.envs.builtin.env import BuiltinEnv
from empo2.envs.builtin.tasks import TASK_KINDS

TARGET = 5_000


class NullEnv:
    def reset(self, task, variation, seed=0):
        return "", _Info()

    def step(self, action):
        return "", 0.0, random.random() < 0.07, _Info()


class _Info:
    valid_actions = ["look around", "go to kitchen"]
    success = False


def measure(env, seconds: float, typo: bool) -> float:
    rng = random.Random(0)
    pairs = [(t, v) for t in TASK_KINDS for v in list(range(5)) + list(range(100, 120))]
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        task, variation = rng.choice(pairs)
        _, info = env.reset(task, variation)
        done = False
        while not done:
            action = rng.choice(info.valid_actions)
            if typo:
                action = "please " + action.replace(" to ", " ")  # forces word-overlap correction
            _, _, done, info = env.step(action)
            steps += 1
    return steps / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    args = parser.parse_args()
    os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})  # one core
    baseline = measure(NullEnv(), args.seconds, typo=False)
    exact = measure(BuiltinEnv(), args.seconds, typo=False)
    corrected = measure(BuiltinEnv(), args.seconds, typo=True)
    print(f"harness baseline (null env): {baseline:12,.0f} steps/s")
    print(f"built-in, valid actions    : {exact:12,.0f} steps/s  ({exact / TARGET:5.1f}x the 5,000 target, {exact / baseline:.2f}x baseline)")
    print(f"built-in, corrected actions: {corrected:12,.0f} steps/s  ({corrected / TARGET:5.1f}x the 5,000 target, {corrected / baseline:.2f}x baseline)")


if __name__ == "__main__":
    main()
