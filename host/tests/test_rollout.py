"""The rollout played directly (docs/paper.md §2, steps 3–4): what every step records, the prompts
with and without tips, retrieval per task variation, the step limit, the sequence budget, the
episode and group bookkeeping, and the tips the policy writes.

The trainer tests play rollouts too, but they compare a run with another run of the same code, so
a wrong prompt or a misfiled step goes unnoticed there. Real parts here: the tiny built-in policy
(conftest), the built-in environment and the real memory store; the store's embedder is a test
double (KeyEmbedder, below, says why).
"""

from __future__ import annotations

import dataclasses
import threading
import time

import numpy as np
import pytest
import torch

from empo2.config import MemoryConfig, load_config
from empo2.envs.builtin.env import BuiltinEnv
from empo2.envs.textworld import TextWorldEnv
from empo2.memory.store import MemoryStore
from empo2.policy.generation import generate_from_ids, sequence_logprobs
from empo2.policy.model import load_policy
from empo2.policy.prompting import (
    SYSTEM_PROMPT,
    Turn,
    reflection_messages,
    shown_tip,
    step_messages,
    step_user_text,
    with_tips,
)
from empo2.policy.tokenizer import encode_chat
from empo2.training import rollout
from empo2.training.rollout import (
    MEMORY,
    MEMORY_FREE,
    Episode,
    RolloutSettings,
    StepRecord,
    _fit_reflection,
    _fit_tips,
    _fit_user_turn,
    episode_generator,
    roll_out,
    step_prompts,
    write_tips,
)

TASK = "power-device"


class KeyEmbedder:
    """Test double for the sentence embedder: one direction per distinct text, so a query finds
    an entry exactly when its text is the entry's key (cosine 1, else 0). With the real MiniLM the
    user turns of one episode's steps are all alike (cosine > 0.5), so which step retrieves which
    tip could not be pinned; it also takes seconds to load in every mutant's pytest session.
    `calls` records each encode call's texts (one batched retrieval per variation and turn)."""

    dim = 64

    def __init__(self):
        self.index: dict[str, int] = {}
        self.calls: list[list[str]] = []

    def encode(self, texts):
        texts = list(texts)
        self.calls.append(texts)
        rows = np.zeros((len(texts), self.dim), dtype=np.float32)
        for r, text in enumerate(texts):
            k = self.index.setdefault(text, len(self.index))
            assert k < self.dim, "more distinct texts than directions: raise dim"
            rows[r, k] = 1.0
        return rows


class RecordingEnv(BuiltinEnv):
    """The built-in environment, recording how the rollout drives it: its own reset ignores the
    seed (ScienceWorld and TextWorld use it), so the seed passed is checked from the record."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.resets: list[tuple[str, int, int]] = []
        self.actions: list[str] = []
        self.threads: set[int] = set()

    def reset(self, task, variation, seed=0):
        self.resets.append((task, variation, seed))
        self.threads.add(threading.get_ident())
        return super().reset(task, variation, seed=seed)

    # Seconds each step waits while counted as stepping (a simulator's latency), and the most
    # environments seen stepping at one time, over all instances.
    hold, stepping, most_at_once, lock = 0.0, 0, 0, threading.Lock()

    def step(self, action):
        self.actions.append(action)
        self.threads.add(threading.get_ident())
        cls = RecordingEnv
        with cls.lock:
            cls.stepping += 1
            cls.most_at_once = max(cls.most_at_once, cls.stepping)
        time.sleep(cls.hold)
        with cls.lock:
            cls.stepping -= 1
        return super().step(action)


class PayingEnv(RecordingEnv):
    """The built-in world, paying 10 points per move: the tiny policy scores nothing in a few
    steps of the real worlds, so recorded rewards and scores of 0 would pass whether the rollout
    records them or not. Everything but the score is the built-in environment's."""

    def _score(self) -> float:
        return 10.0 * (self.moves + 1)  # called before the move is counted


@pytest.fixture(scope="module")
def policy(tiny_policy):
    return load_policy(str(tiny_policy))


def make_settings(**changes) -> RolloutSettings:
    """Training-rollout settings of the built-in config (6-token actions), with `changes`."""
    base = RolloutSettings.from_config(load_config({"policy": {"max_action_tokens": 6}}), BuiltinEnv(), train=True)
    return dataclasses.replace(base, **changes)


