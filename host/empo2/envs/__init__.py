"""The environment contract, the one supported API for bringing an environment
(docs/environments.md):

    from empo2.envs import StepInfo

    class Corridor:
        def reset(self, seed):                       # or (self, task, variation, seed)
            return "you are at the start of a corridor .", StepInfo("reach the door", ["walk"])
        def step(self, action):                      # -> observation, reward, done, info
            return "you reach the door .", 100.0, True, StepInfo("reach the door", ["walk"], 100.0, True)

`TextEnv` is the whole protocol the trainer speaks; an environment found by name needs only
`reset` and `step`, and `PluginEnv` fills in the rest (no task list: one task; no variation
list: seeds as variations; valid actions optional). `EnvironmentFault` is what a run fails with
when an environment breaks the contract.
"""

from .base import SCORE_MAX, SCORE_MIN, StepInfo, TextEnv, correct_action, parse_action
from .plugin import DEFAULT_TASK, SEED_VARIATIONS, EnvironmentFault, PluginEnv

__all__ = [
    "TextEnv",
    "StepInfo",
    "SCORE_MIN",
    "SCORE_MAX",
    "EnvironmentFault",
    "PluginEnv",
    "DEFAULT_TASK",
    "SEED_VARIATIONS",
    "parse_action",
    "correct_action",
]
