"""The keys of a metrics.jsonl line, each declared once with what it means.

The trainer writes one line per iteration with these keys (training/trainer.py `_metrics`); the CLI, the
benchmarks and the extension's charts read them. This module holds no torch, so anything may
import it, and it is the source of `protocol/metric-keys.json`, the list the extension's chart
table is checked against:

    python -m empo2.metric_keys --write     # regenerate protocol/metric-keys.json
    python -m empo2.metric_keys --check     # exit 1 when the file is stale

A key with `{task}` stands for one key per task of the run (`eval/memory/success/power-device`).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

# -- the iteration ------------------------------------------------------------------------------
ITERATION = "iteration"
TIME = "time"
ROLLOUT_MODE = "rollout_mode"
UPDATE_MODE = "update_mode"
ENV_STEPS = "env_steps"

# -- rollouts (training episodes of this iteration) ---------------------------------------------
ROLLOUT_RETURN = "rollout/return"
ROLLOUT_SUCCESS = "rollout/success"
ROLLOUT_STEPS = "rollout/steps"


MODE_SEGMENTS = ("memory", "memory_free")  # the rollout modes as key segments (no hyphen)


def mode_segment(rollout_mode: str) -> str:
    """ "memory-free" → "memory_free": a rollout mode as it appears inside a key."""
    return rollout_mode.replace("-", "_")


def rollout_return(segment: str) -> str:
    """The return key of iterations of one rollout mode (a MODE_SEGMENTS entry)."""
    return f"rollout/{segment}/return"


def rollout_success(segment: str) -> str:
    return f"rollout/{segment}/success"


# -- memory and rewards -------------------------------------------------------------------------
MEMORY_TIPS = "memory/tips"
MEMORY_RETRIEVAL_HITS = "memory/retrieval_hits"
MEMORY_TIPS_PER_STEP = "memory/tips_per_step"
REWARD_INTRINSIC = "reward/intrinsic"

# -- what explains learning (training/learning_signals.py): written only by iterations that have them ----
MEMORY_SUCCESS_TIP_SHARE = "memory/success_tip_share"
REWARD_INTRINSIC_ADVANTAGE_SHARE = "reward/intrinsic_advantage_share"
REWARD_FLAT_GROUP_SHARE = "reward/flat_group_share"
OFF_POLICY_PREFIX = "update/off_policy/"  # + an OFF_POLICY_STATS entry
OFF_POLICY_STATS = (
    "masked_fraction",
    "ratio_mean",
    "ratio_std",
    "ratio_min",
    "ratio_max",
    "clip_fraction",
    "optimizer_steps",
)

# -- time and throughput ------------------------------------------------------------------------
TIME_TOTAL = "time/total"
THROUGHPUT_ROLLOUT = "throughput/rollout_tokens_per_s"
THROUGHPUT_UPDATE = "throughput/update_tokens_per_s"
TIME_PREFIX = "time/"  # + an iteration phase (ITERATION_PHASES)
ROLLOUT_TIME_PREFIX = "time/rollout/"  # + a rollout phase (ROLLOUT_PHASES)
UPDATE_PREFIX = "update/"  # + a statistic of update.update_policy (UPDATE_STATS)

# -- evaluation ---------------------------------------------------------------------------------
EVAL_SETTINGS = MODE_SEGMENTS[::-1]  # memory-free on held-out variations, then memory on trained ones


def eval_success(setting: str, task: str | None = None) -> str:
    return f"eval/{setting}/success" + (f"/{task}" if task is not None else "")


def eval_score(setting: str) -> str:
    return f"eval/{setting}/score"


EVAL_MEMORY_FREE_SUCCESS = eval_success(EVAL_SETTINGS[0])  # the headline figure of a run
EVAL_MEMORY_SUCCESS = eval_success(EVAL_SETTINGS[1])


ITERATION_PHASES = {
    "rollout": "playing the iteration's episodes",
    "tips": "the policy writing one tip per episode, and storing them",
    "intrinsic": "novelty rewards of every state",
    "update": "the policy update",
    "evaluation": "evaluation (0 in iterations without one)",
}
ROLLOUT_PHASES = {
    "generation": "sampling actions from the policy",
    "environment": "resets and steps of the environments",
    "prompting": "building and fitting the prompts",
    "retrieval": "retrieving tips from the memory",
}
UPDATE_STATS = {
    "loss": "total loss of the last pass (policy loss + KL term), mean over minibatches",
    "pg_loss": "clipped policy-gradient loss, mean over minibatches",
    "kl": "KL estimate to the reference policy, per token (only with algo.kl_beta > 0)",
    "approx_kl_old": "approximate KL to the rollout-time policy, per token",
    "entropy": "policy entropy per response token, in nats",
    "ratio_mean": "mean importance ratio π_θ/π_old over response tokens",
    "ratio_std": "standard deviation of the importance ratio over response tokens",
    "ratio_min": "smallest importance ratio of the iteration",
    "ratio_max": "largest importance ratio of the iteration",
    "clip_fraction": "share of response tokens whose ratio was clipped, 0..1",
    "dual_clip_fraction": "share of response tokens hit by the dual clip (negative advantage), 0..1",
    "masked_fraction": "share of response tokens left out by the low-probability mask, 0..1",
    "grad_norm": "gradient norm before clipping, mean over optimizer steps",
    "update_samples": "number of (step, action) samples in the update",
    "advantage_abs_mean": "mean absolute group-normalised advantage over episodes",
    "optimizer_steps": "optimizer steps of the update (algo.minibatches or algo.minibatch_prompts, "
    "times algo.ppo_epochs); summed over a run's off-policy iterations, its "
    "off-policy gradient steps",
}


def _declared() -> dict[str, str]:
    keys = {
        ITERATION: "training iteration, counted from 1",
        TIME: "wall-clock time the line was written, Unix seconds",
        ROLLOUT_MODE: 'rollout mode of the iteration: "memory" or "memory-free" (a string)',
        UPDATE_MODE: "update mode of the iteration: one of update.UPDATE_MODES (a string)",
        ENV_STEPS: "environment steps taken by the run so far, this iteration included",
        ROLLOUT_RETURN: "mean final score of the iteration's episodes, -100..100",
        ROLLOUT_SUCCESS: "share of the iteration's episodes that succeeded, 0..1",
        ROLLOUT_STEPS: "environment steps in this iteration",
    }
    for mode, shown in zip(MODE_SEGMENTS, ("memory rollouts", "memory-free rollouts")):
        keys[rollout_return(mode)] = f"{ROLLOUT_RETURN} in iterations of {shown} only, -100..100"
        keys[rollout_success(mode)] = f"{ROLLOUT_SUCCESS} in iterations of {shown} only, 0..1"
    keys.update(
        {
            MEMORY_TIPS: "live tips in the run's memory after the iteration",
            MEMORY_RETRIEVAL_HITS: "share of steps whose prompt showed at least one tip, 0..1 (0 memory-free)",
            MEMORY_TIPS_PER_STEP: "mean number of tips shown per step (0 memory-free)",
            REWARD_INTRINSIC: "mean novelty reward per step",
            TIME_TOTAL: "seconds the iteration took, all phases",
            THROUGHPUT_ROLLOUT: "action tokens generated per second of rollout",
            THROUGHPUT_UPDATE: "sequence tokens (prompt + action) per second of update, all epochs",
        }
    )
    keys.update({TIME_PREFIX + phase: f"seconds spent on {what}" for phase, what in ITERATION_PHASES.items()})
    keys.update(
        {ROLLOUT_TIME_PREFIX + phase: f"seconds of the rollout spent {what}" for phase, what in ROLLOUT_PHASES.items()}
    )
    keys.update({UPDATE_PREFIX + name: what for name, what in UPDATE_STATS.items()})
    keys.update(
        {
            MEMORY_SUCCESS_TIP_SHARE: "share of a memory iteration's steps shown a tip from a successful "
            "episode, 0..1 (memory iterations only)",
            REWARD_INTRINSIC_ADVANTAGE_SHARE: "the novelty reward's share of |advantage|: sum |intrinsic "
            "part| / (sum |intrinsic part| + sum |extrinsic part|), 0..1",
            REWARD_FLAT_GROUP_SHARE: "share of the iteration's task groups whose returns are all equal: every "
            "advantage in them is 0, so they give the update no gradient, 0..1",
        }
    )
    keys.update(
        {OFF_POLICY_PREFIX + name: f"{UPDATE_STATS[name]} (off-policy iterations only)" for name in OFF_POLICY_STATS}
    )
    for setting, shown in zip(
        EVAL_SETTINGS, ("memory-free on held-out variations", "with the run's memory on training variations")
    ):
        keys[eval_success(setting)] = f"evaluation success rate, {shown}, 0..1"
        keys[eval_score(setting)] = f"evaluation mean final score, {shown}, -100..100"
        keys[eval_success(setting, "{task}")] = f"evaluation success rate of one task, {shown}, 0..1"
    return keys


METRICS: dict[str, str] = _declared()
_PATTERNS = [
    re.compile("^" + re.escape(key).replace(re.escape("{task}"), "[^/]+") + "$") for key in METRICS if "{task}" in key
]


def is_declared(key: str) -> bool:
    """True when `key` is in METRICS, directly or through a `{task}` key."""
    return key in METRICS or any(p.match(key) for p in _PATTERNS)


def metric_keys_json() -> str:
    """The text of protocol/metric-keys.json."""
    return json.dumps({"metrics": METRICS}, indent=2, ensure_ascii=False) + "\n"


DEFAULT_PATH = Path(__file__).resolve().parents[2] / "protocol" / "metric-keys.json"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m empo2.metric_keys", description=__doc__.split("\n")[0])
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--write", action="store_true", help="write the file")
    action.add_argument("--check", action="store_true", help="exit 1 when the file is stale")
    parser.add_argument("--path", type=Path, default=DEFAULT_PATH, help="default: %(default)s")
    args = parser.parse_args(argv)
    wanted = metric_keys_json()
    if args.write:
        args.path.write_text(wanted, encoding="utf-8")
        return 0
    current = args.path.read_text(encoding="utf-8") if args.path.is_file() else None
    if current != wanted:
        print(f"{args.path} is stale; run `python -m empo2.metric_keys --write`.", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