def episodes_of(specs, mode=MEMORY_FREE) -> list[Episode]:
    return [
        Episode(id=f"e{k}", task=task, variation=variation, group=group, rollout_mode=mode)
        for k, (task, variation, group) in enumerate(specs)
    ]


def play(policy, specs, settings, memory=None, max_steps=(3,), generators=None, env=RecordingEnv, **kwargs):
    """Rolls out one episode per (task, variation, group) spec; env k has max_steps[k] (or the
    one value). Returns the episodes, the observations after each step, and the envs."""
    model, tokenizer = policy
    episodes = episodes_of(specs, MEMORY if memory is not None else MEMORY_FREE)
    envs = [env(max_steps=max_steps[k % len(max_steps)]) for k in range(len(specs))]
    if generators is None:
        generators = [episode_generator(0, k) for k in range(len(specs))]
    after = roll_out(envs, episodes, model, tokenizer, settings, generators, memory, **kwargs)
    return episodes, after, envs


def first_user_text(task: str, variation: int, settings: RolloutSettings) -> str:
    """The user turn (no tips) of an episode's first step: the memory key it retrieves with."""
    observation, info = BuiltinEnv().reset(task, variation)
    return step_user_text(info.task_description, [], observation, settings.history_steps, settings.observation_words)


def ids_of(tokenizer, user_text: str, settings: RolloutSettings, tips=()) -> list[int]:
    return encode_chat(tokenizer, step_messages(with_tips(user_text, list(tips)), settings.system_prompt))


def actions_of(episodes) -> list[list[str]]:
    return [[s.action for s in ep.steps] for ep in episodes]


def spy_generation(monkeypatch) -> list[dict]:
    """Records every call the rollout makes to the real `generate_from_ids` (its arguments and
    what it returned) and passes it on unchanged: which prompts were decoded together, at what
    temperature, with which generator, in batches of how many."""
    calls: list[dict] = []

    def spy(
        model, tokenizer, prompt_ids, max_new_tokens, temperature=1.0, generator=None, max_batch=64, on_finished=None
    ):
        out = generate_from_ids(
            model,
            tokenizer,
            prompt_ids,
            max_new_tokens,
            temperature,
            generator,
            max_batch=max_batch,
            on_finished=on_finished,
        )
        calls.append(
            {
                "prompts": [list(p) for p in prompt_ids],
                "tokens": max_new_tokens,
                "temperature": temperature,
                "generator": generator,
                "max_batch": max_batch,
                "out": out,
            }
        )
        return out

    monkeypatch.setattr(rollout, "generate_from_ids", spy)
    return calls


# --- memory-free rollouts: what each step records ------------------------------------------------


def test_each_step_records_what_the_policy_saw_sampled_and_the_environment_did(policy):
    model, tokenizer = policy
    settings = make_settings()
    specs = [(TASK, 0, 0), (TASK, 0, 0), ("grow-plant", 1, 1)]
    episodes, after, envs = play(policy, specs, settings, env=PayingEnv)
    for ep, obs_after, env, (task, variation, group) in zip(episodes, after, envs, specs):
        assert env.resets == [(task, variation, group)]  # the group is the environment's seed
        first, info = BuiltinEnv().reset(task, variation)
        assert ep.description == info.task_description and ep.rollout_mode == MEMORY_FREE
        assert ep.done and 1 <= len(ep.steps) <= 3 and len(obs_after) == len(ep.steps)
        assert len(ep.steps) == 3 or ep.success  # only the step limit or success ends it
        replay, score = PayingEnv(), 0.0
        replay.reset(task, variation)
        for t, step in enumerate(ep.steps):
            assert step.observation == (first if t == 0 else obs_after[t - 1])
            history = [Turn(s.executed_action, o) for s, o in zip(ep.steps[:t], obs_after)]
            assert step.user_text == step_user_text(
                ep.description, history, step.observation, settings.history_steps, settings.observation_words
            )
            assert step.prompt_ids_no_tips == ids_of(tokenizer, step.user_text, settings)
            assert step.prompt_ids == step.prompt_ids_no_tips  # memory-free: no tip block
            assert step.tips == step.tip_ids == step.tip_texts == step.tip_actions == []
            assert 1 <= len(step.action_ids) <= settings.max_action_tokens
            assert len(step.behaviour_logprobs) == len(step.action_ids)
            # The environment got the policy's own text; the record keeps what it executed.
            assert env.actions[t] == step.action
            observation, reward, done, info = replay.step(step.action)
            assert obs_after[t] == observation
            assert step.executed_action == (info.corrected_action or step.action)
            assert (step.reward, step.score, step.intrinsic) == (reward, info.score, 0.0)
            score += reward
        assert (ep.final_score, ep.success) == (score, info.success) == (env.score, env.used)
        assert [s.reward for s in ep.steps] == [10.0] * len(ep.steps) and score == 10.0 * len(ep.steps)
    # The tiny policy's raw text is sometimes not a valid action: corrections were exercised.
    assert any(s.executed_action != s.action for ep in episodes for s in ep.steps)
    # Behaviour log-probs are the sampler's: log π(a | prompt) at the rollout's temperature.
    steps = [s for ep in episodes for s in ep.steps]
    logp, _, mask = sequence_logprobs(
        model,
        [s.prompt_ids for s in steps],
        [s.action_ids for s in steps],
        temperature=settings.temperature,
        with_entropy=False,
        pad_id=tokenizer.pad_token_id,
    )
    for row, step in enumerate(steps):
        n = len(step.action_ids)
        assert step.behaviour_logprobs == pytest.approx(logp[row, :n].tolist(), abs=1e-4)


