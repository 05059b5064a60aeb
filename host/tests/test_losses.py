"""Vectorised loss maths checked against readable per-token / per-episode loops (CPU, fast)."""

from __future__ import annotations

import math
import statistics

import pytest
import torch
from torch.testing import assert_close

from empo2.algo import losses
from empo2.algo.losses import (
    entropy_from_logits,
    group_advantages,
    kl_penalty,
    low_probability_mask,
    merge_stats,
    policy_loss,
    token_mean,
    total_loss,
)

SEEDS = [0, 1, 2, 3, 4]
CLIP_LOW, CLIP_HIGH, DUAL_C = 0.2, 0.3, 3.0  # c = 3 so moderate ratios already hit the dual clip


def make_batch(seed: int, rows: int = 7, length: int = 9, per_token_adv: bool = False):
    """Random right-padded batch with ratios far outside the clip range and mixed-sign advantages."""
    gen = torch.Generator().manual_seed(seed)
    logp = -3.0 * torch.rand(rows, length, generator=gen, dtype=torch.float64)
    old_logp = logp + 1.5 * torch.randn(rows, length, generator=gen, dtype=torch.float64)
    lengths = torch.randint(1, length + 1, (rows,), generator=gen)
    lengths[0] = 0  # one row with no response tokens at all
    lengths[1] = length  # one row without padding
    response_mask = torch.arange(length)[None, :] < lengths[:, None]
    keep_mask = torch.rand(rows, length, generator=gen) > 0.25
    shape = (rows, length) if per_token_adv else (rows,)
    advantages = torch.randn(shape, generator=gen, dtype=torch.float64)
    return logp, old_logp, advantages, response_mask, keep_mask


# ---------------------------------------------------------------------------------------------
# Loop references


def loop_policy_loss(logp, old_logp, advantages, response_mask, keep_mask, clip_low, clip_high, c):
    """One token at a time; returns (loss tensor with grad, branch counts)."""
    rows, length = logp.shape
    total = logp.new_zeros(())
    n_response = 0
    counts = {"unclipped": 0, "clipped": 0, "dual": 0, "masked": 0}
    for b in range(rows):
        for t in range(length):
            if not response_mask[b, t]:
                continue
            n_response += 1
            if keep_mask is not None and not keep_mask[b, t]:
                counts["masked"] += 1
                continue
            a = advantages[b] if advantages.dim() == 1 else advantages[b, t]
            ratio = torch.exp(torch.clamp(logp[b, t] - old_logp[b, t], -20.0, 20.0))
            plain = -a * ratio
            clipped = -a * torch.clamp(ratio, 1 - clip_low, 1 + clip_high)
            loss = torch.maximum(plain, clipped)
            if clipped > plain:
                counts["clipped"] += 1
            else:
                counts["unclipped"] += 1
            if a < 0 and loss > -a * c:
                loss = -a * c
                counts["dual"] += 1
            total = total + loss
    return total / max(n_response, 1), counts, n_response


def loop_group_advantages(returns, groups, normalize_std=True, eps=1e-6):
    out = []
    for i in range(len(returns)):
        members = [float(returns[j]) for j in range(len(returns)) if groups[j] == groups[i]]
        if len(members) == 1:
            out.append(0.0)
            continue
        centered = float(returns[i]) - statistics.mean(members)
        out.append(centered / (statistics.stdev(members) + eps) if normalize_std else centered)
    return torch.tensor(out, dtype=torch.float64)


# ---------------------------------------------------------------------------------------------
# Advantages


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("normalize_std", [True, False])
def test_group_advantages_matches_loop(seed, normalize_std):
    gen = torch.Generator().manual_seed(seed)
    groups = torch.tensor([7, 7, 7, 3, 3, 42, 9, 9, 9, 9, 3, 100])  # ids not contiguous, one singleton
    perm = torch.randperm(len(groups), generator=gen)
    groups = groups[perm]
    returns = 10 * torch.randn(len(groups), generator=gen, dtype=torch.float64)
    got = group_advantages(returns, groups, normalize_std=normalize_std)
    assert_close(got, loop_group_advantages(returns, groups, normalize_std))


