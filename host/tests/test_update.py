"""The update's choices, pinned one by one (EMPO2.md §3, paper Table 3; update.py's table).

Each test here guards a choice that an end-to-end run cannot see (a run compared with another run
of the same code): which prompt each log-prob is scored under in each update mode, that π_old is
recomputed rather than taken from the sampler, and which log-prob the low-probability mask tests.
They run the real tiny built-in policy on hand-made episodes, so each prompt is known exactly.
"""

from __future__ import annotations

import dataclasses

import pytest
import torch

from empo2.config import AlgoConfig
from empo2.policy.model import load_policy
from empo2.policy.prompting import step_messages, step_user_text, with_tips
from empo2.policy.tokenizer import encode_chat, encode_response
from empo2.rollout import Episode, StepRecord
from empo2.update import UPDATE_MODES, build_samples, update_policy

OLD_LOGPROB_SETTINGS = ("with_tips", "without_tips")
TIP = "turn on the lamp first ; action : turn on lamp"
ACTIONS = ("go to kitchen", "turn on lamp", "look around", "pick up seed")
SCENES = ("you are in the hall . a lamp is here .", "you are in the kitchen . a seed is here .")


@pytest.fixture(scope="module")
def policy(tiny_policy):
    model, tokenizer = load_policy(str(tiny_policy), device="cpu", dtype="float32")
    return model.eval(), tokenizer


def make_episodes(tokenizer, update_mode: str, behaviour: float | None = None) -> list[Episode]:
    """Two groups of two episodes, two steps each, as a rollout of `update_mode` records them:
    memory-mode steps carry a tip block, memory-free ones (on-policy) do not. Returns differ
    within each group, so every advantage is non-zero. `behaviour` overrides the sampler's
    recorded log-probs (None: a plausible -1.0 per token)."""
    memory = update_mode != "on-policy"
    episodes = []
    for e in range(4):
        ep = Episode(id=f"i000001-e{e:04d}", task="power-device", variation=0, group=e // 2,
                     rollout_mode="memory" if memory else "memory-free", description="turn on the lamp")
        for t, scene in enumerate(SCENES):
            user = step_user_text(ep.description, [], scene, history_steps=3, observation_words=10)
            no_tips = encode_chat(tokenizer, step_messages(user))
            prompt = encode_chat(tokenizer, step_messages(with_tips(user, [TIP]))) if memory else no_tips
            action = encode_response(tokenizer, ACTIONS[(e + t) % len(ACTIONS)])
            logp = -1.0 if behaviour is None else behaviour
            ep.steps.append(StepRecord(
                observation=scene, user_text=user, tips=[TIP] if memory else [], tip_ids=[],
                prompt_ids=prompt, prompt_ids_no_tips=no_tips, action=ACTIONS[0],
                executed_action=ACTIONS[0], action_ids=action, behaviour_logprobs=[logp] * len(action),
                reward=float(10 * (e % 2) + t), score=float(10 * (e % 2) + t)))
        episodes.append(ep)
    return episodes


