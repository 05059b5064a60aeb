"""How the update scores recorded actions (update.py's `_scored`, `_pad`, `_scored_everywhere`
and `tip_guided_logprobs`): in micro-batches, padded to a width, shared round-robin between
ranks, and without the tips a step was shown. The real tiny built-in policy on hand-made
episodes (update_episodes.py); the update's choices themselves are in test_update.py.
"""

from __future__ import annotations

import pytest
import torch

from empo2.policy.generation import sequence_logprobs
from empo2.policy.model import load_policy
from empo2.training.distributed import SINGLE, Dist
from empo2.training.update import OFF_POLICY, ON_POLICY, ON_POLICY_WITH_TIPS, tip_guided_logprobs
from update_episodes import action_logprobs, make_episodes


@pytest.fixture(scope="module")
def policy(tiny_policy):
    model, tokenizer = load_policy(str(tiny_policy), device="cpu", dtype="float32")
    return model.eval(), tokenizer


def test_tip_guided_logprobs_score_the_tipped_steps_without_their_tips(policy):
    """Per episode, the no-tips log-probs of the actions taken where a tip was shown (what an
    off-policy update raises); an episode that saw no tip has none."""
    model, tokenizer = policy
    episodes = make_episodes(tokenizer, ON_POLICY_WITH_TIPS)[:2] + make_episodes(tokenizer, ON_POLICY)[:1]
    tipped = episodes[0].steps[1]
    tipped.tips, tipped.prompt_ids = [], tipped.prompt_ids_no_tips  # one step without a tip
    report = tip_guided_logprobs(model, episodes, tokenizer.pad_token_id)
    no_tips = action_logprobs(policy, episodes, with_tips_prompt=False).tolist()
    lengths = [len(s.action_ids) for ep in episodes for s in ep.steps]
    rows, start = [], 0
    for n in lengths:
        rows.append(no_tips[start : start + n])
        start += n
    expected = [rows[0], rows[2] + rows[3], []]
    assert [r["steps"] for r in report] == [1, 2, 0]
    for entry, tokens in zip(report, expected):
        assert entry["tokens"] == len(tokens)
        assert entry["token_logprobs"] == pytest.approx(tokens, abs=1e-5)
        assert entry["logprob"] == pytest.approx(sum(tokens), abs=1e-4)
        assert entry["mean"] == (pytest.approx(sum(tokens) / len(tokens), abs=1e-5) if tokens else None)


def test_the_pad_value_never_changes_a_logprob(policy):
    """sequence_logprobs pads a batch of different lengths with pad_id, which only fills masked
    slots: any pad value gives the same log-probs (why dropping a pad_id argument in update.py is
    an equivalent mutant, scripts/mutation-equivalent.txt)."""
    model, tokenizer = policy
    steps = [s for ep in make_episodes(tokenizer, ON_POLICY_WITH_TIPS) for s in ep.steps]
    prompts = [s.prompt_ids_no_tips if i % 2 else s.prompt_ids for i, s in enumerate(steps)]
    actions = [s.action_ids for s in steps]
    assert len({len(p) + len(a) for p, a in zip(prompts, actions)}) > 1  # padding happens
    with torch.no_grad():
        scored = [sequence_logprobs(model, prompts, actions, pad_id=pad) for pad in (tokenizer.pad_token_id, 0, 7)]
    for logp, entropy, mask in scored[1:]:
        assert torch.equal(mask, scored[0][2])
        assert torch.allclose(logp, scored[0][0], atol=1e-5)
        assert torch.allclose(entropy, scored[0][1], atol=1e-5)


