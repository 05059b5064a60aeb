"""The three-fact kind of the built-in worlds (`fuel-generator`, preset `builtin-three-facts`): a
card found in one room unlocks the container that holds the key in a second, and the key the
item's container in a third."""

from __future__ import annotations

import hashlib
import random

from empo2.config import load_config
from empo2.envs.builtin.env import DECOY_PUT, DECOY_TAKE, BuiltinEnv
from empo2.envs.builtin.tasks import CARD_ITEM, HABIT_ROOMS, KEY_ITEM, TASK_KINDS, card_tasks, key_tasks
from empo2.envs.builtin.world import generate_world
from empo2.policy.builtin import recipe_for, vocabulary_corpus
from empo2.policy.demos import PromptShape, play_demo
from empo2.policy.scripted_writer import scripted_tip

TASK = "fuel-generator"


def _reset(variation=0):
    env = BuiltinEnv(max_steps=40)
    env.reset(TASK, variation)
    return env, env.world


def test_the_key_s_container_opens_only_with_the_card_and_the_item_s_only_with_the_key():
    env, w = _reset()
    key_box, item_box = w.container_of[w.key_room], w.container_of[w.item_room]
    env.step(f"go to {w.key_room}")
    observation, reward, _, info = env.step(f"open {key_box}")
    assert observation == f"the {key_box} is locked . it opens with a {CARD_ITEM} ."
    assert reward == 0 and f"take {KEY_ITEM}" not in info.valid_actions
    for action in (f"go to {w.card_room}", f"open {w.container_of[w.card_room]}", f"take {CARD_ITEM}"):
        env.step(action)
    env.step(f"go to {w.item_room}")
    observation, _, _, _ = env.step(f"open {item_box}")
    assert observation.startswith(f"the {item_box} is locked . it opens with a {KEY_ITEM} .")  # the card is not the key
    env.step(f"go to {w.key_room}")
    observation, _, _, info = env.step(f"open {key_box}")
    assert observation.startswith(f"you unlock the {key_box} with the {CARD_ITEM} . you open the {key_box} .")
    assert f"take {KEY_ITEM}" in info.valid_actions


def test_all_three_facts_are_fixed_for_the_kind_and_the_gold_path_fetches_them_in_order():
    kind = TASK_KINDS[TASK]
    for variation in list(range(5)) + list(range(100, 120)):
        env, w = _reset(variation)
        assert (w.card_room, w.key_room, w.item_room) == (kind.card_room, kind.key_room, kind.hiding_room)
        assert len(set((w.card_room, w.key_room, w.item_room))) == 3 and len(w.rooms) == kind.rooms == 12
        assert not {w.card_room, w.key_room, w.item_room} & set(HABIT_ROOMS)
        gold = w.gold_actions()
        assert len(gold) == 12 and gold[2] == f"take {CARD_ITEM}" and gold[5] == f"take {KEY_ITEM}"
        for action in gold:
            _, _, done, _ = env.step(action)
        assert done and env.score == 100
    # The demonstrations' worlds put the card anywhere but a habit room or the key's or item's.
    for variation in range(10_000, 10_050):
        w = generate_world(kind, variation, "elsewhere")
        assert w.card_room not in HABIT_ROOMS and w.card_room not in (w.key_room, w.item_room)


def test_the_decoy_pays_more_than_any_progress_on_the_true_path_short_of_success():
    env, w = _reset()
    for action in w.gold_actions()[:-1]:
        env.step(action)
    assert env.score == 20 < DECOY_TAKE + DECOY_PUT


def test_the_preset_gives_a_step_limit_a_little_above_the_gold_path():
    config = load_config("builtin-three-facts")
    assert config.env.tasks == [TASK]
    _, w = _reset()
    assert len(w.gold_actions()) < config.env.max_steps <= len(w.gold_actions()) + 3


def test_a_truthful_tip_states_the_card_then_the_key_then_the_item():
    _, w = _reset()
    key_box = w.container_of[w.key_room]
    tried_first = [f"go to {w.key_room}", f"open {key_box}"]  # locked: not a search
    tip = scripted_tip(TASK, 0, tried_first + w.gold_actions(), 100.0)
    assert tip == (
        f"the {CARD_ITEM} was in the {w.container_of[w.card_room]} in the {w.card_room} . "
        f"the {KEY_ITEM} was in the {key_box} in the {w.key_room} . "
        f"the {w.item} was in the {w.container_of[w.item_room]} in the {w.item_room} . it worked . score 100"
    )


