"""The novelty reward is paid per state, along each episode (docs/paper.md §3: r_int = 1/n with n the
visits of a similar past state), through the rollout's `add_intrinsic_rewards` and the real
sentence embedder. The rewards asserted here hold whether a batch is scored episode after
episode or jointly against the archive as it stood before the iteration: within one episode a
revisit counts the visits before it.
"""

from __future__ import annotations

import numpy as np

from empo2.algo.intrinsic import make_intrinsic_reward
from empo2.training.rollout import MEMORY, MEMORY_FREE, Episode, StepRecord, add_intrinsic_rewards

GARDEN = "you are in the garden . the sun shines on a bed of red flowers ."
CELLAR = "a dark cellar . a locked wooden chest stands against the cold wall ."


def episode(
    states: list[str], variation: int = 0, rollout_mode: str = MEMORY_FREE, tips_per_step: list[int] | None = None
) -> Episode:
    ep = Episode(id=f"e-{variation}", task="grow-plant", variation=variation, group=0, rollout_mode=rollout_mode)
    for t, _ in enumerate(states):
        n = tips_per_step[t] if tips_per_step else 0
        ep.steps.append(
            StepRecord(
                observation="",
                user_text="",
                tips=["a tip"] * n,
                tip_ids=[f"p-{k}" for k in range(n)],
                prompt_ids=[1],
                prompt_ids_no_tips=[1],
                action="look around",
                executed_action="look around",
                action_ids=[1],
                behaviour_logprobs=[-1.0],
            )
        )
    return ep


def test_a_revisited_state_earns_one_one_half_along_an_episode(embedder):
    reward = make_intrinsic_reward("paper", threshold=0.9)
    garden, cellar = embedder.encode([GARDEN, CELLAR])
    assert float(np.dot(garden, cellar)) < reward.threshold  # two distinct states to MiniLM

    ep = episode(["x"] * 3)
    add_intrinsic_rewards([ep], [[GARDEN, CELLAR, GARDEN]], reward, embedder)
    assert [s.intrinsic for s in ep.steps] == [1.0, 1.0, 0.5]


def test_states_are_counted_per_task_variation(embedder):
    """The archive is kept per variation: a state new to variation 1 earns 1 there, though
    variation 0 has seen it twice in the same batch."""
    reward = make_intrinsic_reward("paper", threshold=0.9)
    seen, fresh = episode(["x"] * 2, variation=0), episode(["x"], variation=1)
    add_intrinsic_rewards([seen, fresh], [[CELLAR, CELLAR], [CELLAR]], reward, embedder)
    assert [s.intrinsic for s in seen.steps] == [1.0, 0.5]
    assert [s.intrinsic for s in fresh.steps] == [1.0]


def test_reference_variant_pays_per_step_from_that_steps_retrieval(embedder):
    """algo.intrinsic=reference: 1/(tips retrieved at the step + 1), step by step."""
    ep = episode(["x"] * 3, rollout_mode=MEMORY, tips_per_step=[0, 2, 1])
    add_intrinsic_rewards([ep], [[GARDEN, CELLAR, GARDEN]], make_intrinsic_reward("reference"), embedder)
    assert [s.intrinsic for s in ep.steps] == [1.0, 1 / 3, 0.5]


def test_reference_variant_pays_nothing_memory_free_and_needs_no_embedder():
    """The reference pays 1/(tips + 1) only where retrieval happened: the steps of a memory-free
    episode earn 0 (not 1/(0 + 1)), those of a memory episode without tips 1, each episode by its
    own rollout mode. It reads no embedding, so no embedder is needed (None: a call would fail)."""
    free = episode(["x"] * 2, variation=0)
    memory = episode(["x"] * 2, variation=1, rollout_mode=MEMORY)
    add_intrinsic_rewards(
        [free, memory], [[GARDEN, CELLAR], [GARDEN, CELLAR]], make_intrinsic_reward("reference"), None
    )
    assert [s.intrinsic for s in free.steps] == [0.0, 0.0]
    assert [s.intrinsic for s in memory.steps] == [1.0, 1.0]
