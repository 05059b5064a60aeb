"""EMPO² loss maths: GRPO advantages, low-probability masking, the clipped surrogate, KL, entropy.

Pure functions, tensors in and tensors out; nothing here knows about models, tokenizers or the
trainer. Shapes in docstrings: B = rows (one row = one step's action tokens of one episode),
T = response tokens per row (right-padded), V = vocabulary, E = episodes.

Follows EMPO² (arXiv 2602.23008, docs/paper.md §3): trajectory-level GRPO advantage, PPO clip
with asymmetric bounds (ε_low 0.2, ε_high 0.3), dual-clip c = 10 for negative advantages,
token-mean aggregation, optional KL to a reference policy, low-probability masking (paper Eq. 2).
The surrogate mirrors verl's ``compute_policy_loss`` (verl/trainer/ppo/core_algos.py).

Which log-probs the trainer passes as ``logp`` / ``old_logp`` (paper Table 3; the trainer picks the
tensors, this module only sees two (B, T) tensors):

    ===================  =======  ============================  ====================================
    update mode          rollout  logp (current, with grad)     old_logp (old/behaviour, no grad)
    ===================  =======  ============================  ====================================
    on-policy            no tips  log π_θ(a | s, u)             log π_old(a | s, u)
    on-policy with tips  tips     log π_θ(a | s, u, tips)       log π_old(a | s, u, tips)
    off-policy           tips     log π_θ(a | s, u) tips gone   log π_old(a | s, u, tips)
    ===================  =======  ============================  ====================================

    Option "old log-prob without tips" (Algorithm 1 line 27, an early reference-code version):
    off-policy old_logp = log π_old(a | s, u) instead.

Decisions and deviations, numbered:

1. Advantage std is the unbiased sample std (``torch.std`` default), as verl's GRPO does; the
   paper does not say. ε = 1e-6 is added to the std, not under the square root.
2. A group with a single episode gets advantage 0 (nothing to compare against). verl instead uses
   mean 0, std 1 there, which hands the raw return to a lone episode.
3. Low-probability masking (paper Eq. 2) removes the advantage term of a masked token, so the token
   contributes exactly 0 loss and 0 gradient, but it STAYS in the token-mean denominator (all
   response tokens count). Masking therefore shrinks the update rather than re-weighting the
   surviving tokens up. The KL term is never masked by the keep-mask.
4. Default masking is token level, log δ = −5, on (docs/paper.md §3). The reference code masks the whole
   step ("step" level), tests the behaviour log-prob and ships with masking off; both levels are
   in ``KEEP_MASK_LEVELS`` and the trainer decides which log-prob tensor to test.
5. As in verl, log(ratio) is clamped to [−20, 20] before ``exp`` so an extreme off-policy ratio
   cannot overflow; outside that range the ratio's gradient is 0.
6. The dual clip applies where A < 0 only (verl's ``clip_ratio_c``): loss = min(max(−A·r,
   −A·clip(r)), −A·c). c must exceed 1.
7. Aggregation is token-mean over the whole batch: Σ loss·mask / Σ mask (verl "token-mean"), and
   0, not NaN, when no token is unmasked.
8. ``low_var_kl`` is Schulman's k3 estimator clamped to [−10, 10], exactly verl's; the entropy
   bonus of the paper is 0, so only ``entropy_from_logits`` is offered for logging.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from ..config import AlgoConfig

DEFAULTS = AlgoConfig()  # the clip bounds as a run's config has them (paper values)

# ---------------------------------------------------------------------------------------------
# Aggregation


def token_mean(values: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Mean of ``values`` over the entries where ``mask`` is true; 0 when the mask is empty.

    Args:
        values: (B, T) float.
        mask: (B, T) bool (or 0/1).
    Returns:
        scalar tensor. Masked-out entries are selected away (not multiplied by 0), so a NaN or inf
        in padding never leaks into the result or its gradient.
    """
    mask = mask.bool()
    total = torch.where(mask, values, torch.zeros_like(values)).sum()
    return total / mask.sum().clamp(min=1).to(values.dtype)


# ---------------------------------------------------------------------------------------------
# Advantages