def test_the_kind_is_its_own_and_not_the_two_fact_builds():
    assert card_tasks() == [TASK] and TASK not in key_tasks() and "charge-robot" in key_tasks()


def test_the_demonstrations_follow_all_three_facts_and_an_explorer_comes_back_along_the_chain():
    rng, shape = random.Random(0), PromptShape(3, 10)
    card_rooms = set()
    for variation in range(10_000, 10_040):
        episode = play_demo(TASK, variation, "tip-success", rng, shape, 15)
        w = generate_world(TASK_KINDS[TASK], variation, "elsewhere")
        card_rooms.add(w.card_room)
        assert episode.final_score == 100 and [a for _, a in episode.steps] == w.gold_actions()
        assert episode.tip.startswith(
            f"the {CARD_ITEM} was in the {w.container_of[w.card_room]} in the {w.card_room} ."
        )
    assert len(card_rooms) > 4  # random rooms, not the kind's office
    # An explorer with a long enough limit that meets both locked containers before the card
    # goes back to each in turn, and finishes.
    chained = 0
    for variation in range(10_000, 10_080):
        episode = play_demo(TASK, variation, "explore", rng, shape, 40)
        w = generate_world(TASK_KINDS[TASK], variation, "elsewhere")
        actions = [a for _, a in episode.steps]
        assert episode.final_score == 100, actions
        key_box, item_box = f"open {w.container_of[w.key_room]}", f"open {w.container_of[w.item_room]}"
        card_at = actions.index(f"take {CARD_ITEM}")
        if actions.index(key_box) < card_at and actions.index(item_box) < card_at:
            assert actions.count(key_box) == actions.count(item_box) == 2
            chained += 1
    assert chained > 0


def test_the_two_fact_kind_s_worlds_demonstrations_and_vocabulary_are_what_they_were():
    # Digests taken before the card existed: r8b–r8d's builds and gates stay reproducible.
    digest = hashlib.sha256()
    kind = TASK_KINDS["charge-robot"]
    for variation in list(range(5)) + list(range(100, 120)) + list(range(10_000, 10_100)):
        for placement in ("hidden", "habit", "missing", "elsewhere"):
            w = generate_world(kind, variation, placement)
            fields = (w.rooms, w.container_of, w.contents, w.item, w.item_room, w.decoy, w.decoy_room)
            digest.update(repr(fields + (w.target, w.target_room, w.description, w.key_room)).encode())
    assert digest.hexdigest()[:16] == "757fdb19f8c46b29"
    digest = hashlib.sha256()
    rng, shape = random.Random(0), PromptShape(3, 10)
    for behaviour in ("explore", "tip-success", "tip-failure", "habit", "stuck", "wander"):
        for variation in range(10_000, 10_060):
            episode = play_demo("charge-robot", variation, behaviour, rng, shape, 15)
            digest.update(repr((episode.steps, episode.tip, episode.final_score)).encode())
    assert digest.hexdigest()[:16] == "c1f8730c94128075"
    two_facts = vocabulary_corpus(shape, 15, with_key_kinds=True)
    assert hashlib.sha256(repr(two_facts).encode()).hexdigest()[:16] == "7cbed17dfa4b9f3b"
    three_facts = " ".join(vocabulary_corpus(shape, 15, with_card_kinds=True)).split()
    assert {CARD_ITEM, "fuel", "canister", "generator"} <= set(three_facts)
    assert CARD_ITEM not in " ".join(two_facts).split()


def test_the_three_fact_build_is_a_recipe_of_its_own():
    three = recipe_for(three_facts=True)
    assert three.three_fact_episodes and "explore" not in three.three_fact_episodes
    assert three.key() not in (recipe_for().key(), recipe_for(two_facts=True).key())
    # The earlier builds' keys stand.
    assert recipe_for().key() == "aa4e313c4e7a"
    assert recipe_for(two_facts=True, two_fact_explorers=0).key() == "765160c2f3bc"


def test_the_count_of_tip_following_demonstrations_is_a_recipe_of_its_own():
    # `build-policy --three-facts --three-fact-followers N`: the default count keeps the recipe's
    # key; another count is another recipe, and without --three-facts it changes nothing.
    three = recipe_for(three_facts=True)
    assert recipe_for(three_facts=True, three_fact_followers=250).key() == three.key() == "a555b7edf806"
    more = recipe_for(three_facts=True, three_fact_followers=500)
    assert more.key() != three.key()
    assert more.three_fact_episodes == {**three.three_fact_episodes, "tip-success": 500}
    assert recipe_for(three_fact_followers=500).key() == recipe_for().key()