def test_group_of_one_and_identical_returns_give_zero():
    returns = torch.tensor([5.0, 1.0, 1.0, 1.0, -3.0])
    groups = torch.tensor([0, 1, 1, 1, 2])
    adv = group_advantages(returns, groups)
    assert torch.isfinite(adv).all()
    assert_close(adv, torch.zeros(5))


def test_group_advantages_normalise_by_the_std_unless_told_not_to():
    returns, groups = torch.tensor([1.0, 0.0, 1.0, 0.0]), torch.zeros(4, dtype=torch.long)
    default = group_advantages(returns, groups)
    assert_close(default, group_advantages(returns, groups, normalize_std=True))
    assert_close(default, torch.tensor([1.0, -1.0, 1.0, -1.0]) * 0.5 / (math.sqrt(1 / 3) + 1e-6))
    pair = group_advantages(torch.tensor([1.0, 3.0]), torch.tensor([7, 7]))  # std over n - 1 = 1
    assert_close(pair, torch.tensor([-1.0, 1.0]) / (math.sqrt(2.0) + 1e-6))


def test_group_advantages_of_mismatched_shapes_are_one_clear_error():
    with pytest.raises(ValueError, match=r"must both be \(E,\), got \(4,\) and \(3,\)\.$"):
        group_advantages(torch.zeros(4), torch.zeros(3, dtype=torch.long))
    with pytest.raises(ValueError, match=r"got \(2, 2\) and \(2, 2\)"):
        group_advantages(torch.zeros(2, 2), torch.zeros(2, 2, dtype=torch.long))


def test_group_advantages_integer_returns_and_empty():
    adv = group_advantages(torch.tensor([1, 0, 1, 0]), torch.tensor([0, 0, 0, 0]))
    assert adv.dtype == torch.float32
    assert_close(adv.sum(), torch.tensor(0.0))
    assert group_advantages(torch.zeros(0), torch.zeros(0, dtype=torch.long)).numel() == 0


# ---------------------------------------------------------------------------------------------
# Low-probability mask


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("level", ["token", "step", "off"])
def test_low_probability_mask_matches_loop(seed, level):
    logp, _, _, response_mask, _ = make_batch(seed)
    logp = logp * 2.5  # spread so some tokens fall below log δ = −5 and some rows survive
    got = low_probability_mask(logp, response_mask, log_delta=-5.0, level=level)
    want = torch.zeros_like(response_mask)
    for b in range(logp.shape[0]):
        row_low = any(response_mask[b, t] and logp[b, t] < -5.0 for t in range(logp.shape[1]))
        for t in range(logp.shape[1]):
            if not response_mask[b, t]:
                continue
            if level == "token":
                want[b, t] = bool(logp[b, t] >= -5.0)
            elif level == "step":
                want[b, t] = not row_low
            else:
                want[b, t] = True
    assert torch.equal(got, want)
    if level != "off":
        assert (response_mask & ~got).any(), "the test data should drop something"


def test_step_mask_ignores_padding_below_delta():
    logp = torch.tensor([[-1.0, -50.0], [-60.0, -1.0]])
    response_mask = torch.tensor([[True, False], [True, True]])
    got = low_probability_mask(logp, response_mask, level="step")
    assert torch.equal(got, torch.tensor([[True, False], [False, False]]))


def test_the_default_mask_is_the_papers_token_level_at_log_delta_minus_5():
    logp = torch.tensor([[-4.99, -5.0, -5.01, -0.1], [-9.0, -1.0, -2.0, -3.0]])
    response_mask = torch.ones(2, 4, dtype=torch.bool)
    got = low_probability_mask(logp, response_mask)
    assert torch.equal(got, low_probability_mask(logp, response_mask, -5.0, level="token"))
    assert torch.equal(got, torch.tensor([[True, True, False, True], [False, True, True, True]]))


