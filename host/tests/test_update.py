"""The update's choices, pinned one by one (docs/paper.md §3, paper Table 3; update.py's table).

Each test here guards a choice that an end-to-end run cannot see (a run compared with another run
of the same code): which prompt each log-prob is scored under in each update mode, that π_old is
recomputed rather than taken from the sampler, and which log-prob the low-probability mask tests.
They run the real tiny built-in policy on hand-made episodes (update_episodes.py), so each prompt
is known exactly; how recorded actions are scored is in test_update_scoring.py.
"""

from __future__ import annotations

import dataclasses
import math

import pytest
import torch

from empo2.algo.losses import kl_penalty, token_mean
from empo2.config import CHOICES, AlgoConfig
from empo2.policy.generation import sequence_logprobs
from empo2.policy.model import load_policy
from empo2.training.rollout import MEMORY_FREE, Episode
from empo2.training.update import (
    OFF_POLICY,
    ON_POLICY,
    ON_POLICY_WITH_TIPS,
    UPDATE_MODES,
    build_samples,
    dry_run_loss,
    episode_returns,
    update_policy,
)
from update_episodes import action_logprobs, make_episodes

OLD_LOGPROB_SETTINGS = CHOICES["algo.off_policy_old_logprob"]


@pytest.fixture(scope="module")
def policy(tiny_policy):
    model, tokenizer = load_policy(str(tiny_policy), device="cpu", dtype="float32")
    return model.eval(), tokenizer


# The module table of update.py, row by row: which recorded prompt each log-prob is scored under.
# "rollout" is the prompt the action was sampled from (with tips in memory mode), "no_tips" the
# same turn without the tip block. On-policy rollouts are memory-free, so there both are one.
EXPECTED_PROMPTS = {
    (ON_POLICY, "with_tips"): ("rollout", "rollout"),
    (ON_POLICY, "without_tips"): ("rollout", "rollout"),
    (ON_POLICY_WITH_TIPS, "with_tips"): ("rollout", "rollout"),
    (ON_POLICY_WITH_TIPS, "without_tips"): ("rollout", "rollout"),
    (OFF_POLICY, "with_tips"): ("no_tips", "rollout"),
    (OFF_POLICY, "without_tips"): ("no_tips", "no_tips"),
}


def test_the_table_covers_every_mode_and_setting():
    assert set(EXPECTED_PROMPTS) == {(m, o) for m in UPDATE_MODES for o in OLD_LOGPROB_SETTINGS}


@pytest.mark.parametrize("mode,old_setting", sorted(EXPECTED_PROMPTS))
def test_build_samples_scores_each_prompt_as_the_table_says(policy, mode, old_setting):
    _, tokenizer = policy
    episodes = make_episodes(tokenizer, mode)
    skipped = episodes[1].steps[0]
    skipped.action_ids, skipped.behaviour_logprobs = [], []  # an empty action is no sample
    algo = AlgoConfig(off_policy_old_logprob=old_setting)
    samples = build_samples(episodes, mode, algo)

    steps = [(e, s) for e, ep in enumerate(episodes) for s in ep.steps if s.action_ids]
    assert len(samples) == len(steps) == 7
    numerator_role, old_role = EXPECTED_PROMPTS[(mode, old_setting)]
    for sample, (e, step) in zip(samples, steps):
        prompt = {"rollout": step.prompt_ids, "no_tips": step.prompt_ids_no_tips}
        assert sample.episode == e
        assert sample.numerator_prompt == prompt[numerator_role]
        assert sample.old_prompt == prompt[old_role]
        assert sample.no_tip_prompt == step.prompt_ids_no_tips  # what the mask tests
        assert sample.action == step.action_ids and sample.behaviour == step.behaviour_logprobs
        if mode != ON_POLICY:
            assert step.prompt_ids != step.prompt_ids_no_tips  # the rows above tell them apart


