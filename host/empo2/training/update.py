"""One EMPO² policy update from an iteration's episodes (docs/paper.md §2 step 6, §3).

Every step of every episode is one sample: its action tokens, scored under the prompt that the
update mode prescribes (paper Table 3), with the episode's GRPO advantage on every token:

    update mode          numerator prompt      old (denominator) prompt
    on-policy            no tips               no tips (rollout prompt)
    on-policy-with-tips  tips                  tips (rollout prompt)
    off-policy           no tips (removed)     tips — or no tips with off_policy_old_logprob=without_tips

Choices where the paper is silent (each a config option where it matters):
1. The return of an episode is reward_scale · Σ score deltas + intrinsic_coef · mean_t r_int:
   the intrinsic part is averaged over the episode's steps so that it stays in [0, 1] and a
   full solve (return 1) always outweighs wandering.
2. π_old is recomputed in one no-grad pass before the first optimizer step (as verl does); the
   sampling-time behaviour log-probs stay in the trajectory record and feed the 'behaviour'
   masking variant.
3. Low-probability masking tests log π_θ(a | s, u) without tips, recomputed at each minibatch
   (paper Eq. 2); where the numerator already has no tips it is the numerator itself.
4. Each sample is scored by its own episode's prompts. With algo.memory_contrast=half a memory
   iteration's group holds rollouts without tips, whose prompt with tips is the prompt without:
   every row of the table then reads π_θ(a|s,u)/π_old(a|s,u), an on-policy sample, whatever
   the iteration's mode (and with mask_scope=memory it is not masked, as on-policy updates are
   not); the tip half follows the iteration's mode. The advantage is over the whole group.

Data parallel (distributed.py): every rank holds every sample; π_old is scored for a rank's
round-robin share and gathered; each minibatch's rows are dealt out to the ranks, each rank's
loss is weighted by its share of the minibatch's tokens, and the gradients are summed before
clipping, so every rank takes the one-process optimizer step.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch

from ..algo.losses import group_advantages, low_probability_mask, merge_stats, token_mean, total_loss
from ..config import AlgoConfig

# The update modes of docs/paper.md §3, the paper's Table 3 (the strings of the protocol's UpdateMode).
from ..modes import OFF_POLICY, ON_POLICY, ON_POLICY_WITH_TIPS, UPDATE_MODES  # noqa: F401 - re-exported
from ..policy.generation import sequence_logprobs
from .distributed import SINGLE, Dist
from .rollout import MEMORY, Episode


@dataclass
class Sample:
    episode: int
    numerator_prompt: list[int]
    old_prompt: list[int]
    no_tip_prompt: list[int]
    action: list[int]
    behaviour: list[float]
    with_tips: bool = True  # its episode played with tips (a memory rollout)


def episode_returns(episodes: list[Episode], algo: AlgoConfig) -> torch.Tensor:
    """(E,) returns: scaled extrinsic score plus the coefficient times the mean novelty."""
    values = []
    for ep in episodes:
        extrinsic = sum(s.reward for s in ep.steps) * algo.reward_scale
        intrinsic = sum(s.intrinsic for s in ep.steps) / max(len(ep.steps), 1)
        values.append(extrinsic + algo.intrinsic_coef * intrinsic)
    return torch.tensor(values, dtype=torch.float32)


def build_samples(episodes: list[Episode], update_mode: str, algo: AlgoConfig) -> list[Sample]:
    if update_mode not in UPDATE_MODES:
        raise ValueError(f"unknown update mode {update_mode!r}")
    samples = []
    for e, ep in enumerate(episodes):
        for s in ep.steps:
            if not s.action_ids:
                continue
            numerator = s.prompt_ids_no_tips if update_mode == OFF_POLICY else s.prompt_ids
            old = s.prompt_ids
            if update_mode == OFF_POLICY and algo.off_policy_old_logprob == "without_tips":
                old = s.prompt_ids_no_tips
            samples.append(
                Sample(
                    e,
                    numerator,
                    old,
                    s.prompt_ids_no_tips,
                    s.action_ids,
                    s.behaviour_logprobs,
                    with_tips=ep.rollout_mode == MEMORY,
                )
            )
    return samples


def _pad(rows: list[list[float]], width: int) -> torch.Tensor:
    return torch.tensor([r + [0.0] * (width - len(r)) for r in rows], dtype=torch.float32)


def _scored(model, prompts, actions, pad_id, micro_batch, width=None):
    """sequence_logprobs in micro-batches, padded to one width (the longest action, or `width`):
    (logp, mask), each (S, width). Callers score π_old and the reference with it, under no_grad;
    none needs the entropy, so it is not computed."""
    width = width or max(len(a) for a in actions)
    logps, masks = [], []
    for start in range(0, len(prompts), micro_batch):
        logp, _, mask = sequence_logprobs(
            model,
            prompts[start : start + micro_batch],
            actions[start : start + micro_batch],
            with_entropy=False,
            pad_id=pad_id,
        )
        grow = width - logp.shape[1]
        logps.append(torch.nn.functional.pad(logp, (0, grow)))
        masks.append(torch.nn.functional.pad(mask, (0, grow)))
    return torch.cat(logps), torch.cat(masks)


def update_policy(
    model,
    optimizer,
    episodes: list[Episode],
    update_mode: str,
    algo: AlgoConfig,
    pad_id: int,
    generator: torch.Generator,
    reference_model=None,
    micro_batch: int = AlgoConfig.micro_batch,
    dist: Dist = SINGLE,
    on_step: Callable[[int, int], None] | None = None,
) -> dict[str, float]:
    """Runs the iteration's optimizer steps; returns averaged statistics for the metrics line.

    reference_model: anything sequence_logprobs can call (a frozen copy, or the LoRA policy's
    base with its adapters off); used only when algo.kl_beta > 0.
    on_step(done, total): called after each optimizer step (a large model's update takes
    minutes, and a person watching it sees the steps count up).
    """
    samples = build_samples(episodes, update_mode, algo)
    returns = episode_returns(episodes, algo)
    group = torch.tensor([ep.group for ep in episodes], dtype=torch.long)
    advantages = group_advantages(returns, group, normalize_std=algo.advantage_std_norm)
    stats: dict[str, list[float]] = {}
    if not samples:
        return {"update_samples": 0.0}
    actions = [s.action for s in samples]
    with torch.no_grad():
        old_logp = _scored_everywhere(model, [s.old_prompt for s in samples], actions, pad_id, micro_batch, dist)
        ref_logp = None
        if algo.kl_beta > 0 and reference_model is not None:
            ref_logp = _scored_everywhere(
                reference_model, [s.numerator_prompt for s in samples], actions, pad_id, micro_batch, dist
            )
    behaviour = _pad([s.behaviour for s in samples], old_logp.shape[1])
    row_adv = advantages[torch.tensor([s.episode for s in samples])]

    model.train()
    optimizer_steps = 0
    size = minibatch_rows(len(samples), algo)
    total_steps = algo.ppo_epochs * math.ceil(len(samples) / size)
    for _ in range(algo.ppo_epochs):
        order = dist.broadcast(torch.randperm(len(samples), generator=generator).tolist())
        for start in range(0, len(order), size):
            rows = order[start : start + size]
            step = _minibatch_step(
                model,
                optimizer,
                samples,
                rows,
                actions,
                old_logp,
                ref_logp,
                behaviour,
                row_adv,
                update_mode,
                algo,
                pad_id,
                micro_batch,
                dist,
            )
            optimizer_steps += 1
            if on_step is not None:
                on_step(optimizer_steps, total_steps)
            for k, v in step.items():
                stats.setdefault(k, []).append(v)
    model.eval()
    result = {k: sum(v) / len(v) for k, v in stats.items()}
    # The extremes over every step, not their means (each step reports both: ppo_epochs and
    # minibatches are at least 1, so there is always a step).
    result["ratio_max"] = max(stats["ratio_max"])
    result["ratio_min"] = min(stats["ratio_min"])
    result["update_samples"] = float(len(samples))
    result["advantage_abs_mean"] = float(advantages.abs().mean())
    result["optimizer_steps"] = float(optimizer_steps)
    return result


def minibatch_rows(samples: int, algo: AlgoConfig) -> int:
    """Samples per optimizer step: the batch split into `algo.minibatches`, or, with
    `algo.minibatch_prompts` N > 0, the reference's N prompts' rows (N × group_size)."""
    if algo.minibatch_prompts > 0:
        return algo.minibatch_prompts * algo.group_size
    return math.ceil(samples / algo.minibatches)


def _scored_everywhere(model, prompts, actions, pad_id, micro_batch, dist: Dist) -> torch.Tensor:
    """(S, T) no-grad log-probs of every sample: each rank scores its round-robin share and the
    shares are gathered (in one process, simply all of them)."""
    width = max(len(a) for a in actions)
    if not dist.active:
        with dist.gathered(model):
            return _scored(model, prompts, actions, pad_id, micro_batch)[0]
    mine = dist.mine(actions)
    logp = torch.zeros(len(actions), width)
    with dist.gathered(model):  # ranks score different numbers of rows
        if mine:
            part, _ = _scored(
                model, [prompts[i] for i in mine], [actions[i] for i in mine], pad_id, micro_batch, width=width
            )
        else:
            part = torch.zeros(0, width)
    for rank, rows in enumerate(dist.gather(part.cpu())):
        logp[rank :: dist.world] = rows
    return logp.to(model.device)


def _minibatch_step(
    model,
    optimizer,
    samples,
    rows,
    actions,
    old_logp,
    ref_logp,
    behaviour,
    row_adv,
    update_mode,
    algo: AlgoConfig,
    pad_id,
    micro_batch,
    dist: Dist = SINGLE,
) -> dict[str, float]:
    """Gradient accumulation over micro-batches; each contributes its share of the token mean.

    With several ranks each takes every world-th row of the minibatch; shares stay relative to
    the whole minibatch's tokens, so summing gradients over ranks gives the one-process gradient.
    """
    optimizer.zero_grad(set_to_none=True)
    total_tokens = sum(len(actions[r]) for r in rows)
    merged: dict[str, float] = {}
    my_rows = rows[dist.rank :: dist.world]
    # Under FSDP2 every rank runs as many micro-batches as rank 0 (which has the most rows), so
    # that the collectives inside each forward and backward pair up; a rank out of rows repeats
    # one with weight 0 (sharding.py, choice 3).
    passes = (
        math.ceil(len(rows[0 :: dist.world]) / micro_batch) if dist.sharded else math.ceil(len(my_rows) / micro_batch)
    )
    for start in range(0, passes * micro_batch, micro_batch):
        part = my_rows[start : start + micro_batch]
        idle = not part
        part = part or rows[:1]
        prompts = [samples[r].numerator_prompt for r in part]
        part_actions = [actions[r] for r in part]
        logp, entropy, mask = sequence_logprobs(model, prompts, part_actions, pad_id=pad_id)
        width = logp.shape[1]
        old = old_logp[part, :width]
        keep = _keep_mask(
            model, samples, part, part_actions, logp, mask, behaviour[part, :width], update_mode, algo, pad_id
        )
        ref = ref_logp[part, :width] if ref_logp is not None else None
        loss, step = total_loss(
            logp,
            old,
            row_adv[part],
            mask,
            keep,
            ref_logp=ref,
            kl_coef=algo.kl_beta,
            kl_kind=algo.kl_kind,
            clip_low=algo.clip_low,
            clip_high=algo.clip_high,
            dual_clip_c=algo.dual_clip_c,
        )
        share = 0.0 if idle else mask.sum().item() / max(total_tokens, 1)
        (loss * share).backward()
        if idle:
            continue
        step["entropy"] = token_mean(entropy.detach(), mask).item()
        merge_stats(merged, step, share)
    trainable = [p for p in model.parameters() if p.requires_grad]
    dist.sum_gradients(trainable)
    merged = dist.reduce_stats(merged)
    grad_norm = torch.nn.utils.clip_grad_norm_(trainable, algo.grad_clip)
    optimizer.step()
    # A DTensor under FSDP2: the norm over every rank's shards.
    merged["grad_norm"] = float(grad_norm.full_tensor() if hasattr(grad_norm, "full_tensor") else grad_norm)
    return merged


def _keep_mask(model, samples, part, part_actions, logp, mask, behaviour, update_mode, algo: AlgoConfig, pad_id):
    if algo.low_prob_mask == "off" or (algo.mask_scope == "memory" and update_mode == ON_POLICY):
        return None  # scope 'memory': plain GRPO updates of memory-free rollouts are not masked
    if algo.mask_logprob == "behaviour":
        tested = behaviour
    elif update_mode == ON_POLICY_WITH_TIPS:
        # The numerator has tips; the paper's mask tests the policy without them.
        with torch.no_grad():
            tested, _, _ = sequence_logprobs(
                model, [samples[r].no_tip_prompt for r in part], part_actions, with_entropy=False, pad_id=pad_id
            )
    else:
        tested = logp.detach()
    keep = low_probability_mask(tested, mask, algo.mask_log_delta, level=algo.low_prob_mask)
    if algo.mask_scope == "memory":  # tip-free rows of a contrast group are on-policy: unmasked
        free = torch.tensor([not samples[r].with_tips for r in part], device=keep.device)
        keep = torch.where(free[:, None], mask.bool(), keep)
    return keep


def dry_run_loss(
    model, episodes: list[Episode], update_mode: str, algo: AlgoConfig, pad_id: int, micro_batch: int = 64
) -> dict:
    """The loss `update_policy` would optimise on these episodes, over all samples at once,
    with no gradient and no optimizer step (the rerun's dry run).

    At the weights that played the episodes π_old = π_θ up to the prompt, so the ratios show
    exactly what Table 3's numerator/denominator change does (off-policy: tips removed). Returns
    {"stats": total_loss's statistics, "ratios": one per-token list per sample, "samples":
    (episode index, step index) per sample}.
    """
    samples = build_samples(episodes, update_mode, algo)
    if not samples:
        return {"stats": {"update_samples": 0.0}, "ratios": [], "samples": []}
    advantages = group_advantages(
        episode_returns(episodes, algo),
        torch.tensor([ep.group for ep in episodes], dtype=torch.long),
        normalize_std=algo.advantage_std_norm,
    )
    actions = [s.action for s in samples]
    rows = list(range(len(samples)))
    with torch.no_grad():
        old, _ = _scored(model, [s.old_prompt for s in samples], actions, pad_id, micro_batch)
        logp, mask = _scored(model, [s.numerator_prompt for s in samples], actions, pad_id, micro_batch)
        behaviour = _pad([s.behaviour for s in samples], logp.shape[1])
        keep = _keep_mask(model, samples, rows, actions, logp, mask, behaviour, update_mode, algo, pad_id)
        _, stats = total_loss(
            logp,
            old,
            advantages[torch.tensor([s.episode for s in samples])],
            mask,
            keep,
            clip_low=algo.clip_low,
            clip_high=algo.clip_high,
            dual_clip_c=algo.dual_clip_c,
        )
        ratio = torch.exp(logp - old)
    stats["update_samples"] = float(len(samples))
    stats["advantage_abs_mean"] = float(advantages.abs().mean())
    return {
        "stats": stats,
        "ratios": [ratio[i, : len(a)].tolist() for i, a in enumerate(actions)],
        "samples": [s.episode for s in samples],
    }


def tip_guided_logprobs(model, episodes: list[Episode], pad_id: int, micro_batch: int = 64) -> list[dict]:
    """Per episode, log π_θ(a | s, u) without tips of the actions it took where tips were shown:
    the quantity an off-policy update raises for a successful tip-guided episode.

    Returns [{"steps", "tokens", "logprob" (sum), "mean", "token_logprobs"}] in episode order;
    an episode that never saw a tip has zeros, mean None and no token log-probs.
    """
    cells = [(e, s) for e, ep in enumerate(episodes) for s in ep.steps if s.tips and s.action_ids]
    per_episode: list[list[float]] = [[] for _ in episodes]
    steps = [0 for _ in episodes]
    if cells:
        with torch.no_grad():
            logp, _ = _scored(
                model, [s.prompt_ids_no_tips for _, s in cells], [s.action_ids for _, s in cells], pad_id, micro_batch
            )
        for row, (e, s) in zip(logp.tolist(), cells):
            steps[e] += 1
            per_episode[e].extend(row[: len(s.action_ids)])
    return [
        {
            "steps": n,
            "tokens": len(lps),
            "logprob": float(sum(lps)),
            "mean": float(sum(lps)) / len(lps) if lps else None,
            "token_logprobs": lps,
        }
        for n, lps in zip(steps, per_episode)
    ]
