"""Real TextWorld games, generated offline by the textworld package, through the adapter.

Games are generated into a temporary cache (Inform 7 compiles each in about 2 s); one
environment serves the module.
"""

from __future__ import annotations

import os

import pytest

from empo2.config import load_config
from empo2.envs.textworld import TASK_KINDS, TextWorldEnv, game_path
from empo2.policy.prompting import system_prompt_for
from text_game_support import check_splits, play, settings

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def textworld_env(tmp_path_factory):
    before = os.environ.get("EMPO2_CACHE_DIR")
    os.environ["EMPO2_CACHE_DIR"] = str(tmp_path_factory.mktemp("cache"))
    env = TextWorldEnv(max_steps=30)
    yield env
    env.close()
    if before is None:
        os.environ.pop("EMPO2_CACHE_DIR")
    else:
        os.environ["EMPO2_CACHE_DIR"] = before


@pytest.mark.parametrize("task", ["coin-collector", "treasure-hunter", "cooking-1room"])
def test_the_walkthrough_reaches_full_score(textworld_env, task):
    gold = textworld_env.gold_actions(task, 0)
    obs, info = textworld_env.reset(task, 0)
    assert obs.startswith("-=") and info.task_description and info.valid_actions
    total, info, done = play(textworld_env, gold)
    assert done and info.success and info.score == 100.0 and total == 100.0


def test_games_are_generated_once_and_test_games_are_unseen(textworld_env):
    path = game_path("coin-collector", 0)
    stamp = path.stat().st_mtime_ns
    assert game_path("coin-collector", 0).stat().st_mtime_ns == stamp  # cached, not rebuilt
    check_splits(textworld_env, "coin-collector")
    test = textworld_env.variations("coin-collector", "test")
    textworld_env.reset("coin-collector", test[0])
    assert game_path("coin-collector", test[0]).exists()


def test_rejected_commands_are_corrected(textworld_env):
    _, info = textworld_env.reset("coin-collector", 0)
    valid = list(info.valid_actions)
    obs, _, _, info = textworld_env.step("walk west now")  # not a verb Inform knows
    assert info.corrected_action in valid and info.corrected_action == "go west"
    obs, _, _, info = textworld_env.step("look")  # admissible: executed as it is
    assert info.corrected_action is None and obs.startswith("-= ")
    assert not obs.rstrip().endswith(("/1", "/2", "/3"))  # the status line is cut


def test_the_step_limit_ends_the_episode(textworld_env):
    with settings(textworld_env, max_steps=4):
        textworld_env.reset("treasure-hunter", 0)
        dones = [textworld_env.step("inventory")[2] for _ in range(4)]
        assert dones == [False, False, False, True]
    with settings(textworld_env, per_task_limits=True):
        _, info = textworld_env.reset("coin-collector", 0)
        assert info.extra["limit"] == TASK_KINDS["coin-collector"].max_steps


def test_config_accepts_textworld_and_the_env_has_its_own_instructions(textworld_env):
    config = load_config({"env": {"name": "textworld", "tasks": ["cooking"]}})
    assert config.env.name == "textworld"
    assert "prepare meal" in system_prompt_for(textworld_env)