def test_an_episode_returns_its_scaled_score_plus_the_coefficient_times_its_mean_novelty(policy):
    """update.py choice 1: reward_scale · Σ rewards + intrinsic_coef · mean_t r_int, the mean
    over the episode's own steps (an episode without steps returns 0)."""
    episodes = make_episodes(policy[1], ON_POLICY)
    for ep, rewards, novelty in zip(episodes, ([1.0, 2.0], [0.0], [], [0.0, 0.0]), ([1.0, 0.5], [1.0], [], [0.0, 0.0])):
        ep.steps = ep.steps[: len(rewards)]
        for step, reward, r_int in zip(ep.steps, rewards, novelty):
            step.reward, step.intrinsic = reward, r_int
    returns = episode_returns(episodes, AlgoConfig(reward_scale=0.5, intrinsic_coef=2.0))
    assert returns.dtype == torch.float32
    assert returns.tolist() == [0.5 * 3.0 + 2.0 * 0.75, 2.0 * 1.0, 0.0, 0.0]


def test_build_samples_refuses_an_unknown_mode(policy):
    with pytest.raises(ValueError, match="unknown update mode"):
        build_samples(make_episodes(policy[1], OFF_POLICY), "offpolicy", AlgoConfig())


def one_step_update(
    policy,
    mode: str,
    behaviour: float | None = None,
    reference_model=None,
    micro_batch: int = 1,
    optimizer_steps: list | None = None,
    episodes=None,
    **algo,
) -> dict:
    """One epoch, one minibatch: the only optimizer step comes after every ratio is measured, so
    the ratios and the mask are those of the policy that π_old was scored with. (algo can ask
    for more; `optimizer_steps` then collects one entry per optimizer step.) `episodes`: a
    function of the tokenizer that makes them (default make_episodes for `mode`)."""
    model, tokenizer = policy
    snapshot = {k: v.clone() for k, v in model.state_dict().items()}
    config = dataclasses.replace(AlgoConfig(minibatches=1, ppo_epochs=1, lr=1e-3), **algo)
    optimizer = torch.optim.AdamW(model.parameters(), lr=config.lr)
    if optimizer_steps is not None:
        optimizer.register_step_post_hook(lambda *_: optimizer_steps.append(1))
    try:
        made = episodes(tokenizer) if episodes else make_episodes(tokenizer, mode, behaviour)
        return update_policy(
            model,
            optimizer,
            made,
            mode,
            config,
            tokenizer.pad_token_id,
            torch.Generator().manual_seed(0),
            reference_model=reference_model,
            micro_batch=micro_batch,
        )
    finally:
        model.load_state_dict(snapshot)  # the module's model stays the built policy
        model.eval()


RATIO_TOLERANCE = 1e-5  # float32 noise of scoring one row twice; a wrong prompt moves it by >1e-2


@pytest.mark.parametrize("mode", [ON_POLICY, ON_POLICY_WITH_TIPS])
@pytest.mark.parametrize("behaviour", [-1.0, -9.0])
def test_on_policy_ratios_are_exactly_one_whatever_the_sampler_recorded(policy, mode, behaviour):
    """π_old is recomputed under the numerator's prompt before the first step (update.py choice
    2), so the recorded behaviour log-probs (here deliberately wrong) never enter the ratio."""
    stats = one_step_update(policy, mode, behaviour=behaviour)
    assert stats["update_samples"] == 8
    assert abs(stats["ratio_max"] - 1) < RATIO_TOLERANCE
    assert abs(stats["ratio_min"] - 1) < RATIO_TOLERANCE
    assert abs(stats["approx_kl_old"]) < RATIO_TOLERANCE


def test_off_policy_ratios_compare_no_tips_with_tips(policy):
    """Table 3: the numerator drops the tips, π_old keeps them, so ratios leave 1 at once (not
    only after a first optimizer step, as with several minibatches)."""
    stats = one_step_update(policy, OFF_POLICY)
    assert max(stats["ratio_max"] - 1, 1 - stats["ratio_min"]) > 1e-2


