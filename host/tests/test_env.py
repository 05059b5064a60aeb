"""The environment interface and the built-in worlds."""

from __future__ import annotations

import random

import pytest

from empo2.envs.base import correct_action, jaccard, words
from empo2.envs.builtin.env import BuiltinEnv, lists_exits
from empo2.envs.builtin.tasks import (
    HABIT_ROOMS,
    TASK_KINDS,
    in_distribution_tasks,
    out_of_distribution_tasks,
)
from empo2.envs.builtin.world import generate_world
from empo2.policy.demos import BEHAVIOURS, PromptShape, demonstration_examples, play_demo


def test_splits_sizes_and_the_held_out_kind():
    env = BuiltinEnv()
    assert len(in_distribution_tasks()) >= 3 and len(out_of_distribution_tasks()) >= 1
    for task in env.tasks():
        assert len(env.variations(task, "train")) >= 5
        assert len(env.variations(task, "test")) >= 10
        assert not set(env.variations(task, "train")) & set(env.variations(task, "test"))
    with pytest.raises(ValueError, match="unknown split"):
        env.variations("power-device", "dev")
    with pytest.raises(ValueError, match="unknown built-in task"):
        env.reset("no-such-task", 0)


@pytest.mark.parametrize("task", list(TASK_KINDS))
def test_gold_sequence_reaches_full_score_with_score_delta_rewards(task):
    env = BuiltinEnv()
    for variation in env.variations(task, "all"):
        obs, info = env.reset(task, variation)
        assert info.score == 0 and info.valid_actions and info.task_description
        total = 0.0
        for action in env.world.gold_actions():
            assert action in info.valid_actions
            obs, reward, done, info = env.step(action)
            total += reward
            assert -100 <= info.score <= 100
        assert done and info.success and info.score == 100 and total == 100


def test_items_never_hide_where_the_warm_start_looks():
    for kind in TASK_KINDS.values():
        for variation in list(range(5)) + list(range(100, 120)):
            world = generate_world(kind, variation)
            assert world.item_room == kind.hiding_room
            assert world.item_room not in HABIT_ROOMS


def test_worlds_are_deterministic_and_varied():
    kind = TASK_KINDS["power-device"]
    a, b = generate_world(kind, 3), generate_world(kind, 3)
    assert (a.rooms, a.container_of, a.contents, a.item_room) == (b.rooms, b.container_of, b.contents, b.item_room)
    layouts = {tuple(generate_world(kind, v).rooms) for v in range(100, 120)}
    assert len(layouts) > 10


def test_action_correction_by_word_overlap():
    valid = ["look around", "go to kitchen", "open drawer", "take battery"]
    assert correct_action("go kitchen", valid) == "go to kitchen"
    assert correct_action("Take  the battery", valid) == "take battery"
    assert correct_action("open drawer", valid) == "open drawer"
    assert jaccard(words("a b"), words("b c")) == pytest.approx(1 / 3)
    env = BuiltinEnv()
    env.reset("power-device", 0)
    _, _, _, info = env.step("go the kitchen please")
    assert info.corrected_action == "go to kitchen"
    strict = BuiltinEnv(correct_actions=False)
    strict.reset("power-device", 0)
    obs, reward, _, info = strict.step("dance")
    assert obs == "nothing happens ." and reward == 0 and info.corrected_action is None


def test_step_limit_ends_the_episode():
    env = BuiltinEnv(max_steps=4)
    env.reset("grow-plant", 1)
    dones = [env.step("look around")[2] for _ in range(4)]
    assert dones == [False, False, False, True]
    assert env.step("look around")[2] is True


def test_only_a_rooms_description_lists_the_exits():
    env = BuiltinEnv(correct_actions=False)
    first, _ = env.reset("power-device", 1)
    w = env.world
    other = next(r for r in w.rooms if r != env.room)
    entered = env.step(f"go to {other}")[0]
    opened = env.step(f"open {w.container_of[other]}")[0]
    assert lists_exits(first) and lists_exits(entered)
    assert not lists_exits(opened) and not lists_exits(env.step("fly to the moon")[0])


def test_using_the_target_before_the_item_does_nothing():
    env = BuiltinEnv()
    env.reset("heat-food", 2)
    w = env.world
    env.step(f"go to {w.target_room}") if env.room != w.target_room else None
    obs, reward, done, info = env.step(f"{w.kind.use_verb} {w.target}")
    assert reward == 0 and not done and "needs" in obs


def test_random_play_rarely_solves_a_task():
    """Exploration is the bottleneck: uniform random play succeeds in few episodes."""
    env, rng, wins, n = BuiltinEnv(), random.Random(0), 0, 300
    for k in range(n):
        obs, info = env.reset(in_distribution_tasks()[k % 3], k % 5)
        done = False
        while not done:
            obs, _, done, info = env.step(rng.choice(info.valid_actions))
        wins += info.success
    assert wins / n < 0.1


def episode_world(episode):
    return generate_world(TASK_KINDS[episode.task], episode.variation, BEHAVIOURS[episode.behaviour])


def test_demonstrations_cover_behaviours_and_never_show_the_held_out_kind():
    rng = random.Random(0)
    for behaviour in BEHAVIOURS:
        episode = play_demo("power-device", 10_001, behaviour, rng, PromptShape(), 15)
        assert episode.steps and episode.tip
        if behaviour in ("habit", "tip-success", "tip-failure"):
            assert episode.final_score == 100
        elif behaviour == "stuck":  # delivers the decoy in vain: 15 + 15 - 20
            assert episode.final_score == 10 and "no" in episode.tip
            assert f"take {episode_world(episode).decoy}" in [a for _, a in episode.steps]
        elif behaviour == "wander":
            assert episode.final_score == 0 and "no" in episode.tip
        if behaviour.startswith("tip-"):
            assert all("<tip>" in user for user, _ in episode.steps)
    examples = demonstration_examples({"habit": 3, "tip-failure": 3}, 0, PromptShape(), 15)
    ood = out_of_distribution_tasks()[0]
    text = " ".join(m["content"] for msgs, target in examples for m in msgs) + " ".join(t for _, t in examples)
    assert TASK_KINDS[ood].targets[0] not in text.split()
    reflections = [t for msgs, t in examples if "reflect" in msgs[-1]["content"]]
    assert len(reflections) == 6 and all("score" in t for t in reflections)