def test_the_step_limit_ends_each_episode_and_the_batch_shrinks_as_they_end(policy, monkeypatch):
    calls, timings = [], {}
    generations = spy_generation(monkeypatch)
    settings = make_settings(generation_batch=2, temperature=0.7)
    episodes, after, envs = play(
        policy,
        [(TASK, 0, 0), (TASK, 1, 1), (TASK, 2, 2)],
        settings,
        max_steps=(1, 3, 2),
        on_step=lambda t, n: calls.append((t, n)),
        timings=timings,
    )
    lengths = [len(ep.steps) for ep in episodes]
    # One generation call per turn: the unfinished episodes' prompts, in episode order.
    assert [g["prompts"] for g in generations] == [
        [ep.steps[t].prompt_ids for ep in episodes if len(ep.steps) > t] for t in range(max(lengths))
    ]
    assert all(
        (g["tokens"], g["temperature"], g["max_batch"]) == (settings.max_action_tokens, 0.7, 2) for g in generations
    )
    for t, generation in enumerate(generations):  # each row's sample is recorded on its episode
        playing = [ep for ep in episodes if len(ep.steps) > t]
        for ep, sample in zip(playing, generation["out"]):
            step = ep.steps[t]
            assert (step.action, step.action_ids, step.behaviour_logprobs) == (
                sample.text,
                sample.token_ids,
                sample.logprobs,
            )
    assert lengths == [env.moves for env in envs] and all(ep.done for ep in episodes)
    assert all(n == limit or ep.success for n, limit, ep in zip(lengths, (1, 3, 2), episodes))
    # on_step(turn, episodes played in that turn), once per turn, turns counted from 1.
    assert calls == [(t, sum(n >= t for n in lengths)) for t in range(1, max(lengths) + 1)]
    assert set(timings) == {"environment", "prompting", "retrieval", "generation"}
    assert all(seconds > 0 for seconds in timings.values())
    again: dict[str, float] = dict(timings)
    play(policy, [(TASK, 0, 0)], make_settings(), max_steps=(1,), timings=again)
    assert all(again[phase] > timings[phase] for phase in timings)  # sums, not overwrites


def test_an_episode_plays_the_same_alone_or_in_a_batch_with_its_own_generator(policy):
    specs = [(TASK, 0, 0), (TASK, 3, 1), ("grow-plant", 2, 2)]
    settings = make_settings()
    limits = (1, 3, 2)  # batch-mates that end early leave the others their own generators
    batch, _, _ = play(policy, specs, settings, max_steps=limits)
    for k, spec in enumerate(specs):
        alone, _, _ = play(policy, [spec], settings, max_steps=limits[k : k + 1], generators=[episode_generator(0, k)])
        assert actions_of(alone) == actions_of(batch[k : k + 1])
        assert alone[0].steps[0].behaviour_logprobs == pytest.approx(batch[k].steps[0].behaviour_logprobs, abs=1e-5)
    # One generator for the whole batch also works, and reproduces from its seed.
    one = [play(policy, specs, settings, generators=torch.Generator().manual_seed(7))[0] for _ in range(2)]
    assert actions_of(one[0]) == actions_of(one[1])
    assert all(ep.done for ep in play(policy, specs[:2], settings, generators=None, max_steps=(1,))[0])