def test_off_policy_without_tips_option_scores_both_sides_without_tips(policy):
    stats = one_step_update(policy, OFF_POLICY, off_policy_old_logprob="without_tips")
    assert abs(stats["ratio_max"] - 1) < RATIO_TOLERANCE
    assert abs(stats["ratio_min"] - 1) < RATIO_TOLERANCE


def separating_delta(no_tips: torch.Tensor, tips: torch.Tensor) -> float:
    """A log δ, away from every value, below which the two prompts' tokens count differently."""
    values = torch.cat([no_tips, tips]).sort().values
    best, gap = None, 0.0
    for low, high in zip(values[:-1], values[1:]):
        delta = float((low + high) / 2)
        if int((no_tips < delta).sum()) != int((tips < delta).sum()) and float(high - low) > gap:
            best, gap = delta, float(high - low)
    assert best is not None and gap > 1e-3, "tips must change some token's log-prob"
    return best


@pytest.mark.parametrize("mode", UPDATE_MODES)
def test_the_mask_tests_the_policy_without_tips_in_every_mode(policy, mode):
    """Eq. 2: a token is dropped when π_θ(a | s) *without* tips is below δ, also when the
    numerator has tips (on-policy-with-tips recomputes it). The δ is chosen so that testing the
    prompt with tips would drop a different number of tokens."""
    episodes = make_episodes(policy[1], ON_POLICY_WITH_TIPS)
    no_tips = action_logprobs(policy, episodes, with_tips_prompt=False)
    tips = action_logprobs(policy, episodes, with_tips_prompt=True)
    delta = separating_delta(no_tips, tips)
    stats = one_step_update(policy, mode, mask_log_delta=delta)
    expected = float((no_tips < delta).float().mean())
    assert expected != pytest.approx(float((tips < delta).float().mean()))
    # (on-policy rollouts are memory-free: their one prompt is the no-tips prompt)
    assert stats["masked_fraction"] == pytest.approx(expected, abs=1e-6)


@pytest.mark.parametrize("mode", UPDATE_MODES)
def test_the_behaviour_variant_masks_on_the_recorded_logprobs(policy, mode):
    """mask_logprob=behaviour (the reference code): the sampler's log-probs decide alone."""
    kept = one_step_update(policy, mode, behaviour=-1.0, mask_logprob="behaviour", mask_log_delta=-5.0)
    dropped = one_step_update(policy, mode, behaviour=-9.0, mask_logprob="behaviour", mask_log_delta=-5.0)
    assert kept["masked_fraction"] == 0.0
    assert dropped["masked_fraction"] == pytest.approx(1.0, abs=1e-6)


def test_mask_off_keeps_every_token(policy):
    stats = one_step_update(policy, ON_POLICY_WITH_TIPS, behaviour=-9.0, low_prob_mask="off", mask_logprob="behaviour")
    assert stats["masked_fraction"] == 0.0


@pytest.mark.parametrize("mode", UPDATE_MODES)
def test_mask_scope_memory_masks_only_updates_of_memory_rollouts(policy, mode):
    """algo.mask_scope=memory (the reference code masks only where tips are in use): plain
    on-policy updates keep every token; updates of memory rollouts mask as with scope 'all'."""
    everywhere = one_step_update(policy, mode, behaviour=-9.0, mask_logprob="behaviour")
    scoped = one_step_update(policy, mode, behaviour=-9.0, mask_logprob="behaviour", mask_scope="memory")
    assert everywhere["masked_fraction"] == pytest.approx(1.0, abs=1e-6)
    assert scoped["masked_fraction"] == (0.0 if mode == "on-policy" else everywhere["masked_fraction"])


