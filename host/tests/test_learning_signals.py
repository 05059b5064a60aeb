"""The per-iteration figures that explain learning (empo2/training/learning_signals.py)."""

from __future__ import annotations

import pytest
import torch

from empo2.config import AlgoConfig
from empo2.memory.store import MemoryStore
from empo2.training.learning_signals import (
    flat_group_share,
    intrinsic_advantage_share,
    learning_signals,
    success_tip_share,
)
from empo2.training.rollout import Episode, StepRecord


def episode(group: int, rewards: list[float], intrinsic: list[float], tip_ids=()) -> Episode:
    ep = Episode(
        id=f"e{group}-{len(rewards)}-{sum(rewards)}-{sum(intrinsic)}",
        task="power-device",
        variation=0,
        group=group,
        rollout_mode="memory",
    )
    ep.steps = [
        StepRecord(
            observation="",
            user_text="",
            tips=[],
            tip_ids=list(tip_ids),
            prompt_ids=[],
            prompt_ids_no_tips=[],
            action="look around",
            executed_action="look around",
            action_ids=[1],
            behaviour_logprobs=[-1.0],
            reward=r,
            intrinsic=i,
        )
        for r, i in zip(rewards, intrinsic)
    ]
    return ep


def test_intrinsic_share_is_zero_one_or_between_as_the_returns_differ():
    algo = AlgoConfig()
    same_score = [episode(0, [100.0, 0.0], [1.0, 1.0]), episode(0, [100.0, 0.0], [1.0, 0.5])]
    same_novelty = [episode(0, [100.0, 0.0], [1.0, 0.5]), episode(0, [0.0, 0.0], [1.0, 0.5])]
    assert intrinsic_advantage_share(same_score, algo) == pytest.approx(1.0)
    assert intrinsic_advantage_share(same_novelty, algo) == pytest.approx(0.0)
    # Extrinsic return differs by 1.0, mean novelty by 0.25: the novelty holds a fifth of |A|.
    both = [episode(0, [100.0, 0.0], [1.0, 1.0]), episode(0, [0.0, 0.0], [1.0, 0.5])]
    assert intrinsic_advantage_share(both, algo) == pytest.approx(0.25 / 1.25)
    algo.intrinsic_coef = 0.0
    assert intrinsic_advantage_share(both, algo) == 0.0
    # A group of one has no advantage at all.
    assert intrinsic_advantage_share([episode(3, [0.0], [1.0])], AlgoConfig()) == 0.0


def test_success_tip_share_counts_steps_shown_a_successful_episodes_tip(embedder):
    memory = MemoryStore.open(None, embedder)
    won = memory.add_episode_tip("power-device/0", "the cell was in the shed", [("a", "go to shed")], 100.0)
    lost = memory.add_episode_tip("power-device/0", "no cell in the kitchen", [("b", "go to kitchen")], 25.0)
    episodes = [
        episode(0, [0.0] * 2, [0.0] * 2, tip_ids=[lost.id, won.id]),
        episode(0, [0.0] * 3, [0.0] * 3, tip_ids=[lost.id]),
        episode(1, [0.0] * 3, [0.0] * 3),
    ]
    assert success_tip_share(episodes, memory) == pytest.approx(2 / 8)

    stats = {"masked_fraction": 0.5, "ratio_mean": 1.1, "ratio_max": 2.0, "entropy": 3.0}
    off = learning_signals(episodes, True, "off-policy", stats, AlgoConfig(), memory)
    assert off["update/off_policy/masked_fraction"] == 0.5 and off["update/off_policy/ratio_max"] == 2.0
    assert "update/off_policy/entropy" not in off and off["memory/success_tip_share"] == pytest.approx(0.25)
    plain = learning_signals(episodes, False, "on-policy", stats, AlgoConfig(), memory)
    assert set(plain) == {"reward/intrinsic_advantage_share", "reward/flat_group_share"}  # gaps, not zeros


def test_flat_group_share_counts_the_groups_whose_advantages_are_all_zero():
    algo = AlgoConfig()
    all_won = [episode(0, [0.0, 100.0], [0.5, 0.5]), episode(0, [100.0], [0.5])]
    mixed = [episode(1, [0.0, 100.0], [0.5, 0.5]), episode(1, [0.0, 25.0], [0.5, 0.5])]
    # One failing score, told apart by novelty alone: flat only without the novelty reward.
    novelty_only = [episode(2, [0.0, 25.0], [1.0, 1.0]), episode(2, [0.0, 25.0], [0.5, 0.5])]
    alone = [episode(3, [0.0], [0.0])]
    assert flat_group_share(all_won + mixed + novelty_only + alone, algo) == pytest.approx(2 / 4)
    assert flat_group_share(all_won + mixed + novelty_only + alone, AlgoConfig(intrinsic_coef=0.0)) == pytest.approx(
        3 / 4
    )
    assert flat_group_share(mixed, algo) == 0.0 and flat_group_share([], algo) == 0.0
    # What the update sees: the flat groups' advantages are exactly 0, the others' are not.
    from empo2.algo.losses import group_advantages
    from empo2.training.update import episode_returns

    batch = all_won + mixed + novelty_only
    advantages = group_advantages(episode_returns(batch, algo), torch.tensor([e.group for e in batch]))
    assert advantages[:2].abs().max() == 0 and advantages[2:].abs().min() > 0.5
