"""The two-fact kind of the built-in worlds (`charge-robot`, preset `builtin-two-facts`): a key
found in one room unlocks the container that holds the item in another."""

from __future__ import annotations

import hashlib
import random

from empo2.config import load_config
from empo2.envs.builtin.env import DECOY_PUT, DECOY_TAKE, BuiltinEnv
from empo2.envs.builtin.tasks import HABIT_ROOMS, KEY_ITEM, TASK_KINDS, demonstrated_tasks, in_distribution_tasks
from empo2.envs.builtin.world import generate_world
from empo2.policy.scripted_writer import scripted_tip

TASK = "charge-robot"


def _reset(variation=0):
    env = BuiltinEnv(max_steps=30)
    env.reset(TASK, variation)
    return env, env.world


def test_the_item_s_container_stays_shut_until_the_key_is_carried():
    env, w = _reset()
    box = w.container_of[w.item_room]
    env.step(f"go to {w.item_room}")
    assert f"open {box}" in env.valid_actions()  # trying it is a valid action ...
    observation, reward, _, info = env.step(f"open {box}")
    assert observation == f"the {box} is locked . it opens with a {KEY_ITEM} ."
    assert reward == 0 and f"take {w.item}" not in info.valid_actions  # ... that changes nothing
    for action in (f"go to {w.key_room}", f"open {w.container_of[w.key_room]}", f"take {KEY_ITEM}"):
        env.step(action)
    env.step(f"go to {w.item_room}")
    observation, _, _, info = env.step(f"open {box}")
    assert observation.startswith(f"you unlock the {box} with the {KEY_ITEM} . you open the {box} .")
    assert f"take {w.item}" in info.valid_actions


def test_both_facts_are_fixed_for_the_kind_and_far_from_where_the_warm_start_looks():
    kind = TASK_KINDS[TASK]
    for variation in list(range(5)) + list(range(100, 120)):
        w = generate_world(kind, variation)
        assert (w.key_room, w.item_room) == (kind.key_room, kind.hiding_room)
        assert len(w.rooms) == kind.rooms == 12
        assert KEY_ITEM in w.contents[w.container_of[w.key_room]]
        assert not {w.key_room, w.item_room} & set(HABIT_ROOMS)
        assert len(w.gold_actions()) == 9 and w.gold_actions()[:3] == [
            f"go to {w.key_room}",
            f"open {w.container_of[w.key_room]}",
            f"take {KEY_ITEM}",
        ]
    # Other placements (the demonstrations' worlds) put the key anywhere but a habit room or
    # the item's room.
    for variation in range(10_000, 10_050):
        w = generate_world(kind, variation, "elsewhere")
        assert w.key_room not in HABIT_ROOMS and w.key_room != w.item_room


def test_the_decoy_pays_more_than_any_progress_on_the_true_path_short_of_success():
    env, w = _reset()
    for action in w.gold_actions()[:-1]:  # everything but the last use
        env.step(action)
    partial = env.score
    env, w = _reset()
    for action in (
        f"go to {w.decoy_room}",
        f"open {w.container_of[w.decoy_room]}",
        f"take {w.decoy}",
        f"go to {w.target_room}",
        f"put {w.decoy} in {w.target}",
    ):
        env.step(action)
    assert partial == 20 < env.score == DECOY_TAKE + DECOY_PUT


def test_the_preset_gives_a_step_limit_a_little_above_the_gold_path():
    config = load_config("builtin-two-facts")
    assert config.env.tasks == [TASK]
    _, w = _reset()
    assert len(w.gold_actions()) < config.env.max_steps <= len(w.gold_actions()) + 3


def test_a_truthful_tip_states_the_key_first_and_a_locked_try_is_not_a_search():
    _, w = _reset()
    box = w.container_of[w.item_room]
    tip = scripted_tip(TASK, 0, [f"go to {w.item_room}", f"open {box}"] + w.gold_actions(), 100.0)
    assert tip == (
        f"the {KEY_ITEM} was in the {w.container_of[w.key_room]} in the {w.key_room} . "
        f"the {w.item} was in the {box} in the {w.item_room} . it worked . score 100"
    )
    tip = scripted_tip(TASK, 0, [f"go to {w.item_room}", f"open {box}"], 0.0)
    assert tip == "i opened nothing . look in other rooms . score 0"