def contrast_episodes(tokenizer, mode: str, behaviour: float | None = None) -> list[Episode]:
    """make_episodes' two groups as algo.memory_contrast=half plays them: each group's second
    episode without tips (its prompt is the prompt without the block)."""
    episodes = make_episodes(tokenizer, mode, behaviour)
    for ep in episodes[1::2]:
        ep.rollout_mode = MEMORY_FREE
        for s in ep.steps:
            s.prompt_ids, s.tips = s.prompt_ids_no_tips, []
    return episodes


@pytest.mark.parametrize("mode", [OFF_POLICY, ON_POLICY_WITH_TIPS])
@pytest.mark.parametrize("old_setting", OLD_LOGPROB_SETTINGS)
def test_a_contrast_groups_tip_free_half_is_scored_on_policy(policy, mode, old_setting):
    """update.py choice 4: in a memory iteration with algo.memory_contrast=half the tip-free
    rollouts are on-policy samples (both log-probs without tips) whatever the iteration's mode;
    the tip half follows the table."""
    samples = build_samples(contrast_episodes(policy[1], mode), mode, AlgoConfig(off_policy_old_logprob=old_setting))
    free = [s for s in samples if not s.with_tips]
    tipped = [s for s in samples if s.with_tips]
    assert len(free) == len(tipped) == 4
    assert all(s.numerator_prompt == s.old_prompt == s.no_tip_prompt for s in free)
    numerator, old = EXPECTED_PROMPTS[(mode, old_setting)]
    assert all((s.numerator_prompt == s.no_tip_prompt) == (numerator == "no_tips") for s in tipped)
    assert all((s.old_prompt == s.no_tip_prompt) == (old == "no_tips") for s in tipped)


@pytest.mark.parametrize("mode", [OFF_POLICY, ON_POLICY_WITH_TIPS])
def test_mask_scope_memory_leaves_a_contrast_groups_tip_free_half_unmasked(policy, mode):
    """With mask_scope=memory the mask covers the rollouts with tips only: the tip-free half of
    a contrast group is unmasked, as a plain on-policy update is (before, the whole iteration
    was masked because its mode was a memory mode)."""

    def make(tokenizer):
        return contrast_episodes(tokenizer, mode, behaviour=-9.0)

    tokens = sum(len(s.action_ids) for ep in make(policy[1]) for s in ep.steps)
    tipped = sum(len(s.action_ids) for ep in make(policy[1])[0::2] for s in ep.steps)
    everywhere = one_step_update(policy, mode, episodes=make, mask_logprob="behaviour")
    scoped = one_step_update(policy, mode, episodes=make, mask_logprob="behaviour", mask_scope="memory")
    assert everywhere["masked_fraction"] == pytest.approx(1.0, abs=1e-6)
    assert scoped["masked_fraction"] == pytest.approx(tipped / tokens, abs=1e-6)


def step_level_delta(rows: list[torch.Tensor]) -> float:
    """A log δ, away from every value, with a token below it and one above it in the same step,
    so that dropping whole steps drops more tokens than dropping single tokens."""
    values = torch.cat(rows).sort().values
    best, gap = None, 0.0
    for low, high in zip(values[:-1], values[1:]):
        delta = float((low + high) / 2)
        split = any(bool((r < delta).any() and (r >= delta).any()) for r in rows)
        if split and float(high - low) > gap:
            best, gap = delta, float(high - low)
    assert best is not None and gap > 1e-3, "some step must hold tokens on both sides of δ"
    return best


