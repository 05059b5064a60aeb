"""Rolling out B×N episodes in lockstep, and writing their tips (docs/paper.md §2, steps 3–4).

Every turn, the prompts of all unfinished episodes go to the policy as one batch (one prefill,
then one forward per token with the KV cache). In memory mode each episode's user turn gets the
tips retrieved for its task variation at that step; both prompts — with and without tips — are
kept, since the update may score the action under either (paper Table 3).

Sequence budget: with `max_sequence_tokens` set (paper: 4,500), a step's prompt plus its action
must fit; the oldest history steps are dropped first, then the current observation is clipped,
then the lowest-ranked tips are left out. A query is the fitted user turn. Environments
step one after another, or on `workers` threads when they wait on a simulator process (ScienceWorld's
JVMs): the results are the same, in the same order.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np
import torch

from ..config import TrainConfig
from ..envs.base import TextEnv
from ..envs.plugin import call_each

# The rollout modes (the strings of the protocol's RolloutMode).
from ..modes import MEMORY, MEMORY_FREE, ROLLOUT_MODES  # noqa: F401 - re-exported
from ..policy.generation import Sampler, generate_from_ids
from ..policy.prompting import (
    Turn,
    reflection_messages,
    shown_tip,
    step_messages,
    step_user_text,
    system_prompt_for,
    with_tips,
)
from ..policy.scripted_writer import ScriptedTipWriter
from ..policy.tokenizer import encode_chat


def episode_generator(*key: int) -> torch.Generator:
    """The sampling stream of one episode, seeded from its key alone (the trainer uses the run
    seed, the iteration and the episode's global index): its tokens and its tip then do not depend
    on which rank plays it, nor on its batch-mates, so a run reproduces at any world size."""
    seed = np.random.SeedSequence([int(k) for k in key]).generate_state(1, np.uint64)[0]
    return torch.Generator().manual_seed(int(seed))


@dataclass
class StepRecord:
    observation: str  # what the agent saw when it chose the action
    user_text: str  # the user turn without tips: the step's query and, with
    # memory.key=step, its memory key
    tips: list[str]  # tips shown in the prompt (memory mode), in rank order
    tip_ids: list[str]
    prompt_ids: list[int]  # the prompt the action was sampled from (with tips in memory mode)
    prompt_ids_no_tips: list[int]
    action: str  # the policy's text
    executed_action: str  # after action correction
    action_ids: list[int]
    behaviour_logprobs: list[float]
    reward: float = 0.0  # score delta
    intrinsic: float = 0.0
    score: float = 0.0
    # Each shown tip in its parts, parallel to tip_ids: the tip's own text (what its id names)
    # and the action of its entry most like this state, which shown_tip appends in the prompt;
    # so one tip id reads differently from step to step, and the episode view shows both parts.
    tip_texts: list[str] = field(default_factory=list)
    tip_actions: list[str] = field(default_factory=list)


@dataclass
class Episode:
    id: str
    task: str
    variation: int
    group: int
    rollout_mode: str  # one of ROLLOUT_MODES
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

    def turns(self, next_observations: list[str], raw: bool = False) -> list[Turn]:
        """Past steps as prompts show them: the executed action, or the policy's raw text."""
        return [Turn(s.action if raw else s.executed_action, o) for s, o in zip(self.steps, next_observations)]


@dataclass
class RolloutSettings:
    """What a rollout needs from the config; `from_config` is the one way to make them."""

    max_action_tokens: int
    temperature: float
    history_steps: int
    observation_words: int
    similarity_threshold: float
    top_k: int
    keep_edited_tip_actions: bool  # memory.edited_tip_actions == "keep"
    system_prompt: str  # the environment's instructions (prompting.system_prompt_for)
    max_sequence_tokens: int  # prompt + response budget; 0: none
    workers: int  # threads stepping environments
    generation_batch: int  # prompts decoded together
    reflection_observation_words: int  # words per observation in the reflection; 0: whole
    raw_history_actions: bool  # history shows the policy's raw text, not the executed action
    memory_key: str  # memory.key: 'step' or 'episode' (tip_entries)
    show_score: bool  # memory.show_score: each shown tip ends with its episode's score

    @classmethod
    def from_config(cls, config: TrainConfig, env, train: bool) -> RolloutSettings:
        """Training rollouts (train) or evaluation episodes, with the environment's own prompt."""
        p, m = config.policy, config.memory
        return cls(
            max_action_tokens=p.max_action_tokens,
            temperature=p.temperature if train else p.eval_temperature,
            history_steps=p.history_steps,
            observation_words=p.observation_words,
            similarity_threshold=m.similarity_threshold,
            top_k=m.top_k,
            keep_edited_tip_actions=m.edited_tip_actions == "keep",
            system_prompt=system_prompt_for(env),
            max_sequence_tokens=p.max_sequence_tokens,
            workers=config.env.workers,
            generation_batch=p.generation_batch,
            reflection_observation_words=p.reflection_observation_words,
            raw_history_actions=p.history_action == "raw",
            memory_key=m.key,
            show_score=m.show_score,
        )


def tip_entries(ep: Episode, after: list[str], settings: RolloutSettings) -> list[tuple[str, str]]:
    """The (key text, action) entries an episode's tip is stored under (memory.key).

    'step': one per step, keyed by the step's user turn without tips, with the action it executed
    (docs/paper.md §4). 'episode': one, keyed by the episode's final conversation — the user turn that
    would follow its last step: the task, its last steps and the final observation, built as any
    query is — with no action, since no one step's action is the whole episode's.
    """
    if settings.memory_key == "step":
        return [(s.user_text, s.executed_action) for s in ep.steps]
    final = step_user_text(
        ep.description,
        ep.turns(after, settings.raw_history_actions),
        after[-1],
        settings.history_steps,
        settings.observation_words,
    )
    return [(final, "")]


def distinct_tips(retrieved, show_score: bool = False) -> tuple[list[str], list[str]]:
    """The retrieved entries as the tip block shows them, one per tip, in rank order.

    Entries of one tip share its text; within a tip the best-ranked entry (ties on score go to
    the most similar state) is kept, with its action: the action its episode took in the state
    most like the current one, and with `show_score` (memory.show_score) that episode's score.
    """
    texts, ids = [], []
    for r in retrieved:
        if r.tip_id not in ids:
            ids.append(r.tip_id)
            texts.append(shown_tip(r.text, r.action, r.episode_score if show_score else None))
    return texts, ids


def tip_parts(retrieved) -> dict[str, tuple[str, str]]:
    """tip id → (the tip's text, the action of the entry distinct_tips keeps for it)."""
    parts: dict[str, tuple[str, str]] = {}
    for r in retrieved:
        parts.setdefault(r.tip_id, (r.text.strip(), r.action))
    return parts


def roll_out(
    envs: list[TextEnv],
    episodes: list[Episode],
    model,
    tokenizer,
    settings: RolloutSettings,
    generator: Sampler,
    memory=None,
    on_step: Callable[[int, int], None] | None = None,
    timings: dict[str, float] | None = None,
    on_episode_end: Callable[[int, list[str]], None] | None = None,
) -> list[list[str]]:
    """Plays every episode to the end; returns each episode's observations after each step.

    envs[i] plays episodes[i]; `generator` is one for all, or one per episode (generator[i]
    samples episodes[i]'s actions). `memory` is None for memory-free rollouts. `timings`, when given,
    accumulates seconds spent in "generation", "environment", "retrieval" and "prompting".
    `on_episode_end(i, after_i)` is called the moment episodes[i] ends (its last step recorded;
    the episodes that end on one turn in index order) with its observations after each step,
    while the others play on.
    """
    clock = _Clock(timings)
    with clock("environment"):
        resets = _each(
            settings.workers, lambda env, ep: env.reset(ep.task, ep.variation, seed=ep.group), envs, episodes
        )
    observations = []
    for ep, (obs, info) in zip(episodes, resets):
        ep.description = info.task_description
        observations.append(obs)
    after: list[list[str]] = [[] for _ in episodes]
    budget = settings.max_sequence_tokens - settings.max_action_tokens if settings.max_sequence_tokens else 0
    turn = 0
    while True:
        active = [i for i, ep in enumerate(episodes) if not ep.done]
        if not active:
            return after
        with clock("prompting"):
            fitted = {
                i: _fit_user_turn(tokenizer, episodes[i], after[i], observations[i], settings, budget) for i in active
            }
            user_texts = {i: text for i, (text, _) in fitted.items()}
            no_tip_ids = {i: ids for i, (_, ids) in fitted.items()}
        with clock("retrieval"):
            shown, parts = _retrieve_tips(memory, episodes, user_texts, settings) if memory is not None else ({}, {})
        with clock("prompting"):
            prompt_ids = {}
            for i in active:
                tips = shown.get(i, ([], []))
                if tips[0]:
                    ids, shown[i] = _fit_tips(tokenizer, user_texts[i], tips, settings.system_prompt, budget)
                prompt_ids[i] = ids if tips[0] and shown[i][0] else no_tip_ids[i]
        with clock("generation"):
            generations = generate_from_ids(
                model,
                tokenizer,
                [prompt_ids[i] for i in active],
                settings.max_action_tokens,
                settings.temperature,
                _rows(generator, active),
                max_batch=settings.generation_batch,
            )
        with clock("environment"):
            results = _each(
                settings.workers, lambda env, gen: env.step(gen.text), [envs[i] for i in active], generations
            )
        for i, gen, (obs, reward, done, info) in zip(active, generations, results):
            ep = episodes[i]
            tips, tip_ids = shown.get(i, ([], []))
            split = [parts[i][t] for t in tip_ids]
            ep.steps.append(
                StepRecord(
                    observation=observations[i],
                    user_text=user_texts[i],
                    tips=tips,
                    tip_ids=tip_ids,
                    tip_texts=[text for text, _ in split],
                    tip_actions=[action for _, action in split],
                    prompt_ids=prompt_ids[i],
                    prompt_ids_no_tips=no_tip_ids[i],
                    action=gen.text,
                    executed_action=info.corrected_action or gen.text,
                    action_ids=gen.token_ids,
                    behaviour_logprobs=gen.logprobs,
                    reward=reward,
                    score=info.score,
                )
            )
            after[i].append(obs)
            observations[i] = obs
            if done:
                ep.done, ep.final_score, ep.success = True, info.score, info.success
                if on_episode_end is not None:
                    on_episode_end(i, after[i])
        turn += 1
        if on_step is not None:
            on_step(turn, len(active))


def _rows(generator: Sampler, rows: list[int]) -> Sampler:
    """The generators of the given episodes when there is one per episode, else the one."""
    if isinstance(generator, torch.Generator) or generator is None:
        return generator
    return [generator[i] for i in rows]


class _Clock:
    """Sums perf_counter time per phase into a dict (or nowhere): `with clock("generation"):`."""

    def __init__(self, sums: dict[str, float] | None):
        self.sums = sums

    @contextmanager
    def __call__(self, phase: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            if self.sums is not None:
                self.sums[phase] = self.sums.get(phase, 0.0) + time.perf_counter() - start


def _each(workers: int, call, envs, items) -> list:
    """call(env, item) for every pair, in order; on threads when workers > 1 (each env is used by
    one thread only, so environments need not be thread-safe, only independent), else in one
    hand-off to the environments' own thread when they have a step timeout (plugin.call_each)."""
    if workers <= 1 or len(envs) <= 1:
        return call_each(call, envs, items)
    with ThreadPoolExecutor(max_workers=min(workers, len(envs))) as pool:
        return list(pool.map(call, envs, items))


def _fit_user_turn(
    tokenizer, ep: Episode, after: list[str], observation: str, settings: RolloutSettings, budget: int
) -> tuple[str, list[int]]:
    """The user turn (no tips) and its prompt ids, shortened to `budget` tokens when set: the
    oldest history goes first (the most history that fits, found by bisection), then the
    current observation is halved until it fits or is one word."""

    def encoded(steps: int, words: int) -> tuple[str, list[int]]:
        text = step_user_text(ep.description, ep.turns(after, settings.raw_history_actions), observation, steps, words)
        return text, encode_chat(tokenizer, step_messages(text, settings.system_prompt))

    steps, words = settings.history_steps, settings.observation_words
    text, ids = encoded(steps, words)
    if budget <= 0 or len(ids) <= budget:
        return text, ids
    low, high = 0, min(steps, len(after))  # the largest history that fits lies in [low, high)
    best = None
    while low < high:
        mid = (low + high) // 2
        candidate = encoded(mid, words)
        if len(candidate[1]) <= budget:
            best, low = candidate, mid + 1
        else:
            high = mid
    if best is not None:
        return best
    # Without history it is still too long: clip the current observation (shown at 3× words).
    while words > 1:
        words = max(1, words // 2)
        text, ids = encoded(0, words)
        if len(ids) <= budget:
            break
    return text, ids


def _fit_tips(
    tokenizer, user_text: str, tips: tuple[list[str], list[str]], system: str, budget: int
) -> tuple[list[int], tuple[list[str], list[str]]]:
    """Prompt ids with the tip block, leaving out the lowest-ranked tips until it fits."""
    texts, ids = list(tips[0]), list(tips[1])
    while True:
        prompt = encode_chat(tokenizer, step_messages(with_tips(user_text, texts), system))
        if budget <= 0 or len(prompt) <= budget or not texts:
            return prompt, (texts, ids)
        texts, ids = texts[:-1], ids[:-1]


def _retrieve_tips(memory, episodes, user_texts, settings):
    """One batched retrieval per task variation: a matrix product over its buffer. Returns, per
    episode, the tips as shown (distinct_tips) and their parts (tip_parts). Only memory-mode
    episodes retrieve: with algo.memory_contrast=half a group's other half plays without tips."""
    by_key: dict[str, list[int]] = {}
    for i in user_texts:
        if episodes[i].rollout_mode == MEMORY:
            by_key.setdefault(episodes[i].variation_key, []).append(i)
    shown, parts = {}, {}
    for key, rows in by_key.items():
        results = memory.retrieve(
            key,
            [user_texts[i] for i in rows],
            threshold=settings.similarity_threshold,
            top_k=settings.top_k,
            keep_edited_actions=settings.keep_edited_tip_actions,
        )
        for i, retrieved in zip(rows, results):
            shown[i] = distinct_tips(retrieved, settings.show_score)
            parts[i] = tip_parts(retrieved)
    return shown, parts


def add_intrinsic_rewards(episodes: list[Episode], after: list[list[str]], reward_fn, embedder) -> None:
    """Novelty of every state an episode reached, per task variation (docs/paper.md §3).

    An iteration's states of one variation are scored in one call, jointly, against the archive
    as it stood before the iteration (algo/intrinsic.py, decision 3): an episode's reward does
    not depend on its place in the batch.
    """
    by_key: dict[str, list[tuple[int, int]]] = {}
    for e, ep in enumerate(episodes):
        for t in range(len(ep.steps)):
            by_key.setdefault(ep.variation_key, []).append((e, t))
    for key, cells in by_key.items():
        texts = [after[e][t] for e, t in cells]
        steps = np.array([t for _, t in cells], dtype=np.int64)
        # The reference variant pays only where retrieval happened: None in memory-free mode.
        n_tips = (
            np.array([len(episodes[e].steps[t].tip_ids) for e, t in cells])
            if any(episodes[e].rollout_mode == MEMORY for e, _ in cells)
            else None
        )
        embeddings = embedder.encode(texts) if reward_fn.needs_embeddings else None
        rewards = reward_fn.rewards(key, embeddings=embeddings, n_retrieved=n_tips, steps=steps)
        for (e, t), r in zip(cells, rewards):
            episodes[e].steps[t].intrinsic = float(r)


def write_tips(
    episodes: list[Episode],
    after: list[list[str]],
    model,
    tokenizer,
    settings: RolloutSettings,
    max_tip_tokens: int,
    generator: Sampler,
    on_written: Callable[[int], None] | None = None,
) -> None:
    """The current policy writes one tip per episode after a reflection instruction (with one
    generator per episode, episode e's tip is sampled from generator[e]). `model` may also be
    a `ScriptedTipWriter` (memory.tip_writer=scripted), which writes from the episodes' facts.
    on_written(n): the number of tips complete so far, as the policy writes them."""
    if isinstance(model, ScriptedTipWriter):
        model.write(episodes)
        if on_written is not None:
            on_written(len(episodes))
        return
    budget = settings.max_sequence_tokens - max_tip_tokens if settings.max_sequence_tokens else 0
    prompts = [_fit_reflection(tokenizer, ep, after[e], settings, budget) for e, ep in enumerate(episodes)]
    generations = generate_from_ids(
        model,
        tokenizer,
        prompts,
        max_tip_tokens,
        settings.temperature,
        generator,
        max_batch=settings.generation_batch,
        on_finished=on_written,
    )
    for ep, gen in zip(episodes, generations):
        ep.tip = gen.text


def _fit_reflection(tokenizer, ep: Episode, after: list[str], settings: RolloutSettings, budget: int) -> list[int]:
    """The reflection prompt, dropping the episode's oldest steps while it exceeds `budget`."""
    turns = ep.turns(after, settings.raw_history_actions)
    start = 0
    while True:
        ids = encode_chat(
            tokenizer,
            reflection_messages(
                ep.description,
                turns[start:],
                ep.final_score,
                settings.reflection_observation_words,
                settings.system_prompt,
            ),
        )
        if budget <= 0 or len(ids) <= budget or start >= len(turns):
            return ids
        start += max(1, (len(turns) - start) // 4)  # a quarter at a time: few encodes per tip


def step_prompts(tokenizer, ep: Episode, after: list[str], observation: str, settings: RolloutSettings, retrieve=None):
    """One step's prompts for a single episode, exactly as `roll_out` builds them: the fitted
    user turn (the memory key), its ids without tips, and, when `retrieve(user_text)` gives
    entries, the ids with the tip block and the retrieved entries of the tips shown.

    Returns (user_text, ids_no_tips, prompt_ids, (tip_texts, tip_ids), retrieved). The debugger
    plays one episode through this; `roll_out` batches the same steps across episodes.
    """
    budget = settings.max_sequence_tokens - settings.max_action_tokens if settings.max_sequence_tokens else 0
    user_text, no_tip_ids = _fit_user_turn(tokenizer, ep, after, observation, settings, budget)
    retrieved = list(retrieve(user_text)) if retrieve is not None else []
    shown = distinct_tips(retrieved, settings.show_score)
    prompt_ids = no_tip_ids
    if shown[0]:
        ids, shown = _fit_tips(tokenizer, user_text, shown, settings.system_prompt, budget)
        if shown[0]:
            prompt_ids = ids
    return user_text, no_tip_ids, prompt_ids, shown, retrieved