# The module table of update.py, row by row: which recorded prompt each log-prob is scored under.
# "rollout" is the prompt the action was sampled from (with tips in memory mode), "no_tips" the
# same turn without the tip block. On-policy rollouts are memory-free, so there both are one.
EXPECTED_PROMPTS = {
    ("on-policy", "with_tips"): ("rollout", "rollout"),
    ("on-policy", "without_tips"): ("rollout", "rollout"),
    ("on-policy-with-tips", "with_tips"): ("rollout", "rollout"),
    ("on-policy-with-tips", "without_tips"): ("rollout", "rollout"),
    ("off-policy", "with_tips"): ("no_tips", "rollout"),
    ("off-policy", "without_tips"): ("no_tips", "no_tips"),
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
        if mode != "on-policy":
            assert step.prompt_ids != step.prompt_ids_no_tips  # the rows above tell them apart


def test_build_samples_refuses_an_unknown_mode(policy):
    with pytest.raises(ValueError, match="unknown update mode"):
        build_samples(make_episodes(policy[1], "off-policy"), "offpolicy", AlgoConfig())


def one_step_update(policy, mode: str, behaviour: float | None = None, **algo) -> dict:
    """One epoch, one minibatch: the only optimizer step comes after every ratio is measured, so
    the ratios and the mask are those of the policy that π_old was scored with."""
    model, tokenizer = policy
    snapshot = {k: v.clone() for k, v in model.state_dict().items()}
    config = dataclasses.replace(AlgoConfig(minibatches=1, ppo_epochs=1, lr=1e-3), **algo)
    optimizer = torch.optim.AdamW(model.parameters(), lr=config.lr)
    try:
        return update_policy(model, optimizer, make_episodes(tokenizer, mode, behaviour), mode,
                             config, tokenizer.pad_token_id, torch.Generator().manual_seed(0),
                             micro_batch=1)
    finally:
        model.load_state_dict(snapshot)  # the module's model stays the built policy
        model.eval()


RATIO_TOLERANCE = 1e-5  # float32 noise of scoring one row twice; a wrong prompt moves it by >1e-2


@pytest.mark.parametrize("mode", ["on-policy", "on-policy-with-tips"])
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
    stats = one_step_update(policy, "off-policy")
    assert max(stats["ratio_max"] - 1, 1 - stats["ratio_min"]) > 1e-2


def test_off_policy_without_tips_option_scores_both_sides_without_tips(policy):
    stats = one_step_update(policy, "off-policy", off_policy_old_logprob="without_tips")
    assert abs(stats["ratio_max"] - 1) < RATIO_TOLERANCE
    assert abs(stats["ratio_min"] - 1) < RATIO_TOLERANCE


def action_logprobs(policy, episodes, with_tips_prompt: bool) -> torch.Tensor:
    """Every action token's log-prob under the policy, with or without the tip block."""
    from empo2.policy.generation import sequence_logprobs

    model, tokenizer = policy
    steps = [s for ep in episodes for s in ep.steps]
    prompts = [s.prompt_ids if with_tips_prompt else s.prompt_ids_no_tips for s in steps]
    with torch.no_grad():
        logp, _, mask = sequence_logprobs(model, prompts, [s.action_ids for s in steps],
                                          with_entropy=False, pad_id=tokenizer.pad_token_id)
    return logp[mask]


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
    episodes = make_episodes(policy[1], "on-policy-with-tips")
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
    kept = one_step_update(policy, mode, behaviour=-1.0, mask_logprob="behaviour",
                           mask_log_delta=-5.0)
    dropped = one_step_update(policy, mode, behaviour=-9.0, mask_logprob="behaviour",
                              mask_log_delta=-5.0)
    assert kept["masked_fraction"] == 0.0
    assert dropped["masked_fraction"] == pytest.approx(1.0, abs=1e-6)


def test_mask_off_keeps_every_token(policy):
    stats = one_step_update(policy, "on-policy-with-tips", behaviour=-9.0, low_prob_mask="off",
                            mask_logprob="behaviour")
    assert stats["masked_fraction"] == 0.0


@pytest.mark.parametrize("mode", UPDATE_MODES)
def test_mask_scope_memory_masks_only_updates_of_memory_rollouts(policy, mode):
    """algo.mask_scope=memory (the reference code masks only where tips are in use): plain
    on-policy updates keep every token; updates of memory rollouts mask as with scope 'all'."""
    everywhere = one_step_update(policy, mode, behaviour=-9.0, mask_logprob="behaviour")
    scoped = one_step_update(policy, mode, behaviour=-9.0, mask_logprob="behaviour",
                             mask_scope="memory")
    assert everywhere["masked_fraction"] == pytest.approx(1.0, abs=1e-6)
    assert scoped["masked_fraction"] == (0.0 if mode == "on-policy" else everywhere["masked_fraction"])