@pytest.mark.parametrize("mode", UPDATE_MODES)
def test_the_step_level_drops_every_token_of_a_step_with_one_low_token(policy, mode):
    """algo.low_prob_mask=step (the reference code): one token of π_θ(a | s) without tips below δ
    drops its whole step — the level reaches the mask in every mode, and the tested log-probs are
    the no-tips ones."""
    model, tokenizer = policy
    from empo2.policy.generation import sequence_logprobs

    episodes = make_episodes(tokenizer, ON_POLICY_WITH_TIPS)
    steps = [s for ep in episodes for s in ep.steps]
    with torch.no_grad():
        logp, _, mask = sequence_logprobs(
            model,
            [s.prompt_ids_no_tips for s in steps],
            [s.action_ids for s in steps],
            with_entropy=False,
            pad_id=tokenizer.pad_token_id,
        )
    rows = [logp[i][mask[i]] for i in range(len(steps))]
    delta = step_level_delta(rows)
    dropped_steps = sum(len(r) for r in rows if bool((r < delta).any()))
    dropped_tokens = sum(int((r < delta).sum()) for r in rows)
    total = sum(len(r) for r in rows)
    assert dropped_steps > dropped_tokens  # the two levels tell apart on this δ
    stats = one_step_update(policy, mode, mask_log_delta=delta, low_prob_mask="step")
    assert stats["masked_fraction"] == pytest.approx(dropped_steps / total, abs=1e-6)


def forward_passes(policy, mode: str, **algo) -> int:
    """How many forward passes of the policy one single-minibatch update makes (micro-batch 1:
    one pass per sample and scoring)."""
    model, _ = policy
    calls = []
    hook = model.register_forward_hook(lambda *_: calls.append(1))
    try:
        one_step_update(policy, mode, **algo)
    finally:
        hook.remove()
    return len(calls)


def test_with_the_mask_off_no_pass_scores_the_prompt_without_tips(policy):
    """on-policy-with-tips scores each sample twice (π_old, π_θ), and a third time without tips
    only for the mask; with the mask off that third pass (a third of the update's forward
    compute) is not made."""
    samples = 8
    assert forward_passes(policy, ON_POLICY_WITH_TIPS) == 3 * samples
    assert forward_passes(policy, ON_POLICY_WITH_TIPS, low_prob_mask="off") == 2 * samples


# Statistics that the update's token-weighted merge over micro-batches makes equal to one pass
# over all samples (ratio_std is merged as a weighted mean of stds, so it is left out).
SAME_STATS = (
    "pg_loss",
    "loss",
    "masked_fraction",
    "approx_kl_old",
    "clip_fraction",
    "dual_clip_fraction",
    "ratio_mean",
    "ratio_max",
    "ratio_min",
    "update_samples",
    "advantage_abs_mean",
)


# Two settings of the loss's options, each far from the defaults so that a dropped option shows:
# the paper's mask on a δ that drops some tokens, and the reference code's mask on the sampler's
# log-probs with narrow clips, a low dual clip and advantages without the std normalisation.
DRY_RUN_SETTINGS = {
    "paper-mask": dict(clip_low=0.1, clip_high=0.1),
    "behaviour-mask-narrow-clips": dict(
        mask_logprob="behaviour",
        mask_log_delta=-5.0,
        clip_low=0.01,
        clip_high=0.02,
        dual_clip_c=1.01,
        advantage_std_norm=False,
    ),
}