def test_a_mask_of_another_shape_is_one_clear_error():
    with pytest.raises(ValueError, match="Shapes must match"):
        low_probability_mask(torch.zeros(2, 3), torch.ones(2, 4, dtype=torch.bool))
    with pytest.raises(ValueError, match="Shapes must match"):
        kl_penalty(torch.zeros(2, 3), torch.zeros(2, 4))


def test_unknown_level_is_one_clear_error():
    with pytest.raises(ValueError, match="choose one of"):
        low_probability_mask(torch.zeros(1, 1), torch.ones(1, 1, dtype=torch.bool), level="sequence")


# ---------------------------------------------------------------------------------------------
# Policy loss


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("per_token_adv", [False, True])
@pytest.mark.parametrize("use_keep", [True, False])
def test_policy_loss_value_and_grad_match_loop(seed, per_token_adv, use_keep):
    logp, old_logp, advantages, response_mask, keep_mask = make_batch(seed, per_token_adv=per_token_adv)
    keep = keep_mask if use_keep else None

    logp_vec = logp.clone().requires_grad_(True)
    loss, stats = policy_loss(logp_vec, old_logp, advantages, response_mask, keep, CLIP_LOW, CLIP_HIGH, DUAL_C)
    loss.backward()

    logp_loop = logp.clone().requires_grad_(True)
    want, counts, n_response = loop_policy_loss(
        logp_loop, old_logp, advantages, response_mask, keep, CLIP_LOW, CLIP_HIGH, DUAL_C
    )
    want.backward()

    assert_close(loss, want)
    assert_close(logp_vec.grad, logp_loop.grad)
    # Every branch was exercised, so the comparison above means something.
    assert counts["unclipped"] > 0 and counts["clipped"] > 0 and counts["dual"] > 0
    assert stats["clip_fraction"] == pytest.approx(counts["clipped"] / n_response)
    assert stats["dual_clip_fraction"] == pytest.approx(counts["dual"] / n_response)
    assert stats["masked_fraction"] == pytest.approx(counts["masked"] / n_response)
    assert (counts["masked"] > 0) == use_keep


@pytest.mark.parametrize("seed", SEEDS[:2])
def test_policy_loss_ratio_stats_match_loop(seed):
    logp, old_logp, advantages, response_mask, keep_mask = make_batch(seed)
    _, stats = policy_loss(logp, old_logp, advantages, response_mask, keep_mask)
    ratios, kls = [], []
    for b in range(logp.shape[0]):
        for t in range(logp.shape[1]):
            if response_mask[b, t]:
                ratios.append(math.exp(float(logp[b, t] - old_logp[b, t])))
                kls.append(float(old_logp[b, t] - logp[b, t]))
    assert stats["ratio_mean"] == pytest.approx(statistics.mean(ratios))
    assert stats["ratio_min"] == pytest.approx(min(ratios))
    assert stats["ratio_max"] == pytest.approx(max(ratios))
    assert stats["ratio_std"] == pytest.approx(statistics.pstdev(ratios))
    assert stats["approx_kl_old"] == pytest.approx(statistics.mean(kls))
    assert all(isinstance(v, float) for v in stats.values())


def test_masked_and_padded_tokens_get_zero_gradient():
    logp, old_logp, advantages, response_mask, keep_mask = make_batch(11)
    logp = logp.requires_grad_(True)
    loss, _ = policy_loss(logp, old_logp, advantages, response_mask, keep_mask)
    loss.backward()
    dropped = ~(response_mask & keep_mask)
    assert torch.all(logp.grad[dropped] == 0)
    assert torch.any(logp.grad[~dropped] != 0)