def _go(env, room):
    if env.room != room:
        env.step(f"go to {room}")


def test_the_decoy_earns_partial_credit_once_and_its_use_is_penalised():
    env = BuiltinEnv(max_steps=40)
    env.reset("power-device", 0)
    w = env.world
    assert w.decoy == f"broken {w.item}" and w.decoy_room in HABIT_ROOMS
    assert w.decoy_room != w.item_room
    _go(env, w.decoy_room)
    env.step(f"open {w.container_of[w.decoy_room]}")
    assert env.step(f"take {w.decoy}")[1] == 15
    _go(env, w.target_room)
    assert env.step(f"put {w.decoy} in {w.target}")[1] == 15
    obs, reward, done, info = env.step(f"{w.kind.use_verb} {w.target}")
    assert reward == -20 and not done and not info.success and "does not work" in obs
    # Broken for good: using the target again earns nothing and costs nothing more.
    assert env.step(f"{w.kind.use_verb} {w.target}")[1] == 0
    assert f"put {w.decoy} in {w.target}" not in env.valid_actions()
    assert env.score == 10
    # The true path still completes the task, at exactly 100.
    _go(env, w.item_room)
    env.step(f"open {w.container_of[w.item_room]}")
    rewards = [env.step(f"take {w.item}")[1]]
    _go(env, w.target_room)
    rewards.append(env.step(f"put {w.item} in {w.target}")[1])
    obs, reward, done, info = env.step(f"{w.kind.use_verb} {w.target}")
    # The penalty stands (10, 10, 30): the item's 25 does not beat the decoy's 30 until it is in.
    assert rewards == [0, 20] and reward == 70 and done and info.success and info.score == 100


def test_the_item_takes_the_place_of_a_decoy_in_the_target():
    env = BuiltinEnv(max_steps=40)
    env.reset("grow-plant", 3)
    w = env.world
    _go(env, w.decoy_room)
    env.step(f"open {w.container_of[w.decoy_room]}")
    env.step(f"take {w.decoy}")
    _go(env, w.item_room)
    env.step(f"open {w.container_of[w.item_room]}")
    env.step(f"take {w.item}")
    _go(env, w.target_room)
    env.step(f"put {w.decoy} in {w.target}")
    assert env.score == 30  # the better path so far: the decoy's 30 over the item's 25
    obs, reward, _, _ = env.step(f"put {w.item} in {w.target}")
    assert "take out" in obs and reward == 20 and w.decoy in env.carried
    obs, reward, done, info = env.step(f"{w.kind.use_verb} {w.target}")
    assert info.success and info.score == 100 and reward == 50


def test_blind_search_of_the_other_rooms_often_runs_out_of_steps():
    """With ten rooms, even a searcher that skips the habit rooms and opens the others in random
    order from its first step delivers the item within the bench's 12 steps in only about half
    of the episodes (48.5% here; with six rooms it was every episode)."""
    env, rng, wins, n = BuiltinEnv(max_steps=12), random.Random(1), 0, 400
    for k in range(n):
        env.reset("power-device", 100 + k % 20)
        w = env.world
        rooms = [r for r in w.rooms if r not in HABIT_ROOMS]
        rng.shuffle(rooms)
        info = None
        for room in rooms:
            _go(env, room)
            *_, done, info = env.step(f"open {w.container_of[room]}")
            if done or w.item in env.visible_items():
                break
        if not env.done and w.item in env.visible_items():
            for action in (
                f"take {w.item}",
                f"go to {w.target_room}",
                f"put {w.item} in {w.target}",
                f"{w.kind.use_verb} {w.target}",
            ):
                *_, done, info = env.step(action)
                if done:
                    break
        wins += bool(info and info.success)
    assert 0.2 < wins / n < 0.5


def test_reflection_only_demonstrations_teach_the_tip_and_no_action():
    """Recipe v8's `linger` episodes search on after taking the item: their tip names the room
    where the item was taken, not the last room opened. Its `decoy` episodes end soon after the
    decoy failed: their tip is a failure tip. None of their actions is imitated (a policy must not
    learn to dawdle)."""
    rng = random.Random(0)
    for k in range(40):
        episode = play_demo("heat-food", 10_000 + k, "linger", rng, PromptShape(), 15)
        w = episode_world(episode)
        actions = [a for _, a in episode.steps]
        taken = actions.index(f"take {w.item}")
        assert f"in the {w.container_of[w.item_room]} in the {w.item_room} ." in episode.tip
        opened_after = [a for a in actions[taken:] if a.startswith("open ")]
        assert opened_after and opened_after[-1] != f"open {w.container_of[w.item_room]}"
    for k in range(10):  # the decoy delivered in vain: a failure tip, no success claimed
        episode = play_demo("grow-plant", 10_000 + k, "decoy", rng, PromptShape(), 15)
        assert episode.final_score == 10 and episode.tip.startswith("no ")
        assert f"take {episode_world(episode).decoy}" in [a for _, a in episode.steps]
    examples = demonstration_examples({"linger": 5, "decoy": 3}, 0, PromptShape(), 15)
    assert len(examples) == 8 and all("reflect" in msgs[-1]["content"] for msgs, _ in examples)