def test_environment_threads_give_the_same_episodes_and_workers_1_uses_none(policy):
    specs = [(TASK, 0, 0), (TASK, 1, 1), ("grow-plant", 1, 2)]
    serial, serial_after, serial_envs = play(policy, specs, make_settings(workers=1))
    threaded, threaded_after, threaded_envs = play(policy, specs, make_settings(workers=2))
    assert actions_of(threaded) == actions_of(serial) and threaded_after == serial_after
    main = threading.get_ident()
    assert all(env.threads == {main} for env in serial_envs)
    assert all(main not in env.threads for env in threaded_envs)
    _, _, pair_envs = play(policy, specs[:2], make_settings(workers=2), max_steps=(1,))
    assert all(main not in env.threads for env in pair_envs)
    # At most `workers` environments step at once (each a simulator process on real benchmarks).
    RecordingEnv.hold, RecordingEnv.most_at_once = 0.05, 0
    try:
        play(policy, specs, make_settings(workers=2), max_steps=(1,))
    finally:
        RecordingEnv.hold = 0.0
    assert RecordingEnv.most_at_once == 2
    single, _, single_envs = play(policy, specs[:1], make_settings(workers=4))
    assert single_envs[0].threads == {main}  # one environment: nothing to overlap


def test_history_shows_the_executed_action_or_the_raw_text_as_configured():
    ep = Episode(id="e", task=TASK, variation=0, group=0, rollout_mode=MEMORY_FREE)
    for raw, executed in [("go to kichen", "go to kitchen"), ("look", "look")]:
        ep.steps.append(
            StepRecord(
                observation="",
                user_text="",
                tips=[],
                tip_ids=[],
                prompt_ids=[],
                prompt_ids_no_tips=[],
                action=raw,
                executed_action=executed,
                action_ids=[],
                behaviour_logprobs=[],
            )
        )
    after = ["you are in the kitchen", "nothing here"]
    assert ep.turns(after) == [Turn("go to kitchen", after[0]), Turn("look", after[1])]
    assert ep.turns(after, raw=True) == [Turn("go to kichen", after[0]), Turn("look", after[1])]
    assert ep.turns(after[:1]) == [Turn("go to kitchen", after[0])]  # steps seen so far only
    assert ep.variation_key == f"{TASK}/0"


# --- memory rollouts: tips in the prompt, retrieval per variation --------------------------------


def tip_store(settings):
    """A store whose tips are keyed by the first user turns of power-device variations 0 and 1:
    variation 0 has three tips (scores 9, 5, 1) and variation 1 one, plus one keyed by
    variation 0's first turn but filed under variation 1 (retrieval must not cross variations)."""
    v0, v1 = first_user_text(TASK, 0, settings), first_user_text(TASK, 1, settings)
    store = MemoryStore(KeyEmbedder(), capacity=10)
    tips = {
        "best": store.add_episode_tip(f"{TASK}/0", "the battery is in the attic", [(v0, "go to attic")], score=9.0),
        "middle": store.add_episode_tip(f"{TASK}/0", "look around the kitchen", [(v0, "look around")], score=5.0),
        "worst": store.add_episode_tip(f"{TASK}/0", "open the box", [(v0, "go to hallway")], score=1.0),
        "other": store.add_episode_tip(f"{TASK}/1", "open the shed", [(v1, "open shed")], score=3.0),
        "crossed": store.add_episode_tip(f"{TASK}/1", "take the sock", [(v0, "take sock")], score=50.0),
    }
    return store, tips, v0, v1