@pytest.mark.parametrize("setting", sorted(DRY_RUN_SETTINGS))
@pytest.mark.parametrize("mode", UPDATE_MODES)
def test_the_dry_run_reports_the_loss_the_first_step_optimises(policy, mode, setting):
    """The rerun's dry run is the update without its step: over the same episodes, the same
    prompts, π_old, mask, clips and advantages give the statistics of a one-minibatch update,
    and its per-token ratios are exp(numerator − π_old) of each sample."""
    model, tokenizer = policy
    options = dict(DRY_RUN_SETTINGS[setting])
    if setting == "paper-mask":
        tipped = make_episodes(tokenizer, ON_POLICY_WITH_TIPS)  # a δ that masks some tokens
        options["mask_log_delta"] = separating_delta(
            action_logprobs(policy, tipped, with_tips_prompt=False),
            action_logprobs(policy, tipped, with_tips_prompt=True),
        )
    episodes = make_episodes(tokenizer, mode)
    algo = dataclasses.replace(AlgoConfig(minibatches=1, ppo_epochs=1), **options)
    dry = dry_run_loss(model, episodes, mode, algo, tokenizer.pad_token_id)
    stepped = one_step_update(policy, mode, **options)
    for key in SAME_STATS:
        assert dry["stats"][key] == pytest.approx(stepped[key], abs=1e-5), key
    assert dry["samples"] == [0, 0, 1, 1, 2, 2, 3, 3]
    samples = build_samples(episodes, mode, algo)
    assert [len(r) for r in dry["ratios"]] == [len(s.action) for s in samples]
    ratios = torch.tensor([x for r in dry["ratios"] for x in r])
    if mode == OFF_POLICY:  # no tips over tips: Table 3's ratio, not 1
        assert float((ratios - 1).abs().max()) > 1e-2
        if setting != "paper-mask":  # the narrow clips are in use
            assert dry["stats"]["clip_fraction"] > 0 and dry["stats"]["dual_clip_fraction"] > 0
    else:
        assert float((ratios - 1).abs().max()) < RATIO_TOLERANCE


def test_an_update_without_actions_reports_no_samples_and_takes_no_step(policy):
    model, tokenizer = policy
    episodes = make_episodes(tokenizer, OFF_POLICY)
    for ep in episodes:
        for s in ep.steps:
            s.action_ids, s.behaviour_logprobs = [], []
    before = {k: v.clone() for k, v in model.state_dict().items()}
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    stats = update_policy(
        model, optimizer, episodes, OFF_POLICY, AlgoConfig(), tokenizer.pad_token_id, torch.Generator().manual_seed(0)
    )
    assert stats == {"update_samples": 0.0}
    assert all(torch.equal(v, before[k]) for k, v in model.state_dict().items())


def test_a_dry_run_of_no_actions_has_no_samples(policy):
    episodes = make_episodes(policy[1], OFF_POLICY)
    for ep in episodes:
        for s in ep.steps:
            s.action_ids, s.behaviour_logprobs = [], []
    dry = dry_run_loss(policy[0], episodes, OFF_POLICY, AlgoConfig(), policy[1].pad_token_id)
    assert dry == {"stats": {"update_samples": 0.0}, "ratios": [], "samples": []}


def test_the_kl_term_scores_the_reference_under_the_numerators_prompt(policy):
    """algo.kl_beta > 0: the reference is scored once, with no grad, under the numerator's prompt
    (off-policy: without tips), so a reference equal to the policy gives a KL of exactly 0 (under
    π_old's prompt with tips it would not: see the off-policy ratios above); with kl_beta = 0 the
    reference is never run."""
    import copy

    reference = copy.deepcopy(policy[0]).eval()
    calls = []
    hook = reference.register_forward_hook(lambda *_: calls.append(1))
    try:
        stats = one_step_update(policy, OFF_POLICY, reference_model=reference, micro_batch=8, kl_beta=0.1)
        assert len(calls) == 1  # all 8 samples in one micro-batch (prompts padded)
        assert stats["kl"] == pytest.approx(0.0, abs=1e-6)
        calls.clear()
        unused = one_step_update(policy, OFF_POLICY, reference_model=reference, kl_beta=0.0)
        assert calls == [] and "kl" not in unused
    finally:
        hook.remove()


def test_minibatches_and_epochs_set_the_number_of_optimizer_steps(policy):
    steps = []
    one_step_update(policy, ON_POLICY, optimizer_steps=steps, minibatches=2, ppo_epochs=3)
    assert len(steps) == 2 * 3
    steps.clear()
    stats = one_step_update(
        policy, ON_POLICY, optimizer_steps=steps, minibatches=8, ppo_epochs=1, behaviour=-9.0, mask_logprob="behaviour"
    )
    assert len(steps) == 8  # one sample per minibatch
    assert stats["masked_fraction"] == pytest.approx(1.0)  # the mean over the steps, each 1