def test_the_kind_trains_but_is_not_among_the_shipped_warm_start_s_kinds():
    assert TASK in in_distribution_tasks() and TASK not in demonstrated_tasks()


def test_the_kinds_without_a_key_keep_the_worlds_every_earlier_bench_ran_on():
    # The digest of every world of the first four kinds, in every placement, as generated before
    # the two-fact kind existed: its key is drawn after everything else, so they are unchanged.
    digest = hashlib.sha256()
    for name in ("power-device", "grow-plant", "heat-food", "repair-radio"):
        for variation in list(range(5)) + list(range(100, 120)) + list(range(10_000, 10_100)):
            for placement in ("hidden", "habit", "missing", "elsewhere"):
                w = generate_world(TASK_KINDS[name], variation, placement)
                fields = (w.rooms, w.container_of, w.contents, w.item, w.item_room, w.decoy, w.decoy_room)
                digest.update(repr(fields + (w.target, w.target_room, w.description)).encode())
    assert digest.hexdigest()[:16] == "7b2dbf596ba37ca3"


def test_the_two_fact_demonstrations_follow_both_facts_without_leaking_the_kind_s_rooms():
    from empo2.policy.builtin import recipe_for
    from empo2.policy.demos import PromptShape, play_demo

    rng, shape = random.Random(0), PromptShape(3, 10)
    key_rooms, item_rooms = set(), set()
    for variation in range(10_000, 10_040):
        episode = play_demo(TASK, variation, "tip-success", rng, shape, 15)
        w = generate_world(TASK_KINDS[TASK], variation, "elsewhere")
        key_rooms.add(w.key_room)
        item_rooms.add(w.item_room)
        assert episode.final_score == 100 and [a for _, a in episode.steps] == w.gold_actions()
        assert episode.tip.startswith(f"the {KEY_ITEM} was in the {w.container_of[w.key_room]} in the {w.key_room} .")
        assert f"the {KEY_ITEM} was in the {w.container_of[w.key_room]}" in episode.steps[0][0]  # the shown tip
    # Random rooms, not the kind's office and basement.
    assert len(key_rooms) > 4 and len(item_rooms) > 4
    # An explorer that meets the locked container before the key comes back to it with the key.
    came_back = 0
    for variation in range(10_000, 10_040):
        episode = play_demo(TASK, variation, "explore", rng, shape, 15)
        w = generate_world(TASK_KINDS[TASK], variation, "elsewhere")
        actions = [a for _, a in episode.steps]
        box = f"open {w.container_of[w.item_room]}"
        if box in actions and f"take {KEY_ITEM}" in actions and actions.index(box) < actions.index(f"take {KEY_ITEM}"):
            assert actions.count(box) == 2 or len(actions) == 15, actions
            came_back += episode.final_score == 100
    assert came_back > 0
    # Its own recipe: the default recipe (and the shipped weights' key) is unchanged.
    assert recipe_for().key() == "aa4e313c4e7a" != recipe_for(two_facts=True).key()


def test_the_count_of_exploring_demonstrations_is_a_recipe_of_its_own():
    from empo2.policy.builtin import recipe_for

    # `build-policy --two-facts --two-fact-explorers N`: the declared count keeps the two-fact
    # recipe's key (its cached build is found again); another count is another recipe.
    two_facts = recipe_for(two_facts=True)
    assert recipe_for(two_facts=True, two_fact_explorers=60).key() == two_facts.key()
    none = recipe_for(two_facts=True, two_fact_explorers=0)
    assert none.key() != two_facts.key()
    assert none.two_fact_episodes == {**two_facts.two_fact_episodes, "explore": 0}
    assert recipe_for(two_fact_explorers=0).key() == recipe_for().key() == "aa4e313c4e7a"