def test_masked_tokens_stay_in_denominator():
    # Two response tokens, one dropped: loss = (−A·r of the kept token) / 2, not / 1.
    logp = torch.zeros(1, 2, requires_grad=True)
    loss, stats = policy_loss(
        logp,
        torch.zeros(1, 2),
        torch.tensor([1.0]),
        torch.ones(1, 2, dtype=torch.bool),
        keep_mask=torch.tensor([[True, False]]),
    )
    assert_close(loss, torch.tensor(-0.5))
    assert stats["masked_fraction"] == 0.5


def test_padding_garbage_never_leaks():
    logp = torch.tensor([[-1.0, float("nan")]], requires_grad=True)
    old_logp = torch.tensor([[-1.0, float("inf")]])
    loss, _ = policy_loss(logp, old_logp, torch.tensor([1.0]), torch.tensor([[True, False]]))
    loss.backward()
    assert torch.isfinite(loss) and torch.isfinite(logp.grad).all()


def test_empty_batch_gives_zero_loss_not_nan():
    logp = torch.zeros(2, 3, requires_grad=True)
    loss, stats = policy_loss(logp, torch.zeros(2, 3), torch.ones(2), torch.zeros(2, 3, dtype=torch.bool))
    loss.backward()
    assert loss.item() == 0.0 and torch.all(logp.grad == 0)
    assert all(math.isfinite(v) for v in stats.values())
    assert {k: stats[k] for k in ("ratio_mean", "ratio_min", "ratio_max", "ratio_std")} == {
        "ratio_mean": 0.0,
        "ratio_min": 0.0,
        "ratio_max": 0.0,
        "ratio_std": 0.0,
    }


def test_bad_dual_clip_and_shapes_are_clear_errors():
    x = torch.zeros(2, 3)
    mask = torch.ones(2, 3, dtype=torch.bool)
    with pytest.raises(ValueError, match="dual_clip_c"):
        policy_loss(x, x, torch.ones(2), mask, dual_clip_c=1.0)
    with pytest.raises(ValueError, match="Shapes must match"):
        policy_loss(x, torch.zeros(2, 4), torch.ones(2), mask)
    with pytest.raises(ValueError, match="Shapes must match"):  # each of the three is checked
        policy_loss(torch.zeros(2, 4), x, torch.ones(2), mask)
    with pytest.raises(ValueError, match="Shapes must match"):
        policy_loss(x, x, torch.ones(2), torch.ones(2, 4, dtype=torch.bool))
    with pytest.raises(ValueError, match="advantages"):
        policy_loss(x, x, torch.ones(3), mask)


# ---------------------------------------------------------------------------------------------
# KL, token mean, entropy, composition


def loop_kl(lp: float, ref: float, kind: str) -> float:
    if kind in ("kl", "k1"):
        return lp - ref
    if kind in ("mse", "k2"):
        return 0.5 * (lp - ref) ** 2
    log_ratio = min(max(ref - lp, -20.0), 20.0)
    return min(max(math.exp(log_ratio) - log_ratio - 1.0, -10.0), 10.0)


@pytest.mark.parametrize("seed", SEEDS[:3])
@pytest.mark.parametrize("kind", ["low_var_kl", "kl", "mse", "k1", "k2", "k3"])
def test_kl_penalty_matches_loop(seed, kind):
    logp, ref_logp, _, _, _ = make_batch(seed)
    ref_logp = ref_logp * 3  # some tokens push k3 past its clamp at 10
    got = kl_penalty(logp, ref_logp, kind)
    want = torch.tensor(
        [
            [loop_kl(float(logp[b, t]), float(ref_logp[b, t]), kind) for t in range(logp.shape[1])]
            for b in range(logp.shape[0])
        ],
        dtype=torch.float64,
    )
    assert_close(got, want)
    if kind in ("low_var_kl", "k3"):
        assert (got == 10.0).any(), "the clamp should be exercised"