def test_scoring_in_micro_batches_gives_one_pass_padded_to_the_width(policy):
    """π_old, the reference and the tip-guided log-probs are scored in micro-batches: three rows
    at a time over eight (the last batch short, its actions narrower than the widest) must give
    the rows one pass over all eight gives, padded with zeros and masked to the longest action,
    or to a wider `width` a rank of a sharded update asks for."""
    from empo2.training.update import _pad, _scored

    model, tokenizer = policy
    steps = [s for ep in make_episodes(tokenizer, OFF_POLICY) for s in ep.steps]
    steps.sort(key=lambda s: -len(s.action_ids))  # the widest first, so the last batch is narrower
    prompts = [s.prompt_ids for s in steps]
    actions = [s.action_ids for s in steps]
    widest = max(len(a) for a in actions)
    assert max(len(a) for a in actions[6:]) < widest
    with torch.no_grad():
        whole, _, whole_mask = sequence_logprobs(
            model, prompts, actions, with_entropy=False, pad_id=tokenizer.pad_token_id
        )
        logp, mask = _scored(model, prompts, actions, tokenizer.pad_token_id, micro_batch=3)
        wide, wide_mask = _scored(model, prompts, actions, tokenizer.pad_token_id, micro_batch=3, width=widest + 2)
    assert logp.shape == mask.shape == (8, widest)
    assert torch.equal(mask, whole_mask)
    assert torch.allclose(logp, whole, atol=1e-5)
    assert wide.shape == wide_mask.shape == (8, widest + 2)
    assert torch.equal(wide[:, :widest], logp) and torch.equal(wide_mask[:, :widest], mask)
    assert not wide[:, widest:].any() and not wide_mask[:, widest:].any()
    # The sampler's recorded log-probs, padded with zeros to the scored width.
    assert _pad([[-1.0], [-2.0, -3.0]], 3).tolist() == [[-1.0, 0.0, 0.0], [-2.0, -3.0, 0.0]]


class _RanksInOneProcess(Dist):
    """A test double of a several-process job, for the one-process mutation selection (the real
    job runs in test_distributed.py and test_sharding.py, minutes each). This process plays
    `rank` of `world`; gather() hands back what each other rank would send, scored here with
    sequence_logprobs directly and padded to the widest action."""

    def __init__(self, rank, world, model, prompts, actions, pad_id):
        super().__init__(rank=rank, world=world)
        self.scoring = model, prompts, actions, pad_id

    def gather(self, obj):
        model, prompts, actions, pad_id = self.scoring
        width = max(len(a) for a in actions)
        parts = []
        for rank in range(self.world):
            rows = list(range(rank, len(actions), self.world))
            if rank == self.rank or not rows:
                parts.append(obj if rank == self.rank else torch.zeros(0, width))
                continue
            logp, _, _ = sequence_logprobs(
                model, [prompts[i] for i in rows], [actions[i] for i in rows], with_entropy=False, pad_id=pad_id
            )
            parts.append(torch.nn.functional.pad(logp, (0, width - logp.shape[1])))
        return parts


@pytest.mark.parametrize("rank,world", [(0, 3), (2, 3), (9, 10)])
def test_ranks_score_their_round_robin_share_and_gather_every_row_in_order(policy, rank, world):
    """π_old with several ranks: each scores every world-th sample (a rank past the last sample
    scores none), padded to the widest action of all ranks, and the gathered shares,
    interleaved back, are the one-process scores."""
    from empo2.training.update import _scored_everywhere

    model, tokenizer = policy
    steps = [s for ep in make_episodes(tokenizer, OFF_POLICY) for s in ep.steps]
    prompts = [s.prompt_ids for s in steps]
    # This rank's actions cut to two tokens: its share is narrower than the widest action.
    actions = [s.action_ids[:2] if i % world == rank else s.action_ids for i, s in enumerate(steps)]
    pad = tokenizer.pad_token_id
    with torch.no_grad():
        alone = _scored_everywhere(model, prompts, actions, pad, 2, SINGLE)
        ranks = _RanksInOneProcess(rank, world, model, prompts, actions, pad)
        shared = _scored_everywhere(model, prompts, actions, pad, 2, ranks)
    assert shared.shape == alone.shape == (8, max(len(a) for a in actions))
    assert torch.allclose(shared, alone, atol=1e-5)
