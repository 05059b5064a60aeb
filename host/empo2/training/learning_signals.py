"""Per-iteration figures that explain whether and why a run learns.

The trainer adds them to each metrics record; the metrics view charts them:

- ``memory/success_tip_share``: of the steps of a memory rollout, the share whose tip block held
  a tip written after a successful episode. Off-policy distillation can only teach what such
  tips led to; with few of them there is little to distil.
- ``rollout/memory/success`` and ``rollout/memory_free/success`` (written by the trainer): the
  rollouts with tips against those without.
- ``update/off_policy/*``: the masked-token fraction and the importance-ratio statistics of
  off-policy updates only, where tips leave the numerator's prompt and ratios leave 1; where the
  mask zeroes most tokens, distillation has no gradient.
- ``reward/intrinsic_advantage_share``: the novelty reward's share of |advantage|.
- ``reward/flat_group_share``: the share of task groups whose returns are all equal (all
  succeeded, or all failed with one score, and no novelty to tell them apart). Their advantages
  are 0: GRPO learns nothing from them, and a policy that fails every rollout of every group the
  same way has no gradient left to leave that failure (the optimizer still steps, on momentum).

Keys of an iteration that does not have the thing (a memory-free iteration has no tips) are left
out, so a chart shows a gap, not a misleading zero.
"""

from __future__ import annotations

import dataclasses

import torch

from .. import metric_keys as metric
from ..config import AlgoConfig
from ..envs.base import SCORE_MAX
from .rollout import MEMORY, Episode
from .update import OFF_POLICY, episode_returns


def success_tip_share(episodes: list[Episode], memory) -> float:
    """Share of steps whose shown tips include one from a successful episode (score at the
    environments' maximum, which is how ScienceWorld and the built-in worlds define success)."""
    steps = [s for ep in episodes for s in ep.steps]
    if not steps:
        return 0.0
    scores: dict[str, float] = {}

    def successful(tip_id: str) -> bool:
        if tip_id not in scores:
            scores[tip_id] = memory.get(tip_id).score
        return scores[tip_id] >= SCORE_MAX

    return sum(any(successful(t) for t in s.tip_ids) for s in steps) / len(steps)


def intrinsic_advantage_share(episodes: list[Episode], algo: AlgoConfig) -> float:
    """Σ|intrinsic part of A| / (Σ|intrinsic part| + Σ|extrinsic part|), in [0, 1].

    A GRPO advantage is linear in the return, A_i = (R_i − mean R) / (std R + ε) within a group,
    and R = extrinsic + intrinsic (update.episode_returns), so A splits exactly into an extrinsic
    and an intrinsic part with the group's one denominator.
    """
    full = episode_returns(episodes, algo).double()
    extrinsic = episode_returns(episodes, dataclasses.replace(algo, intrinsic_coef=0.0)).double()
    intrinsic = full - extrinsic
    groups = torch.tensor([ep.group for ep in episodes])
    ext_total = int_total = 0.0
    for g in groups.unique():
        rows = groups == g
        if rows.sum() < 2:
            continue  # a group of one has advantage 0
        scale = (full[rows].std() + 1e-6) if algo.advantage_std_norm else 1.0
        ext_total += float(((extrinsic[rows] - extrinsic[rows].mean()) / scale).abs().sum())
        int_total += float(((intrinsic[rows] - intrinsic[rows].mean()) / scale).abs().sum())
    total = ext_total + int_total
    return int_total / total if total > 0 else 0.0


def flat_group_share(episodes: list[Episode], algo: AlgoConfig) -> float:
    """Share of the iteration's groups whose returns (as the advantage sees them, novelty
    included) are all equal, so that A_i = 0 for every episode of the group. A group of one
    counts: its advantage is 0 too."""
    returns = episode_returns(episodes, algo)
    groups = torch.tensor([ep.group for ep in episodes])
    if not len(groups):
        return 0.0
    flat = 0
    for g in groups.unique():
        rows = returns[groups == g]
        # Exactly equal, as the update's advantage sees them: any spread, however small, is
        # normalised by the group's std into advantages that are not 0.
        flat += int(bool(rows.max() == rows.min()))
    return flat / len(groups.unique())


def learning_signals(
    episodes: list[Episode], memory_mode: bool, update_mode: str, stats: dict[str, float], algo: AlgoConfig, memory
) -> dict[str, float]:
    """The figures above for one iteration, as metrics-record keys."""
    record = {
        metric.REWARD_INTRINSIC_ADVANTAGE_SHARE: intrinsic_advantage_share(episodes, algo),
        metric.REWARD_FLAT_GROUP_SHARE: flat_group_share(episodes, algo),
    }
    if memory_mode:  # over the rollouts with tips (a contrast group's other half has none)
        record[metric.MEMORY_SUCCESS_TIP_SHARE] = success_tip_share(
            [ep for ep in episodes if ep.rollout_mode == MEMORY], memory
        )
    if update_mode == OFF_POLICY:
        record.update({metric.OFF_POLICY_PREFIX + k: stats[k] for k in metric.OFF_POLICY_STATS if k in stats})
    return record
