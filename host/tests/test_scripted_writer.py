"""memory.tip_writer=scripted (docs/algorithm.md, item 18): the built-in worlds state what an
episode did. Real worlds and a real trainer; nothing is stubbed."""

from __future__ import annotations

import pytest

from empo2.config import ConfigError, load_config
from empo2.envs.builtin.env import BuiltinEnv
from empo2.envs.builtin.tasks import HABIT_ROOMS
from empo2.policy.scripted_writer import scripted_tip


def _world(task="power-device", variation=0):
    env = BuiltinEnv()
    env.reset(task, variation)
    return env.world


def test_a_success_that_searched_on_names_the_room_the_item_was_taken_in():
    w = _world()
    elsewhere = [r for r in w.rooms if r not in (w.item_room, w.target_room, "hallway")][:2]
    actions = [f"go to {w.item_room}", f"open {w.container_of[w.item_room]}", f"take {w.item}"]
    for room in elsewhere:  # the last container opened is not where the item was
        actions += [f"go to {room}", f"open {w.container_of[room]}"]
    actions += [f"go to {w.target_room}", f"put {w.item} in {w.target}", f"{w.kind.use_verb} {w.target}"]
    tip = scripted_tip("power-device", 0, actions, 100.0)
    assert tip == (
        f"the {w.item} was in the {w.container_of[w.item_room]} in the {w.item_room} . it worked . score 100"
    )


def test_the_decoy_delivered_in_vain_is_a_failure_that_lists_the_containers_searched():
    w = _world()
    actions, room = [], "hallway"
    for stop in sorted(HABIT_ROOMS, key=lambda r: r == w.decoy_room):  # the decoy's room last
        actions += ([f"go to {stop}"] if stop != room else []) + [f"open {w.container_of[stop]}"]
        room = stop
    actions += [f"take {w.decoy}"] + ([f"go to {w.target_room}"] if w.target_room != room else [])
    actions += [f"put {w.decoy} in {w.target}", f"{w.kind.use_verb} {w.target}"]
    env = BuiltinEnv(max_steps=50)
    env.reset("power-device", 0)
    for action in actions:
        env.step(action)
    tip = scripted_tip("power-device", 0, actions, env.score)
    assert "it worked" not in tip and "score 100" not in tip
    for stop in HABIT_ROOMS:
        assert f"the {w.container_of[stop]} in the {stop}" in tip
    assert tip.startswith(f"no {w.item} in ") and tip.endswith(f"score {round(env.score)}")


def test_an_episode_that_opened_nothing_says_so():
    assert (
        scripted_tip("grow-plant", 3, ["look around", "look around"], 0.0)
        == "i opened nothing . look in other rooms . score 0"
    )


def test_the_scripted_writer_is_refused_outside_the_built_in_worlds():
    with pytest.raises(ConfigError, match="only with env.name=builtin"):
        load_config("scienceworld-smoke", ["memory.tip_writer=scripted"])
    assert load_config("builtin-bench", ["memory.tip_writer=scripted"]).memory.tip_writer == "scripted"


def test_a_training_iteration_stores_the_scripted_tips_of_its_episodes(tmp_path, tiny_policy, embedder):
    from test_train import make_trainer

    trainer, _ = make_trainer(
        tmp_path, tiny_policy, embedder, iterations=1, **{"eval.every": 0, "memory.tip_writer": "scripted"}
    )
    trainer.run()  # opens the memory and trains one iteration
    episodes = trainer.play(2, [("power-device", 0), ("grow-plant", 1)], memory_mode=False)[0]
    assert episodes and all(ep.tip_id for ep in episodes)
    for ep in episodes:
        expected = scripted_tip(ep.task, ep.variation, [s.executed_action for s in ep.steps], ep.final_score)
        assert ep.tip == expected
        assert trainer.memory.get(ep.tip_id).text == expected
    trainer.close()
