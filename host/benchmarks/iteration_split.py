"""Where an EMPO² iteration's time goes, on CPU with the built-in policy and worlds.

    .venv/bin/python host/benchmarks/iteration_split.py [--iterations 6] [--policy FOLDER]

Runs the `builtin` preset (B=4 tasks × N=8 rollouts, 15-step episodes) without evaluation and
prints the mean seconds per iteration of each phase, from the trainer's own metrics:

  generation   sampling actions (rollout; batched decoding with the KV cache)
  environment  env.reset and env.step (rollout)
  retrieval    memory look-ups (rollout, memory-mode iterations only)
  prompting    building and tokenising prompts (rollout)
  intrinsic    novelty rewards (sentence embeddings of the states)
  tips         the policy writing one tip per episode, and storing them (with their embeddings)
  update       the policy update (π_old pass, minibatch steps)
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from empo2 import metric_keys as metric  # noqa: E402
from empo2.config import load_config  # noqa: E402
from empo2.run_folder.folder import RunFolder  # noqa: E402
from empo2.training.rollout import MEMORY  # noqa: E402
from empo2.training.trainer import Trainer  # noqa: E402

PHASES = [(phase, metric.ROLLOUT_TIME_PREFIX + phase) for phase in metric.ROLLOUT_PHASES] + [
    (phase, metric.TIME_PREFIX + phase) for phase in ("intrinsic", "tips", "update")
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--iterations", type=int, default=6)
    parser.add_argument("--policy", default="builtin", help="a policy folder (default: the built-in one)")
    parser.add_argument("--p-memory", type=float, default=0.5, help="share of memory-mode iterations")
    parser.add_argument("overrides", nargs="*", metavar="key=value", help="more config overrides")
    args = parser.parse_args()
    os.environ.setdefault("EMPO2_NO_PROGRESS", "1")
    overrides = [
        f"iterations={args.iterations}",
        f"policy.model={args.policy}",
        "eval.every=0",
        f"algo.p_memory={args.p_memory}",
        "policy.device=cpu",
        *args.overrides,
    ]
    config = load_config("builtin", overrides)
    with tempfile.TemporaryDirectory(prefix="empo2-split-") as scratch:
        folder = RunFolder.create(Path(scratch), "split", config.to_dict())
        Trainer(config, folder).run()
        metrics = folder.metrics()
    print(
        f"{'phase':12s} {'all':>8s} {'memory':>8s} {'no-memory':>10s}   (s per iteration, "
        f"{len(metrics)} iterations, B={config.algo.batch_tasks} N={config.algo.group_size})"
    )
    groups = {
        "all": metrics,
        "memory": [m for m in metrics if m[metric.ROLLOUT_MODE] == MEMORY],
        "no-memory": [m for m in metrics if m[metric.ROLLOUT_MODE] != MEMORY],
    }
    for phase, key in PHASES + [("total", metric.TIME_TOTAL)]:
        cells = [float(np.mean([m.get(key, 0.0) for m in ms])) if ms else float("nan") for ms in groups.values()]
        print(f"{phase:12s} {cells[0]:8.3f} {cells[1]:8.3f} {cells[2]:10.3f}")
    steps = float(np.mean([m[metric.ROLLOUT_STEPS] for m in metrics]))
    print(
        f"env steps per iteration: {steps:.0f}; rollout tokens/s: "
        f"{np.mean([m[metric.THROUGHPUT_ROLLOUT] for m in metrics]):,.0f}"
    )


if __name__ == "__main__":
    main()