@pytest.mark.parametrize(
    "prompts,group,epochs,expected",
    [
        (1, 2, 1, 4),  # 2 rows per step: 8 samples (4 episodes × 2 steps) make 4 steps
        (3, 2, 1, 2),  # 6 rows per step: 6 + 2
        (1, 2, 2, 8),  # every epoch takes its own steps
        (1, 8, 1, 1),  # the paper's group of 8: one prompt's rows hold the whole batch
    ],
)
def test_minibatch_prompts_takes_one_step_per_n_prompts_rows(policy, prompts, group, epochs, expected):
    """The reference's mini-batching (algo.minibatch_prompts): the steps follow the batch's size,
    not algo.minibatches, and the metrics line counts them."""
    steps = []
    stats = one_step_update(
        policy,
        OFF_POLICY,
        optimizer_steps=steps,
        minibatch_prompts=prompts,
        group_size=group,
        ppo_epochs=epochs,
        minibatches=5,
    )
    assert len(steps) == expected
    assert stats["optimizer_steps"] == expected


def test_the_fixed_minibatches_are_counted_too(policy):
    steps = []
    stats = one_step_update(policy, ON_POLICY, optimizer_steps=steps, minibatches=2, ppo_epochs=1)
    assert len(steps) == stats["optimizer_steps"] == 2


def test_an_update_of_many_small_minibatches_learns(policy):
    """Off-policy updates of one prompt's rows per step move the weights, with a finite loss."""
    model, tokenizer = policy
    episodes = make_episodes(tokenizer, OFF_POLICY)
    snapshot = {k: v.clone() for k, v in model.state_dict().items()}
    algo = AlgoConfig(minibatch_prompts=1, group_size=2, lr=1e-3, low_prob_mask="off")
    before = action_logprobs(policy, episodes, with_tips_prompt=False)
    optimizer = torch.optim.AdamW(model.parameters(), lr=algo.lr)
    try:
        stats = update_policy(
            model, optimizer, episodes, OFF_POLICY, algo, tokenizer.pad_token_id, torch.Generator().manual_seed(0)
        )
        after = action_logprobs(policy, episodes, with_tips_prompt=False)
        changed = [k for k, v in model.state_dict().items() if not torch.equal(v, snapshot[k])]
    finally:
        model.load_state_dict(snapshot)
        model.eval()
    assert stats["optimizer_steps"] == 4 and changed
    assert all(math.isfinite(stats[k]) for k in ("loss", "pg_loss", "grad_norm"))
    assert torch.isfinite(after).all() and not torch.equal(after, before)


def test_the_micro_batch_size_does_not_change_the_update(policy):
    """Gradient accumulation: each micro-batch adds its share of the minibatch's token mean, so
    one sample at a time, three (the last one short) and all eight at once give the same step."""
    by_size = {
        size: one_step_update(policy, OFF_POLICY, micro_batch=size, clip_low=0.1, clip_high=0.1) for size in (1, 3, 8)
    }
    for size in (3, 8):
        for key in (*SAME_STATS, "grad_norm", "entropy"):
            assert by_size[size][key] == pytest.approx(by_size[1][key], abs=1e-4), (size, key)


def test_the_minibatch_order_is_the_updates_generator_not_the_global_rng(policy):
    """With two minibatches the order of the samples changes the result; the update draws it
    from its own generator, so a run is reproducible whatever else drew random numbers."""

    def update_under_global_seed(seed: int) -> dict:
        torch.manual_seed(seed)
        return one_step_update(policy, OFF_POLICY, minibatches=2, ppo_epochs=1)

    torch.manual_seed(1)
    first = torch.randperm(8)[:4].sort().values
    torch.manual_seed(2)
    assert not torch.equal(first, torch.randperm(8)[:4].sort().values)  # the seeds split apart
    assert update_under_global_seed(1) == update_under_global_seed(2)


