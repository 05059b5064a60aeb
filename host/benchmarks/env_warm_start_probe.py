"""Does a policy act in an environment? Memory-free episodes on held-out variations and seeds of
an environment found by name, for each policy given: the share of actions written valid as they
are (before any correction) and the share of episodes that succeed, with the run's correction of
invalid actions (env.correct_actions=true, the default) and without it (`--correction`).

    .venv/bin/python host/benchmarks/env_warm_start_probe.py --env lockbox \
        --policy smollm2-135m-instruct --policy <warm-started folder> [--seeds 100-109]

The episodes are every test variation of every task of the environment, each reset with every
seed of `--seeds` (seeds the demonstrations did not use), sampled at the config's evaluation
temperature (0.4) with one generator seeded 0 per condition: the same episodes for every policy.
It prints one table row per policy and condition (a markdown table), with the 95% Wilson
interval of each share; then, for each later policy against the first, the paired differences:
every episode (task, variation, seed) is played by both, so the difference in success and in the
episode's share of valid actions is taken episode by episode (mean and paired t-interval,
empo2.bench.stats), and success is shown per held-out (task, variation) as well.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from empo2.bench.stats import t_interval  # noqa: E402
from empo2.config import load_config  # noqa: E402
from empo2.envs.base import parse_action  # noqa: E402
from empo2.envs.registry import make_env  # noqa: E402
from empo2.modes import MEMORY_FREE  # noqa: E402
from empo2.policy.model import load_policy  # noqa: E402
from empo2.training.rollout import Episode, RolloutSettings, roll_out  # noqa: E402
from empo2.training.trainer import resolve_model  # noqa: E402


class ValidityCount:
    """An environment that counts the actions it is given that are among its valid actions as
    written (parse_action only, before any correction)."""

    def __init__(self, env, counts: list[int]):
        self._env, self._counts = env, counts  # counts: [actions, valid]

    def __getattr__(self, name):
        return getattr(self._env, name)

    def reset(self, *args, **kwargs):
        return self._env.reset(*args, **kwargs)

    def step(self, action: str):
        if not self._env.done:
            self._counts[0] += 1
            self._counts[1] += parse_action(action) in (self._env.valid or [])
        return self._env.step(action)


def wilson(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The 95% Wilson score interval of a share."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def share(k: int, n: int) -> str:
    low, high = wilson(k, n)
    return f"{100 * k / max(n, 1):.1f}% [{100 * low:.0f}, {100 * high:.0f}] ({k}/{n})"


def seeds_of(text: str) -> list[int]:
    if "-" in text:
        first, last = text.split("-")
        return list(range(int(first), int(last) + 1))
    return [int(s) for s in text.split(",")]


def probe(policy: str, env_name: str, correct: bool, seeds: list[int], sample_seed: int) -> dict:
    config = load_config("builtin", [f"env.name={env_name}", f"env.correct_actions={str(correct).lower()}"])
    model, tokenizer = load_policy(resolve_model(policy))
    model.eval()
    env = make_env(config.env)
    pairs = [(t, v) for t in env.tasks() for v in env.variations(t, "test")]
    cells = [(t, v, seed) for (t, v) in pairs for seed in seeds]
    episodes = [Episode(f"e{k}", t, v, seed, MEMORY_FREE) for k, (t, v, seed) in enumerate(cells)]
    counts = [[0, 0] for _ in episodes]  # per episode: [actions, valid]
    settings = RolloutSettings.from_config(config, env, train=False)
    started = time.time()
    with torch.no_grad():
        roll_out(
            [ValidityCount(make_env(config.env), c) for c in counts],
            episodes,
            model,
            tokenizer,
            settings,
            torch.Generator().manual_seed(sample_seed),
        )
    return {
        "actions": sum(c[0] for c in counts),
        "valid": sum(c[1] for c in counts),
        "episodes": len(episodes),
        "successes": sum(e.success for e in episodes),
        "pairs": len(pairs),
        "per_episode": {cell: (e.success, c[1] / max(c[0], 1)) for cell, e, c in zip(cells, episodes, counts)},
        "seconds": time.time() - started,
        "temperature": settings.temperature,
    }


def paired(first: dict, other: dict) -> list[str]:
    """Lines comparing `other` with `first` episode by episode (the same (task, variation, seed))."""
    cells = sorted(first["per_episode"])
    success = [float(other["per_episode"][c][0]) - float(first["per_episode"][c][0]) for c in cells]
    valid = [other["per_episode"][c][1] - first["per_episode"][c][1] for c in cells]
    lines = []
    for name, diffs, scale in (("success", success, 100), ("valid share", valid, 100)):
        low, high = t_interval(diffs)
        lines.append(
            f"paired difference in {name}: {scale * sum(diffs) / len(diffs):+.1f} points, 95% t-interval "
            f"[{scale * low:+.1f}, {scale * high:+.1f}] over {len(diffs)} episodes"
        )
    lines.append(
        f"episodes only the later policy succeeds in: {sum(d > 0 for d in success)}, "
        f"only the first: {sum(d < 0 for d in success)}"
    )
    for task, variation in sorted({(t, v) for t, v, _ in cells}):
        mine = [c for c in cells if c[:2] == (task, variation)]
        lines.append(
            f"  {task} variation {variation}: success {sum(first['per_episode'][c][0] for c in mine)}/"
            f"{len(mine)} -> {sum(other['per_episode'][c][0] for c in mine)}/{len(mine)}"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--env", required=True, help="an env.name")
    parser.add_argument(
        "--policy",
        action="append",
        required=True,
        help="a packaged model's name, 'builtin' or a model folder; repeatable",
    )
    parser.add_argument("--seeds", default="100-109", help="reset seeds, e.g. 100-109 or 1,2,3")
    parser.add_argument("--sample-seed", type=int, default=0, help="seed of the sampling generator")
    parser.add_argument(
        "--correction",
        default="both",
        choices=("on", "off", "both"),
        help="play with the run's correction of invalid actions, without, or both (default: both)",
    )
    args = parser.parse_args()
    seeds = seeds_of(args.seeds)
    conditions = {"on": (True,), "off": (False,), "both": (True, False)}[args.correction]
    print("| policy | correction | valid actions as written | success | s |")
    print("| --- | --- | ---: | ---: | ---: |")
    results: dict[bool, list[dict]] = {c: [] for c in conditions}
    for policy in args.policy:
        for correct in conditions:
            r = probe(policy, args.env, correct, seeds, args.sample_seed)
            results[correct].append(r)
            print(
                f"| {Path(policy).name} | {'on' if correct else 'off'} | {share(r['valid'], r['actions'])} | "
                f"{share(r['successes'], r['episodes'])} | {r['seconds']:.0f} |",
                flush=True,
            )
    print(
        f"\n{r['pairs']} held-out (task, variation) pairs x {len(seeds)} seeds ({args.seeds}) = "
        f"{r['episodes']} episodes per row, temperature {r['temperature']}"
    )
    for correct, rows in results.items():
        for policy, row in zip(args.policy[1:], rows[1:]):
            print(
                f"\n{Path(policy).name} against {Path(args.policy[0]).name}, correction {'on' if correct else 'off'}:"
            )
            print("\n".join(paired(rows[0], row)))


if __name__ == "__main__":
    main()
