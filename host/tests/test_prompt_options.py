"""Two prompt deviations from the reference code, as options (docs/algorithm.md, 13 and 15)."""

from __future__ import annotations

import pytest

from empo2.config import ConfigError, load_config
from empo2.envs.builtin.env import BuiltinEnv
from empo2.policy.prompting import Turn, reflection_messages
from empo2.training.rollout import Episode, RolloutSettings, StepRecord

OPENED = "you open the crate . it holds a rag , a cup and a cell ."


def test_the_reflection_keeps_whole_observations_with_zero_words():
    turns = [Turn("open crate", OPENED)]
    clipped = reflection_messages("power the lamp", turns, 0.0, observation_words=10)[1]["content"]
    whole = reflection_messages("power the lamp", turns, 0.0, observation_words=0)[1]["content"]
    assert "cell" not in clipped and "a cup and a cell ." in whole


def test_the_history_shows_the_executed_or_the_raw_action():
    ep = Episode(id="e", task="power-device", variation=0, group=0, rollout_mode="memory-free")
    ep.steps.append(
        StepRecord(
            observation="",
            user_text="",
            tips=[],
            tip_ids=[],
            prompt_ids=[1],
            prompt_ids_no_tips=[1],
            action="go shed",
            executed_action="go to shed",
            action_ids=[1],
            behaviour_logprobs=[-1.0],
        )
    )
    assert ep.turns(["you are in the shed ."])[0].action == "go to shed"
    assert ep.turns(["you are in the shed ."], raw=True)[0].action == "go shed"


def test_the_options_reach_the_rollout_settings_and_bad_values_are_one_sentence():
    config = load_config("builtin", ["policy.reflection_observation_words=0", "policy.history_action=raw"])
    settings = RolloutSettings.from_config(config, BuiltinEnv(), train=True)
    assert settings.reflection_observation_words == 0 and settings.raw_history_actions
    default = RolloutSettings.from_config(load_config("builtin"), BuiltinEnv(), train=True)
    assert default.reflection_observation_words == 10 and not default.raw_history_actions
    with pytest.raises(ConfigError, match="history_action"):
        load_config("builtin", ["policy.history_action=corrected"])
    with pytest.raises(ConfigError, match="reflection_observation_words"):
        load_config("builtin", ["policy.reflection_observation_words=-1"])
