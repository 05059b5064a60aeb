"""Rolling out B×N episodes in lockstep, and writing their tips (EMPO2.md §2, steps 3–4).

Every turn, the prompts of all unfinished episodes go to the policy as one batch (one prefill,
then one forward per token with the KV cache). In memory mode each episode's user turn gets the
tips retrieved for its task variation at that step; both prompts — with and without tips — are
kept, since the update may score the action under either (paper Table 3).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import torch

from .envs.base import TextEnv
from .policy.generation import generate_from_ids
from .policy.prompting import Turn, reflection_messages, step_messages, step_user_text, with_tips
from .policy.tokenizer import encode_chat


@dataclass
class StepRecord:
    observation: str          # what the agent saw when it chose the action
    user_text: str            # the user turn without tips: also the memory key of the step
    tips: list[str]           # tips shown in the prompt (memory mode), in rank order
    tip_ids: list[str]
    prompt_ids: list[int]     # the prompt the action was sampled from (with tips in memory mode)
    prompt_ids_no_tips: list[int]
    action: str               # the policy's text
    executed_action: str      # after action correction
    action_ids: list[int]
    behaviour_logprobs: list[float]
    reward: float = 0.0       # score delta
    intrinsic: float = 0.0
    score: float = 0.0


@dataclass
class Episode:
    id: str
    task: str
    variation: int
    group: int
    rollout_mode: str         # "memory" or "memory-free"
    description: str = ""
    steps: list[StepRecord] = field(default_factory=list)
    final_score: float = 0.0
    success: bool = False
    tip: str = ""
    tip_id: str | None = None
    done: bool = False

    @property
    def variation_key(self) -> str:
        return f"{self.task}/{self.variation}"

    def turns(self, next_observations: list[str]) -> list[Turn]:
        return [Turn(s.executed_action, o) for s, o in zip(self.steps, next_observations)]


@dataclass
class RolloutSettings:
    max_action_tokens: int
    temperature: float
    history_steps: int
    observation_words: int
    similarity_threshold: float = 0.5
    top_k: int = 10


def distinct_tips(retrieved) -> tuple[list[str], list[str]]:
    """Tip texts of the retrieved entries, each once, in rank order (entries of one episode
    share their tip; showing it ten times would tell the policy nothing more)."""
    texts, ids = [], []
    for r in retrieved:
        if r.tip_id not in ids:
            ids.append(r.tip_id)
            texts.append(r.text)
    return texts, ids


def roll_out(
    envs: list[TextEnv],
    episodes: list[Episode],
    model,
    tokenizer,
    settings: RolloutSettings,
    generator: torch.Generator,
    memory=None,
    on_step: Callable[[int, int], None] | None = None,
) -> list[list[str]]:
    """Plays every episode to the end; returns each episode's observations after each step.

    envs[i] plays episodes[i]. `memory` is None for memory-free rollouts.
    """
    observations, infos = [], []
    for env, ep in zip(envs, episodes):
        obs, info = env.reset(ep.task, ep.variation, seed=ep.group)
        ep.description = info.task_description
        observations.append(obs)
        infos.append(info)
    after: list[list[str]] = [[] for _ in episodes]
    turn = 0
    while True:
        active = [i for i, ep in enumerate(episodes) if not ep.done]
        if not active:
            return after
        user_texts = {
            i: step_user_text(episodes[i].description, episodes[i].turns(after[i]), observations[i],
                              settings.history_steps, settings.observation_words)
            for i in active
        }
        shown = _retrieve_tips(memory, episodes, user_texts, settings) if memory is not None else {}
        no_tip_ids = {i: encode_chat(tokenizer, step_messages(user_texts[i])) for i in active}
        prompt_ids = {
            i: encode_chat(tokenizer, step_messages(with_tips(user_texts[i], shown[i][0])))
            if shown.get(i, ([], []))[0] else no_tip_ids[i]
            for i in active
        }
        generations = generate_from_ids(model, tokenizer, [prompt_ids[i] for i in active],
                                        settings.max_action_tokens, settings.temperature, generator)
        for i, gen in zip(active, generations):
            ep, env = episodes[i], envs[i]
            obs, reward, done, info = env.step(gen.text)
            tips, tip_ids = shown.get(i, ([], []))
            ep.steps.append(StepRecord(
                observation=observations[i], user_text=user_texts[i], tips=tips, tip_ids=tip_ids,
                prompt_ids=prompt_ids[i], prompt_ids_no_tips=no_tip_ids[i], action=gen.text,
                executed_action=info.corrected_action or gen.text, action_ids=gen.token_ids,
                behaviour_logprobs=gen.logprobs, reward=reward, score=info.score,
            ))
            after[i].append(obs)
            observations[i] = obs
            if done:
                ep.done, ep.final_score, ep.success = True, info.score, info.success
        turn += 1
        if on_step is not None:
            on_step(turn, len(active))


def _retrieve_tips(memory, episodes, user_texts, settings) -> dict[int, tuple[list[str], list[str]]]:
    """One batched retrieval per task variation: a matrix product over its buffer."""
    by_key: dict[str, list[int]] = {}
    for i in user_texts:
        by_key.setdefault(episodes[i].variation_key, []).append(i)
    shown = {}
    for key, rows in by_key.items():
        results = memory.retrieve(key, [user_texts[i] for i in rows],
                                  threshold=settings.similarity_threshold, top_k=settings.top_k)
        for i, retrieved in zip(rows, results):
            shown[i] = distinct_tips(retrieved)
    return shown


def add_intrinsic_rewards(episodes: list[Episode], after: list[list[str]], reward_fn,
                          embedder) -> None:
    """Novelty of every state an episode reached, per task variation (EMPO2.md §3).

    States are processed in episode order, step by step, so the reward depends on nothing but
    the order of play (a resumed run reproduces it).
    """
    by_key: dict[str, list[tuple[int, int]]] = {}
    for e, ep in enumerate(episodes):
        for t in range(len(ep.steps)):
            by_key.setdefault(ep.variation_key, []).append((e, t))
    for key, cells in by_key.items():
        texts = [after[e][t] for e, t in cells]
        # The reference variant pays only where retrieval happened: None in memory-free mode.
        n_tips = (np.array([len(episodes[e].steps[t].tip_ids) for e, t in cells])
                  if episodes[cells[0][0]].rollout_mode == "memory" else None)
        embeddings = embedder.encode(texts) if reward_fn.needs_embeddings else None
        rewards = reward_fn.rewards(key, embeddings=embeddings, n_retrieved=n_tips)
        for (e, t), r in zip(cells, rewards):
            episodes[e].steps[t].intrinsic = float(r)


def write_tips(episodes: list[Episode], after: list[list[str]], model, tokenizer,
               settings: RolloutSettings, max_tip_tokens: int,
               generator: torch.Generator) -> None:
    """The current policy writes one tip per episode after a reflection instruction."""
    prompts = [
        encode_chat(tokenizer, reflection_messages(ep.description, ep.turns(after[e]),
                                                   ep.final_score, settings.observation_words))
        for e, ep in enumerate(episodes)
    ]
    generations = generate_from_ids(model, tokenizer, prompts, max_tip_tokens,
                                    settings.temperature, generator)
    for ep, gen in zip(episodes, generations):
        ep.tip = gen.text
