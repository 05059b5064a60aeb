"""Evaluation with memory trials: memory-free success, and adaptation with memory alone.

The paper's out-of-distribution test (docs/paper.md §6): a trained policy plays a task it never trained
on, with memory on and no weight updates, for 10 trials; after each trial it writes a tip per
episode into a fresh memory, which later trials retrieve from. Trial 1 has an empty memory, so it
is the memory-free score; the curve over trials shows what memory adds. `empo2-host eval` runs the
same protocol on the held-out variations of the trained tasks.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ..envs.pool import EnvPool
from ..envs.registry import make_env
from ..memory.store import MemoryStore
from .rollout import MEMORY, MEMORY_FREE, Episode, RolloutSettings, roll_out, tip_entries, write_tips


@dataclass
class SuccessResult:
    success: float  # mean over episodes
    score: float
    episodes: int


def memory_free_success(
    model,
    tokenizer,
    env_config,
    pairs: list[tuple[str, int]],
    settings: RolloutSettings,
    seed: int,
    episodes_per_pair: int,
) -> SuccessResult:
    """Memory-free success over `episodes_per_pair` episodes of every (task, variation); no
    tips are written (nothing reads them)."""
    generator = torch.Generator().manual_seed(seed)
    pool = EnvPool(lambda: make_env(env_config), workers=settings.workers)
    episodes = [
        Episode(id=f"eval-{k}", task=t, variation=v, group=k, rollout_mode=MEMORY_FREE)
        for k, (t, v) in enumerate(pairs * episodes_per_pair)
    ]
    roll_out(pool.take(len(episodes)), episodes, model, tokenizer, settings, generator, None)
    pool.close()
    return SuccessResult(
        float(np.mean([ep.success for ep in episodes])),
        float(np.mean([ep.final_score for ep in episodes])),
        len(episodes),
    )


@dataclass
class TrialResult:
    success: list[float]  # per trial, mean over episodes
    score: list[float]


def memory_trials(
    model,
    tokenizer,
    env_config,
    pairs: list[tuple[str, int]],
    trials: int,
    settings: RolloutSettings,
    max_tip_tokens: int,
    embedder,
    seed: int,
    episodes_per_pair: int = 1,
    progress=None,
    writer=None,
    with_memory: bool = True,
) -> TrialResult:
    """Plays `trials` rounds over every (task, variation); tips accumulate in a fresh memory.
    writer: the model that writes the tips (memory.tip_writer=initial: the warm start); None,
    the model that plays. with_memory=False is the paired memory-free arm: the same rounds of
    the same episodes from the same generator seed, every one memory-free and no tips written
    (nothing would read them), so its trial 1 is the memory arm's trial 1."""
    memory = MemoryStore.open(None, embedder)
    generator = torch.Generator().manual_seed(seed)
    pool = EnvPool(lambda: make_env(env_config), workers=settings.workers)  # JVMs start once
    result = TrialResult([], [])
    for trial in range(1, trials + 1):
        recall = with_memory and trial > 1
        episodes = [
            Episode(
                id=f"trial{trial}-{k}", task=t, variation=v, group=k, rollout_mode=MEMORY if recall else MEMORY_FREE
            )
            for k, (t, v) in enumerate(pairs * episodes_per_pair)
        ]
        after = roll_out(
            pool.take(len(episodes)), episodes, model, tokenizer, settings, generator, memory if recall else None
        )
        if with_memory:
            write_tips(episodes, after, writer or model, tokenizer, settings, max_tip_tokens, generator)
            for e, ep in enumerate(episodes):
                if ep.tip:
                    memory.add_episode_tip(
                        ep.variation_key,
                        ep.tip,
                        steps=tip_entries(ep, after[e], settings),
                        score=ep.final_score,
                        provenance={
                            "run": "eval",
                            "iteration": 0,
                            "episode": ep.id,
                            "step": len(ep.steps),
                            "score": ep.final_score,
                        },
                    )
        result.success.append(float(np.mean([ep.success for ep in episodes])))
        result.score.append(float(np.mean([ep.final_score for ep in episodes])))
        if progress is not None:
            progress(trial, trials, result)
    pool.close()
    return result