def test_the_default_kl_is_low_var_kl():
    logp, ref_logp, _, _, _ = make_batch(0)
    assert torch.equal(kl_penalty(logp, ref_logp), kl_penalty(logp, ref_logp, "k3"))
    assert not torch.equal(kl_penalty(logp, ref_logp), kl_penalty(logp, ref_logp, "k1"))


def test_kl_unknown_kind():
    with pytest.raises(ValueError, match="choose one of"):
        kl_penalty(torch.zeros(1, 1), torch.zeros(1, 1), "abs")


@pytest.mark.parametrize("seed", SEEDS[:3])
def test_token_mean_matches_loop(seed):
    values, _, _, mask, _ = make_batch(seed)
    picked = [float(values[b, t]) for b in range(values.shape[0]) for t in range(values.shape[1]) if mask[b, t]]
    assert_close(token_mean(values, mask), torch.tensor(statistics.mean(picked), dtype=torch.float64))


def test_token_mean_empty_mask_is_zero():
    values = torch.full((2, 3), float("nan"), requires_grad=True)
    out = token_mean(values, torch.zeros(2, 3, dtype=torch.bool))
    out.backward()
    assert out.item() == 0.0 and torch.all(values.grad == 0)


@pytest.mark.parametrize("seed", SEEDS[:3])
def test_entropy_matches_loop(seed):
    gen = torch.Generator().manual_seed(seed)
    logits = 4 * torch.randn(3, 5, 11, generator=gen, dtype=torch.float64)
    want = torch.empty(3, 5, dtype=torch.float64)
    for b in range(3):
        for t in range(5):
            z = [float(v) for v in logits[b, t]]
            top = max(z)
            norm = sum(math.exp(v - top) for v in z)
            probs = [math.exp(v - top) / norm for v in z]
            want[b, t] = -sum(p * math.log(p) for p in probs if p > 0)
    assert_close(entropy_from_logits(logits), want)


def test_entropy_large_and_banned_logits_are_finite():
    logits = torch.tensor([[[1e4, 1e4, -1e4], [0.0, float("-inf"), 0.0]]], requires_grad=True)
    ent = entropy_from_logits(logits)
    ent.sum().backward()
    assert_close(ent, torch.tensor([[math.log(2), math.log(2)]]))
    assert torch.isfinite(logits.grad).all()


def test_total_loss_adds_kl_only_when_coef_positive():
    logp, old_logp, advantages, response_mask, keep_mask = make_batch(5)
    ref_logp = old_logp + 0.1
    pg, _ = policy_loss(logp, old_logp, advantages, response_mask, keep_mask)
    plain, stats = total_loss(logp, old_logp, advantages, response_mask, keep_mask)
    assert_close(plain, pg) and "kl" not in stats
    mixed, stats = total_loss(logp, old_logp, advantages, response_mask, keep_mask, ref_logp=ref_logp, kl_coef=0.01)
    want = pg + 0.01 * token_mean(kl_penalty(logp, ref_logp, "low_var_kl"), response_mask)
    assert_close(mixed, want)
    assert stats["loss"] == pytest.approx(want.item())
    with pytest.raises(ValueError, match=r"^kl_coef > 0 needs ref_logp \(reference-policy log-probs\)\.$"):
        total_loss(logp, old_logp, advantages, response_mask, kl_coef=0.01)


def test_total_loss_passes_its_clip_bounds_to_the_surrogate():
    """Bounds far from the defaults (ε_low 0.2, ε_high 0.3, c 10) reach policy_loss."""
    logp, old_logp, advantages, response_mask, keep_mask = make_batch(6)
    bounds = dict(clip_low=0.02, clip_high=0.03, dual_clip_c=1.5)
    want, want_stats = policy_loss(logp, old_logp, advantages, response_mask, keep_mask, **bounds)
    got, stats = total_loss(logp, old_logp, advantages, response_mask, keep_mask, **bounds)
    default, _ = policy_loss(logp, old_logp, advantages, response_mask, keep_mask)
    assert_close(got, want)
    assert stats["clip_fraction"] == want_stats["clip_fraction"] and stats["clip_fraction"] > 0
    for one in ("clip_low", "clip_high"):  # each bound alone changes the loss
        alone, _ = policy_loss(
            logp,
            old_logp,
            advantages,
            response_mask,
            keep_mask,
            **{**bounds, one: losses.DEFAULTS.__getattribute__(one)},
        )
        assert abs(alone.item() - want.item()) > 1e-6, one
    assert abs(default.item() - want.item()) > 1e-6