def group_advantages(
    returns: torch.Tensor,
    group_index: torch.Tensor,
    normalize_std: bool = True,
    eps: float = 1e-6,
) -> torch.Tensor:
    """GRPO trajectory-level advantage: A_i = (R_i − mean_g R) / (std_g R + eps).

    Args:
        returns: (E,) episode returns.
        group_index: (E,) long; episodes with equal index form one GRPO group (same task, N
            rollouts). Any integer ids, need not be contiguous.
        normalize_std: divide by the group std (Dr. GRPO-style runs turn this off).
        eps: added to the std.
    Returns:
        (E,) advantages, same float dtype as ``returns`` (float32 if returns are integer).
        Std is unbiased (``torch.std``, as verl); a group of one episode gets 0; a group with
        identical returns gets 0 (0 / eps).
    """
    if returns.dim() != 1 or returns.shape != group_index.shape:
        raise ValueError(
            f"returns and group_index must both be (E,), got {tuple(returns.shape)} and {tuple(group_index.shape)}."
        )
    if not returns.is_floating_point():
        returns = returns.float()
    # Compact arbitrary ids to 0..G-1 so the scatter buffers have G rows.
    _, inverse = torch.unique(group_index, return_inverse=True)
    num_groups = int(inverse.max().item()) + 1 if inverse.numel() else 0

    counts = torch.zeros(num_groups, dtype=returns.dtype, device=returns.device)
    counts.index_add_(0, inverse, torch.ones_like(returns))
    sums = torch.zeros_like(counts).index_add_(0, inverse, returns)
    mean = sums / counts.clamp(min=1)

    centered = returns - mean[inverse]
    if normalize_std:
        sq = torch.zeros_like(counts).index_add_(0, inverse, centered.square())
        std = (sq / (counts - 1).clamp(min=1)).sqrt()  # unbiased, like torch.std
        centered = centered / (std[inverse] + eps)
    alone = counts[inverse] < 2
    return torch.where(alone, torch.zeros_like(centered), centered)


# ---------------------------------------------------------------------------------------------
# Low-probability masking (paper Eq. 2)

KeepMaskFn = Callable[[torch.Tensor, torch.Tensor, float], torch.Tensor]
KEEP_MASK_LEVELS: dict[str, KeepMaskFn] = {}


def register_keep_mask(name: str) -> Callable[[KeepMaskFn], KeepMaskFn]:
    def wrap(fn: KeepMaskFn) -> KeepMaskFn:
        KEEP_MASK_LEVELS[name] = fn
        return fn

    return wrap


@register_keep_mask("token")
def _keep_tokens(logp: torch.Tensor, response_mask: torch.Tensor, log_delta: float) -> torch.Tensor:
    """Paper Eq. 2 as we read it: drop each token whose own log-prob is below log δ."""
    return response_mask & (logp >= log_delta)


@register_keep_mask("step")
def _keep_steps(logp: torch.Tensor, response_mask: torch.Tensor, log_delta: float) -> torch.Tensor:
    """Reference code: one low-probability token drops the whole step (row)."""
    low = response_mask & (logp < log_delta)
    return response_mask & ~low.any(dim=-1, keepdim=True)


@register_keep_mask("off")
def _keep_all(logp: torch.Tensor, response_mask: torch.Tensor, log_delta: float) -> torch.Tensor:
    """Masking disabled (the reference code's shipped default; paper Fig. 6 shows it diverge)."""
    return response_mask.clone()


def low_probability_mask(
    logp: torch.Tensor,
    response_mask: torch.Tensor,
    log_delta: float = -5.0,
    level: str = "token",
) -> torch.Tensor:
    """KEEP-mask for the advantage term: true where the token still counts.

    Args:
        logp: (B, T) log-probs to test. The paper tests π_θ(a | s, u) without tips (for the
            off-policy mode that is the current ``logp``); the reference code tests the
            behaviour log-prob. The caller chooses; no gradient flows through the mask.
        response_mask: (B, T) bool, true on real response tokens.
        log_delta: log δ; tokens with logp < log_delta are dropped.
        level: a key of ``KEEP_MASK_LEVELS``: "token", "step" (row = one step's action) or "off".
    Returns:
        (B, T) bool, always a subset of ``response_mask``.
    """
    if level not in KEEP_MASK_LEVELS:
        raise ValueError(f"Unknown low-probability mask level {level!r}; choose one of {sorted(KEEP_MASK_LEVELS)}.")
    _check_same_shape(logp=logp, response_mask=response_mask)
    return KEEP_MASK_LEVELS[level](logp.detach(), response_mask.bool(), log_delta)


# ---------------------------------------------------------------------------------------------
# Policy loss