def test_the_configured_kl_estimator_is_the_one_the_loss_uses(policy):
    """algo.kl_kind reaches the loss: with a reference that differs from the policy, each
    estimator's KL is the token mean of that estimator over the samples (one minibatch, one
    epoch: measured before the only optimizer step, at the weights that scored π_old)."""
    import copy

    model, tokenizer = policy
    reference = copy.deepcopy(model).eval()
    with torch.no_grad():
        reference.model.norm.weight.mul_(1.5)  # every token's distribution moves
    samples = build_samples(make_episodes(tokenizer, ON_POLICY), ON_POLICY, AlgoConfig())
    prompts, actions = [s.numerator_prompt for s in samples], [s.action for s in samples]
    with torch.no_grad():
        logp, _, mask = sequence_logprobs(model, prompts, actions, pad_id=tokenizer.pad_token_id)
        ref, _, _ = sequence_logprobs(reference, prompts, actions, pad_id=tokenizer.pad_token_id)
    expected = {kind: token_mean(kl_penalty(logp, ref, kind), mask).item() for kind in CHOICES["algo.kl_kind"]}
    values = sorted(expected.values())  # k2 and k3 agree to second order: 0.8% apart here
    assert all(b - a > 1e-3 * abs(b) for a, b in zip(values, values[1:]))  # 10x the tolerance
    for kind, value in expected.items():
        stats = one_step_update(policy, ON_POLICY, reference_model=reference, micro_batch=8, kl_beta=0.1, kl_kind=kind)
        assert stats["kl"] == pytest.approx(value, rel=1e-4), kind
        assert stats["loss"] == pytest.approx(stats["pg_loss"] + 0.1 * value, rel=1e-4, abs=1e-6)


def test_the_reported_ratio_extremes_are_the_extremes_over_every_step(policy, monkeypatch):
    """With several optimizer steps the metrics line averages each statistic over the steps,
    except the ratio's max and min, which are the largest and smallest of any step."""
    from empo2.training import update

    steps = []
    real_step = update._minibatch_step

    def recorded(*args, **kwargs):
        step = real_step(*args, **kwargs)
        steps.append(dict(step))
        return step

    monkeypatch.setattr(update, "_minibatch_step", recorded)
    stats = one_step_update(policy, OFF_POLICY, minibatches=4, ppo_epochs=2)
    assert len(steps) == 8
    highs, lows = [s["ratio_max"] for s in steps], [s["ratio_min"] for s in steps]
    assert len(set(highs)) > 1 and len(set(lows)) > 1  # the steps' extremes differ
    assert stats["ratio_max"] == max(highs) and stats["ratio_min"] == min(lows)
    for key in ("ratio_mean", "pg_loss", "grad_norm"):
        assert stats[key] == pytest.approx(sum(s[key] for s in steps) / len(steps), rel=1e-6)


def test_a_minibatch_of_one_single_token_action_weighs_its_step_fully(policy):
    """Each micro-batch counts with its share of the minibatch's tokens, and the shares of a
    minibatch add up to 1 even when it holds one action of one token (reported statistics are
    the shares' weighted sum: a masked_fraction of 1 on every step averages to 1)."""
    model, tokenizer = policy
    episodes = make_episodes(tokenizer, ON_POLICY, behaviour=-9.0)
    for ep in episodes:
        for step in ep.steps:
            step.action_ids, step.behaviour_logprobs = step.action_ids[:1], [-9.0]
    config = AlgoConfig(minibatches=8, ppo_epochs=1, mask_logprob="behaviour")
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    snapshot = {k: v.clone() for k, v in model.state_dict().items()}
    try:
        stats = update_policy(
            model, optimizer, episodes, ON_POLICY, config, tokenizer.pad_token_id, torch.Generator().manual_seed(0)
        )
    finally:
        model.load_state_dict(snapshot)
        model.eval()
    assert stats["update_samples"] == 8
    assert stats["masked_fraction"] == pytest.approx(1.0)