def test_registries_list_documented_variants():
    assert set(losses.KEEP_MASK_LEVELS) == {"token", "step", "off"}
    assert {"low_var_kl", "kl", "mse"} <= set(losses.KL_PENALTIES)


def test_merged_statistics_sum_by_weight_and_keep_the_ratio_extremes():
    """Micro-batches (weights = token shares) and ranks (weight 1) combine the same way."""
    total: dict[str, float] = {}
    merge_stats(total, {"loss": 1.0, "ratio_max": 2.0, "ratio_min": 0.5}, 0.25)
    merge_stats(total, {"loss": 3.0, "ratio_max": 1.5, "ratio_min": 0.8}, 0.75)
    assert total == {"loss": 2.5, "ratio_max": 2.0, "ratio_min": 0.5}
    merge_stats(total, {"loss": 1.0, "ratio_max": 4.0, "ratio_min": 0.1})
    assert total == {"loss": 3.5, "ratio_max": 4.0, "ratio_min": 0.1}


def test_the_log_ratio_is_clamped_to_plus_minus_20_before_exp():
    """Decision 5: an extreme off-policy ratio cannot overflow; beyond ±20 it is exp(±20)."""
    logp = torch.tensor([[30.0, -30.0, 20.5, -20.5, 1.0]], dtype=torch.float64)
    _, stats = policy_loss(
        logp, torch.zeros_like(logp), torch.ones(1, dtype=torch.float64), torch.ones_like(logp, dtype=torch.bool)
    )
    assert stats["ratio_max"] == pytest.approx(math.exp(20.0), rel=1e-12)
    assert stats["ratio_min"] == pytest.approx(math.exp(-20.0), rel=1e-12)


def test_the_loss_keeps_the_log_probs_dtype_whatever_the_advantages_dtype():
    """The advantages are cast to the log-probs' dtype: float64 returns (the group statistics of
    a caller that computes them in double) must not turn a float32 surrogate, and its gradient
    through the whole model, into float64; nor promote bf16 log-probs to float32."""
    logp, old_logp, advantages, response_mask, keep_mask = make_batch(3)
    for dtype in (torch.float32, torch.bfloat16):
        low = logp.to(dtype).requires_grad_(True)
        loss, _ = policy_loss(low, old_logp.to(dtype), advantages.double(), response_mask, keep_mask)
        assert loss.dtype == dtype
        loss.backward()
        assert low.grad.dtype == dtype


def test_the_dual_clip_fraction_counts_only_tokens_the_dual_clip_changes():
    """dual_clip_fraction counts the tokens whose loss the dual clip lowers. A token whose
    surrogate sits exactly on the bound −A·c (here r = 3 = c, A = −1; exp(log 3) is 3.0 in
    float32) loses nothing to it and is not counted; one above the bound is."""
    logp = torch.tensor([[math.log(3.0), math.log(4.0)]], dtype=torch.float32)
    assert torch.exp(logp[0, 0]).item() == 3.0
    loss, stats = policy_loss(
        logp, torch.zeros_like(logp), torch.tensor([-1.0]), torch.ones_like(logp, dtype=torch.bool), dual_clip_c=3.0
    )
    assert_close(loss, torch.tensor(3.0))  # both tokens at the bound: (3 + 3) / 2
    assert stats["dual_clip_fraction"] == 0.5