def test_memory_mode_puts_the_retrieved_tips_into_the_prompt_and_records_them(policy):
    _, tokenizer = policy
    settings = make_settings(top_k=2, system_prompt="you are an agent in a world .")
    store, tips, v0, v1 = tip_store(settings)
    store.embedder.calls.clear()
    episodes, after, _ = play(policy, [(TASK, 0, 0), (TASK, 1, 1), (TASK, 0, 2)], settings, memory=store)
    assert all(ep.rollout_mode == MEMORY for ep in episodes)
    # One retrieval per variation and turn, all of that variation's episodes in one call.
    assert store.embedder.calls[:2] == [[v0, v0], [v1]]
    expected = {
        0: [
            ("best", "the battery is in the attic", "go to attic"),  # top_k 2, best score first
            ("middle", "look around the kitchen", "look around"),
        ],
        1: [("other", "open the shed", "open shed")],
    }
    for ep in episodes:
        first, *later = ep.steps
        want = expected[ep.variation]
        # memory.show_score (default): each tip ends with its entry's episode score.
        shown = [shown_tip(text, action, tips[name].score) for name, text, action in want]
        assert first.user_text == (v0 if ep.variation == 0 else v1)  # the key: no tips in it
        assert first.tips == shown and first.tip_ids == [tips[name].id for name, _, _ in want]
        assert first.tip_texts == [text for _, text, _ in want]
        assert first.tip_actions == [action for _, _, action in want]
        assert first.prompt_ids == ids_of(tokenizer, first.user_text, settings, shown)
        assert first.prompt_ids_no_tips == ids_of(tokenizer, first.user_text, settings)
        assert first.prompt_ids != first.prompt_ids_no_tips
        for step in later:  # later user turns are keys of no entry: no tips, one prompt
            assert step.tips == step.tip_ids == [] and step.prompt_ids == step.prompt_ids_no_tips
    # The behaviour log-probs were sampled from the prompt with tips.
    model, _ = policy
    step = episodes[0].steps[0]
    with_block, _, _ = sequence_logprobs(
        model, [step.prompt_ids], [step.action_ids], with_entropy=False, pad_id=tokenizer.pad_token_id
    )
    assert step.behaviour_logprobs == pytest.approx(with_block[0, : len(step.action_ids)].tolist(), abs=1e-4)


def test_the_configured_threshold_and_edited_tip_actions_reach_retrieval(policy):
    settings = make_settings(similarity_threshold=1.0)  # cosine 1 is not > 1: nothing retrieved
    store, tips, _, _ = tip_store(settings)
    episodes, _, _ = play(policy, [(TASK, 0, 0)], settings, memory=store, max_steps=(1,))
    assert episodes[0].steps[0].tip_ids == []
    best = tips["best"]
    store.update(best.id, "the battery is in the garage", best.version, author="ana")
    # A person's text: its action and its episode's score dropped, unless kept as any entry's.
    for keep, action, score in [(False, "", None), (True, "go to attic", 9.0)]:
        settings = make_settings(similarity_threshold=0.99, top_k=1, keep_edited_tip_actions=keep)
        step = play(policy, [(TASK, 0, 0)], settings, memory=store, max_steps=(1,))[0][0].steps[0]
        assert step.tip_ids == [best.id] and step.tip_actions == [action]
        assert step.tips == [shown_tip("the battery is in the garage", action, score)]


def test_the_sequence_budget_leaves_out_the_lowest_ranked_tips_then_all(policy):
    _, tokenizer = policy
    base = make_settings(top_k=3)
    store, tips, v0, _ = tip_store(base)
    best = shown_tip("the battery is in the attic", "go to attic", 9.0)
    middle = shown_tip("look around the kitchen", "look around", 5.0)
    fits_two = len(ids_of(tokenizer, v0, base, [best, middle]))
    settings = dataclasses.replace(base, max_sequence_tokens=fits_two + base.max_action_tokens)
    step = play(policy, [(TASK, 0, 0)], settings, memory=store, max_steps=(1,))[0][0].steps[0]
    assert step.tip_ids == [tips["best"].id, tips["middle"].id] and step.tips == [best, middle]
    assert step.prompt_ids == ids_of(tokenizer, v0, base, [best, middle])
    # No room for any tip: the prompt without tips, and no tip recorded as shown.
    no_room = len(ids_of(tokenizer, v0, base)) + base.max_action_tokens
    step = play(
        policy, [(TASK, 0, 0)], dataclasses.replace(base, max_sequence_tokens=no_room), memory=store, max_steps=(1,)
    )[0][0].steps[0]
    assert step.tip_ids == step.tips == step.tip_texts == [] and step.prompt_ids == step.prompt_ids_no_tips