def policy_loss(
    logp: torch.Tensor,
    old_logp: torch.Tensor,
    advantages: torch.Tensor,
    response_mask: torch.Tensor,
    keep_mask: torch.Tensor | None = None,
    clip_low: float = DEFAULTS.clip_low,
    clip_high: float = DEFAULTS.clip_high,
    dual_clip_c: float = DEFAULTS.dual_clip_c,
) -> tuple[torch.Tensor, dict[str, float]]:
    """PPO clipped surrogate with asymmetric bounds, dual clip and low-probability masking.

    Per token, with r = exp(clamp(logp − old_logp, −20, 20)):
        l = max(−A·r, −A·clip(r, 1 − clip_low, 1 + clip_high))
        l = min(l, −A·c)                 where A < 0 (dual clip)
        l = 0                            where keep_mask is false
    loss = Σ_{response tokens} l / #response tokens   (masked tokens stay in the denominator).

    Args:
        logp: (B, T) current log-probs, with grad; float32 like verl (bf16 blurs the ratio and
            the token count of the mean).
        old_logp: (B, T) old/behaviour log-probs (see the module table); treated as constants.
        advantages: (B,) one per row, or (B, T) per token.
        response_mask: (B, T) bool.
        keep_mask: (B, T) bool from ``low_probability_mask``, or None to keep every token.
        clip_low, clip_high: ε_low, ε_high.
        dual_clip_c: c > 1.
    Returns:
        (loss scalar, stats). Stats are detached python floats over response tokens:
        clip_fraction and dual_clip_fraction (kept tokens whose clipped / dual-clipped branch is
        the active one, divided by all response tokens, like the loss), ratio_mean/min/max/std,
        masked_fraction (response tokens dropped by keep_mask) and approx_kl_old
        (mean of old_logp − logp).
    """
    if dual_clip_c <= 1.0:
        raise ValueError(f"dual_clip_c must be greater than 1, got {dual_clip_c}.")
    _check_same_shape(logp=logp, old_logp=old_logp, response_mask=response_mask)
    response_mask = response_mask.bool()
    keep = response_mask if keep_mask is None else keep_mask.bool() & response_mask
    if advantages.dim() == 1:
        advantages = advantages.unsqueeze(-1)  # (B, 1) broadcasts over T
    if advantages.shape not in {(logp.shape[0], 1), logp.shape}:
        raise ValueError(f"advantages must be (B,) or (B, T) for logp {tuple(logp.shape)}.")
    advantages = advantages.detach().to(logp.dtype)

    log_ratio = torch.clamp(logp - old_logp.detach(), min=-20.0, max=20.0)
    ratio = torch.exp(log_ratio)
    unclipped = -advantages * ratio
    clipped = -advantages * torch.clamp(ratio, 1.0 - clip_low, 1.0 + clip_high)
    clip_loss = torch.maximum(unclipped, clipped)
    dual_bound = -advantages * dual_clip_c
    negative = (advantages < 0).expand_as(clip_loss)
    per_token = torch.where(negative, torch.minimum(clip_loss, dual_bound), clip_loss)
    per_token = torch.where(keep, per_token, torch.zeros_like(per_token))
    loss = token_mean(per_token, response_mask)

    with torch.no_grad():
        clip_active = keep & (clipped > unclipped)
        dual_active = keep & negative & (clip_loss > dual_bound)
        stats = {
            "clip_fraction": token_mean(clip_active.to(logp.dtype), response_mask).item(),
            "dual_clip_fraction": token_mean(dual_active.to(logp.dtype), response_mask).item(),
            "masked_fraction": token_mean((response_mask & ~keep).to(logp.dtype), response_mask).item(),
            "approx_kl_old": token_mean(-log_ratio, response_mask).item(),
            **_ratio_stats(ratio.detach(), response_mask),
        }
    return loss, stats


def _ratio_stats(ratio: torch.Tensor, mask: torch.Tensor) -> dict[str, float]:
    """Mean/min/max/std (population) of the ratio over response tokens; zeros when none."""
    values = ratio[mask]
    if values.numel() == 0:
        return {"ratio_mean": 0.0, "ratio_min": 0.0, "ratio_max": 0.0, "ratio_std": 0.0}
    return {
        "ratio_mean": values.mean().item(),
        "ratio_min": values.min().item(),
        "ratio_max": values.max().item(),
        "ratio_std": values.std(unbiased=False).item(),
    }


EXTREMES = {"ratio_max": max, "ratio_min": min}  # statistics that combine by extreme, not by sum


def merge_stats(into: dict[str, float], stats: dict[str, float], weight: float = 1.0) -> None:
    """Adds one part's statistics into a running total: weighted sums, except the ratio's max and
    min, which take the extreme (micro-batches of a minibatch, or ranks of one step)."""
    for k, v in stats.items():
        extreme = EXTREMES.get(k)
        into[k] = extreme(into.get(k, v), v) if extreme else into.get(k, 0.0) + v * weight


# ---------------------------------------------------------------------------------------------
# KL to a reference policy

KLFn = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]
KL_PENALTIES: dict[str, KLFn] = {}


def register_kl(*names: str) -> Callable[[KLFn], KLFn]:
    def wrap(fn: KLFn) -> KLFn:
        for name in names:
            KL_PENALTIES[name] = fn
        return fn

    return wrap


