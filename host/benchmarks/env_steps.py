"""Environment steps per second of each adapter, on one core.

    .venv/bin/python host/benchmarks/env_steps.py [--seconds 3] [--env builtin|scienceworld|textworld|all]

ScienceWorld and TextWorld play random valid actions (never "focus on", which ends a
ScienceWorld task) with the trainer's correction modes: "unparsed" reads the valid actions only
when the simulator did not understand the text, "listed" (the reference) every step. Their
numbers are one simulator's; the trainer steps B×N of them on `env.workers` threads.

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


def measure_simulator(env, tasks, seconds: float, typo: bool) -> float:
    """Steps/s of random play on a real simulator (ScienceWorld, TextWorld), resets included.

    Actions come from the valid actions listed at the episode's start (as a policy's text would:
    mostly sensible, sometimes stale), so the benchmark itself does not ask for a listing per step.
    """
    rng = random.Random(0)
    for task in tasks:  # warm-up: JIT, game files, first loads
        env.reset(task, env.variations(task, "train")[0])
        env.step("look around")
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        task = rng.choice(tasks)
        _, info = env.reset(task, rng.choice(env.variations(task, "train")))
        choices = [a for a in info.valid_actions if not a.startswith(("focus", "eat"))] or ["look around"]
        done = False
        while not done and time.perf_counter() - start < seconds:
            action = rng.choice(choices)
            if typo:
                action = "please " + action  # not understood: forces the correction
            _, _, done, info = env.step(action)
            steps += 1
    return steps / (time.perf_counter() - start)


def simulators(seconds: float, which: str) -> None:
    if which in ("scienceworld", "all"):
        from empo2.envs.scienceworld import ScienceWorldEnv

        tasks = ["power-component", "find-animal", "use-thermometer"]
        for correction in ("unparsed", "listed"):
            env = ScienceWorldEnv(max_steps=20, correction=correction)
            rate = measure_simulator(env, tasks, seconds, typo=False)
            print(f"scienceworld ({correction:8s}) valid actions    : {rate:12,.1f} steps/s")
            env.close()
        env = ScienceWorldEnv(max_steps=20, correction="unparsed")
        rate = measure_simulator(env, tasks, seconds, typo=True)
        print(f"scienceworld (unparsed) corrected actions: {rate:12,.1f} steps/s")
        env.close()
    if which in ("textworld", "all"):
        from empo2.envs.textworld import TextWorldEnv

        env = TextWorldEnv(max_steps=20)
        for task in ("coin-collector", "treasure-hunter", "cooking"):
            env.reset(task, 0)  # generates (or finds) the game outside the timed loop
        for typo in (False, True):
            rate = measure_simulator(env, ["coin-collector", "treasure-hunter", "cooking"], seconds, typo)
            kind = "corrected actions" if typo else "valid actions    "
            print(f"textworld              {kind}: {rate:12,.1f} steps/s")
        env.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--env", default="builtin", choices=("builtin", "scienceworld", "textworld", "all"))
    args = parser.parse_args()
    if args.env != "builtin":  # before pinning: a simulator's own process is not ours to pin
        simulators(args.seconds, args.env)
        if args.env != "all":
            return
    os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})  # one core
    baseline = measure(NullEnv(), args.seconds, typo=False)
    exact = measure(BuiltinEnv(), args.seconds, typo=False)
    corrected = measure(BuiltinEnv(), args.seconds, typo=True)
    print(f"harness baseline (null env): {baseline:12,.0f} steps/s")
    print(
        f"built-in, valid actions    : {exact:12,.0f} steps/s  "
        f"({exact / TARGET:5.1f}x the 5,000 target, {exact / baseline:.2f}x baseline)"
    )
    print(
        f"built-in, corrected actions: {corrected:12,.0f} steps/s  "
        f"({corrected / TARGET:5.1f}x the 5,000 target, {corrected / baseline:.2f}x baseline)"
    )


if __name__ == "__main__":
    main()