def test_step_prompts_builds_each_step_exactly_as_the_rollout_did(policy):
    _, tokenizer = policy
    # Without scores: the budget below is reckoned on these exact tip lengths.
    base = make_settings(top_k=3, history_steps=2, show_score=False)
    tips = [
        shown_tip("the battery is in the attic", "go to attic"),
        shown_tip("look around the kitchen", "look around"),
        shown_tip("open the box", "go to hallway"),
    ]
    v0 = first_user_text(TASK, 0, base)
    two_fit = len(ids_of(tokenizer, v0, base, tips[:2])) + base.max_action_tokens
    # A budget reckoned with the action's tokens added, not taken off, would show the third tip.
    assert len(ids_of(tokenizer, v0, base, tips)) <= two_fit + base.max_action_tokens
    for budget, shown_first in [(0, 3), (two_fit, 2)]:
        settings = dataclasses.replace(base, max_sequence_tokens=budget)
        store, _, _, _ = tip_store(settings)
        episodes, after, _ = play(policy, [(TASK, 0, 0)], settings, memory=store)
        ep, seen = episodes[0], after[0]

        def retrieve(user_text, store=store, ep=ep, settings=settings):  # bound to this budget's run
            return store.retrieve(
                ep.variation_key, [user_text], threshold=settings.similarity_threshold, top_k=settings.top_k
            )[0]

        for t, step in enumerate(ep.steps):
            user_text, no_tips, prompt, shown, retrieved = step_prompts(
                tokenizer, ep, seen[:t], step.observation, settings, retrieve
            )
            assert (user_text, no_tips, prompt) == (step.user_text, step.prompt_ids_no_tips, step.prompt_ids)
            assert shown == (step.tips, step.tip_ids)
            assert [r.tip_id for r in retrieved] == [r.tip_id for r in retrieve(user_text)]
            assert budget == 0 or len(prompt) <= budget - settings.max_action_tokens
        assert len(ep.steps[0].tips) == shown_first
        assert step_prompts(tokenizer, ep, [], ep.steps[0].observation, settings)[1:4] == (
            ep.steps[0].prompt_ids_no_tips,
            ep.steps[0].prompt_ids_no_tips,
            ([], []),
        )


# --- the sequence budget: user turn, tips, reflection --------------------------------------------


def long_episode(n: int, raw_suffix: str = "") -> tuple[Episode, list[str]]:
    ep = Episode(id="e", task=TASK, variation=0, group=0, rollout_mode=MEMORY_FREE, description="turn on the lamp")
    for t in range(n):
        ep.steps.append(
            StepRecord(
                observation="",
                user_text="",
                tips=[],
                tip_ids=[],
                prompt_ids=[],
                prompt_ids_no_tips=[],
                action=f"go to garden {t}{raw_suffix}",
                executed_action=f"go to garden {t}",
                action_ids=[],
                behaviour_logprobs=[],
            )
        )
    # Words of the tiny policy's vocabulary (others all read as one unknown token).
    return ep, [f"you are in the garden . here : a box {t} . exits : hallway , kitchen" for t in range(n)]


def user_ids(tokenizer, ep, after, observation, steps, words, raw=False):
    text = step_user_text(ep.description, ep.turns(after, raw), observation, steps, words)
    return text, encode_chat(tokenizer, step_messages(text, SYSTEM_PROMPT))


def test_the_user_turn_keeps_the_most_recent_history_that_fits(policy):
    _, tokenizer = policy
    ep, after = long_episode(12, raw_suffix=" box")
    settings = make_settings(history_steps=8, observation_words=10)
    obs = "you are in the hall"
    lengths = [len(user_ids(tokenizer, ep, after, obs, k, 10)[1]) for k in range(9)]
    full = user_ids(tokenizer, ep, after, obs, 8, 10)
    assert _fit_user_turn(tokenizer, ep, after, obs, settings, 0) == full  # no budget
    assert _fit_user_turn(tokenizer, ep, after, obs, settings, lengths[8]) == full  # exactly fits
    for k in (0, 3, 7):  # a budget that fits k steps but not k + 1 keeps the last k
        assert _fit_user_turn(tokenizer, ep, after, obs, settings, lengths[k]) == user_ids(
            tokenizer, ep, after, obs, k, 10
        )
        assert _fit_user_turn(tokenizer, ep, after, obs, settings, lengths[k + 1] - 1) == user_ids(
            tokenizer, ep, after, obs, k, 10
        )
    own = dataclasses.replace(settings, system_prompt="you are an agent")  # the environment's prompt
    assert _fit_user_turn(tokenizer, ep, after, obs, own, 0) == (
        full[0],
        encode_chat(tokenizer, step_messages(full[0], "you are an agent")),
    )
    raw = dataclasses.replace(settings, raw_history_actions=True)
    text, _ = _fit_user_turn(tokenizer, ep, after, obs, raw, 0)
    assert text == user_ids(tokenizer, ep, after, obs, 8, 10, raw=True)[0] and "garden 11 box" in text