@register_kl("kl", "k1")
def _kl_k1(logp: torch.Tensor, ref_logp: torch.Tensor) -> torch.Tensor:
    """k1 = log π − log π_ref: unbiased, high variance, can be negative."""
    return logp - ref_logp


@register_kl("mse", "k2")
def _kl_k2(logp: torch.Tensor, ref_logp: torch.Tensor) -> torch.Tensor:
    """k2 = ½ (log π − log π_ref)²."""
    return 0.5 * (logp - ref_logp).square()


@register_kl("low_var_kl", "k3")
def _kl_k3(logp: torch.Tensor, ref_logp: torch.Tensor) -> torch.Tensor:
    """k3 = π_ref/π − log(π_ref/π) − 1, clamped to [−10, 10] as verl's low_var_kl."""
    log_ratio = torch.clamp(ref_logp - logp, min=-20.0, max=20.0)
    return torch.clamp(torch.exp(log_ratio) - log_ratio - 1.0, min=-10.0, max=10.0)


def kl_penalty(logp: torch.Tensor, ref_logp: torch.Tensor, kind: str = "low_var_kl") -> torch.Tensor:
    """Per-token KL estimate between the current and the reference policy.

    Args:
        logp: (B, T) current log-probs (with grad).
        ref_logp: (B, T) reference log-probs (constants).
        kind: a key of ``KL_PENALTIES``: "low_var_kl"/"k3", "kl"/"k1", "mse"/"k2".
    Returns:
        (B, T), unmasked; aggregate with ``token_mean``.
    """
    if kind not in KL_PENALTIES:
        raise ValueError(f"Unknown KL estimator {kind!r}; choose one of {sorted(KL_PENALTIES)}.")
    _check_same_shape(logp=logp, ref_logp=ref_logp)
    return KL_PENALTIES[kind](logp, ref_logp.detach())


# ---------------------------------------------------------------------------------------------
# Entropy


def entropy_from_logits(logits: torch.Tensor) -> torch.Tensor:
    """Entropy of softmax(logits) along the last axis: −Σ p · log_softmax(z).

    Args:
        logits: (B, T, V), any float dtype (computed in that dtype; upcast first for bf16 if the
            value matters more than the memory).
    Returns:
        (B, T). Uses log_softmax (shifted by the max) rather than logsumexp(z) − Σ p·z, which
        cancels catastrophically for large logits; −inf logits (banned tokens) are replaced
        before the product so 0·(−inf) never appears, in the value or the gradient.
    """
    log_probs = torch.log_softmax(logits, dim=-1)
    safe_log_probs = torch.where(torch.isfinite(log_probs), log_probs, torch.zeros_like(log_probs))
    return -(log_probs.exp() * safe_log_probs).sum(dim=-1)


# ---------------------------------------------------------------------------------------------
# Composition


def total_loss(
    logp: torch.Tensor,
    old_logp: torch.Tensor,
    advantages: torch.Tensor,
    response_mask: torch.Tensor,
    keep_mask: torch.Tensor | None = None,
    ref_logp: torch.Tensor | None = None,
    kl_coef: float = 0.0,
    kl_kind: str = "low_var_kl",
    clip_low: float = DEFAULTS.clip_low,
    clip_high: float = DEFAULTS.clip_high,
    dual_clip_c: float = DEFAULTS.dual_clip_c,
) -> tuple[torch.Tensor, dict[str, float]]:
    """EMPO² objective: ``policy_loss`` + kl_coef · token_mean(kl_penalty) (entropy bonus 0).

    Shapes as ``policy_loss``; ``ref_logp`` (B, T) is required when kl_coef > 0 and ignored
    otherwise. Stats are those of ``policy_loss`` plus "pg_loss", "kl" (when used) and "loss".
    """
    loss, stats = policy_loss(
        logp,
        old_logp,
        advantages,
        response_mask,
        keep_mask,
        clip_low=clip_low,
        clip_high=clip_high,
        dual_clip_c=dual_clip_c,
    )
    stats["pg_loss"] = loss.item()
    if kl_coef > 0:
        if ref_logp is None:
            raise ValueError("kl_coef > 0 needs ref_logp (reference-policy log-probs).")
        kl = token_mean(kl_penalty(logp, ref_logp, kl_kind), response_mask)
        stats["kl"] = kl.item()
        loss = loss + kl_coef * kl
    stats["loss"] = loss.item()
    return loss, stats


def _check_same_shape(**tensors: torch.Tensor) -> None:
    shapes = {name: tuple(t.shape) for name, t in tensors.items()}
    if len(set(shapes.values())) > 1:
        raise ValueError(f"Shapes must match: {shapes}.")