def test_without_history_room_the_observation_is_halved_until_it_fits(policy):
    _, tokenizer = policy
    ep, after = long_episode(2)
    settings = make_settings(history_steps=2, observation_words=40)
    obs = " ".join(f"lamp{w}" for w in range(200))
    clipped = {w: user_ids(tokenizer, ep, after, obs, 0, w) for w in (40, 20, 10, 5, 2, 1)}
    # History is dropped first; then 20, 10, 5 ... words until the prompt fits.
    assert _fit_user_turn(tokenizer, ep, after, obs, settings, len(clipped[40][1])) == clipped[40]
    assert _fit_user_turn(tokenizer, ep, after, obs, settings, len(clipped[20][1])) == clipped[20]
    assert _fit_user_turn(tokenizer, ep, after, obs, settings, len(clipped[10][1]) + 1) == clipped[10]
    assert _fit_user_turn(tokenizer, ep, after, obs, settings, len(clipped[2][1])) == clipped[2]
    # Even one word is too long: the one-word turn, over budget (the caller's limit is soft).
    for tight in (5, 1):
        assert _fit_user_turn(tokenizer, ep, after, obs, settings, tight) == clipped[1]


def test_tips_are_left_out_from_the_lowest_ranked_until_the_prompt_fits(policy):
    _, tokenizer = policy
    user = "task : turn on the lamp . now : you are in the hall"
    tips = (["the fan is in the garage", "take the cup", "open the oven and cook the potato"], ["a", "b", "c"])
    settings = make_settings()
    length = {n: len(ids_of(tokenizer, user, settings, tips[0][:n])) for n in range(4)}
    assert _fit_tips(tokenizer, user, tips, SYSTEM_PROMPT, 0) == (ids_of(tokenizer, user, settings, tips[0]), tips)
    for n in (3, 2, 1):
        fitted = _fit_tips(tokenizer, user, tips, SYSTEM_PROMPT, length[n])
        assert fitted == (ids_of(tokenizer, user, settings, tips[0][:n]), (tips[0][:n], tips[1][:n]))
    for tight in (length[1] - 1, 1):  # not even the best tip fits: none shown
        assert _fit_tips(tokenizer, user, tips, SYSTEM_PROMPT, tight) == (ids_of(tokenizer, user, settings), ([], []))
    assert _fit_tips(tokenizer, user, tips, "you are an agent", 0)[0] == encode_chat(
        tokenizer, step_messages(with_tips(user, tips[0]), "you are an agent")
    )
    assert tips == (["the fan is in the garage", "take the cup", "open the oven and cook the potato"], ["a", "b", "c"])


def reflection_ids(tokenizer, ep, after, settings, start=0):
    return encode_chat(
        tokenizer,
        reflection_messages(
            ep.description,
            ep.turns(after)[start:],
            ep.final_score,
            settings.reflection_observation_words,
            settings.system_prompt,
        ),
    )


def test_the_reflection_drops_the_oldest_quarter_of_the_steps_at_a_time(policy):
    _, tokenizer = policy
    ep, after = long_episode(12)
    ep.final_score = 42.0
    settings = make_settings()
    full = reflection_ids(tokenizer, ep, after, settings)
    assert _fit_reflection(tokenizer, ep, after, settings, 0) == full
    assert _fit_reflection(tokenizer, ep, after, settings, len(full)) == full
    # Starts tried: 0, then +12//4 = 3, then +9//4 = 5, then one at a time (6, 7, ...).
    at = {s: reflection_ids(tokenizer, ep, after, settings, s) for s in (3, 5, 6, 12)}
    assert _fit_reflection(tokenizer, ep, after, settings, len(full) - 1) == at[3]
    assert _fit_reflection(tokenizer, ep, after, settings, len(at[3]) - 1) == at[5]
    assert _fit_reflection(tokenizer, ep, after, settings, len(at[5]) - 1) == at[6]
    for tight in (3, 1):  # nothing fits: the reflection without steps
        assert _fit_reflection(tokenizer, ep, after, settings, tight) == at[12]
    raw = dataclasses.replace(
        settings, raw_history_actions=True, reflection_observation_words=2, system_prompt="you are an agent"
    )
    ep.steps[0].action = "go to attic"
    assert _fit_reflection(tokenizer, ep, after, raw, 0) == encode_chat(
        tokenizer, reflection_messages(ep.description, ep.turns(after, raw=True), 42.0, 2, "you are an agent")
    )


def test_each_episode_gets_the_tip_its_reflection_prompt_gives(policy, monkeypatch):
    model, tokenizer = policy
    episodes, after, _ = play(policy, [(TASK, 0, 0), ("grow-plant", 1, 1)], make_settings())
    calls = spy_generation(monkeypatch)
    settings = make_settings(temperature=0.3, generation_batch=1)
    generators = [episode_generator(5, e) for e in range(2)]
    write_tips(episodes, after, model, tokenizer, settings, 8, generators)
    prompts = [reflection_ids(tokenizer, ep, a, settings) for ep, a in zip(episodes, after)]
    (call,) = calls
    assert call["prompts"] == prompts and call["generator"] is generators
    assert (call["tokens"], call["temperature"], call["max_batch"]) == (8, 0.3, 1)
    batch_tips = [ep.tip for ep in episodes]
    assert batch_tips == [g.text for g in call["out"]]
    # With a sequence limit the reflection is fitted into it less the tip's tokens.
    tight = dataclasses.replace(settings, max_sequence_tokens=len(prompts[0]) - 1 + 8)
    write_tips(episodes[:1], after[:1], model, tokenizer, tight, 8, None)
    fitted = _fit_reflection(tokenizer, episodes[0], after[0], tight, len(prompts[0]) - 1)
    assert calls[1]["prompts"] == [fitted] and len(fitted) < len(prompts[0])
    assert episodes[0].tip == calls[1]["out"][0].text
    # Sampled from each episode's own generator: the same tip alone as in the batch.
    for e in range(2):
        alone = [dataclasses.replace(episodes[e])]
        write_tips(alone, after[e : e + 1], model, tokenizer, settings, 8, [episode_generator(5, e)])
        assert alone[0].tip == batch_tips[e]


# --- settings and sampling streams ----------------------------------------------------------------


def test_every_rollout_setting_comes_from_its_config_key():
    config = load_config(
        {
            "policy": {
                "max_action_tokens": 7,
                "temperature": 0.9,
                "eval_temperature": 0.3,
                "history_steps": 5,
                "observation_words": 11,
                "max_sequence_tokens": 900,
                "generation_batch": 13,
                "reflection_observation_words": 4,
                "history_action": "raw",
            },
            "memory": {
                "similarity_threshold": 0.7,
                "top_k": 3,
                "edited_tip_actions": "keep",
                "key": "episode",
                "show_score": False,
            },
            "env": {"workers": 2},
        }
    )
    train = RolloutSettings.from_config(config, BuiltinEnv(), train=True)
    assert train == RolloutSettings(
        max_action_tokens=7,
        temperature=0.9,
        history_steps=5,
        observation_words=11,
        similarity_threshold=0.7,
        top_k=3,
        keep_edited_tip_actions=True,
        system_prompt=SYSTEM_PROMPT,
        max_sequence_tokens=900,
        workers=2,
        generation_batch=13,
        reflection_observation_words=4,
        raw_history_actions=True,
        memory_key="episode",
        show_score=False,
    )
    evaluation = RolloutSettings.from_config(config, BuiltinEnv(), train=False)
    assert evaluation == dataclasses.replace(train, temperature=0.3)
    default = RolloutSettings.from_config(load_config("builtin"), BuiltinEnv(), train=True)
    assert not default.keep_edited_tip_actions and not default.raw_history_actions
    assert MemoryConfig().show_score  # as the reference code's entries show it
    assert not default.show_score  # the built-in presets: their policy's demonstrations show none
    game = TextWorldEnv()  # an environment with its own instructions: they are the system prompt
    assert RolloutSettings.from_config(config, game, train=True).system_prompt == game.instructions() != SYSTEM_PROMPT


def test_an_episode_stream_is_seeded_by_its_whole_key_alone():
    def draws(*key):
        return torch.rand(4, generator=episode_generator(*key)).tolist()

    assert draws(3, 1, 7, 2) == draws(3, 1, 7, 2) == draws(np.int64(3), 1, 7, 2)
    others = [draws(3, 1, 7, 3), draws(3, 1, 8, 2), draws(2, 1, 7, 2), draws(2, 7, 1, 3), draws(3, 1, 7)]
    assert all(d != draws(3, 1, 7, 2) for d in others)
    seed = np.random.SeedSequence([3, 1, 7, 2]).generate_state(1, np.uint64)[0]
    assert episode_generator(3, 1, 7, 2).initial_seed() == int(seed)
