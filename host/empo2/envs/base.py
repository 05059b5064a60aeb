"""The text-environment interface every benchmark plugs into.

Shaped after ScienceWorld so that real benchmarks fit without glue: scores live in [-100, 100],
rewards are score deltas, and an episode reports the valid actions of its current state. The
trainer only ever talks to `TextEnv`; the built-in worlds, ScienceWorld and TextWorld are
adapters behind it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

SCORE_MIN, SCORE_MAX = -100.0, 100.0


@dataclass
class StepInfo:
    """What an environment reports besides the observation.

    task_description: the goal in words, as shown to the agent.
    valid_actions: the actions that do something in the current state.
    score: the running score in [-100, 100]; rewards are its deltas.
    success: the episode reached the goal (benchmarks define this their own way).
    corrected_action: the action that was executed when the agent's text was corrected, else None.
    """

    task_description: str
    valid_actions: list[str]
    score: float = 0.0
    success: bool = False
    corrected_action: str | None = None
    extra: dict = field(default_factory=dict)


class TextEnv(Protocol):
    """One episode at a time of a family of text tasks."""

    def tasks(self) -> list[str]:
        """Names of the task kinds this environment serves."""

    def variations(self, task: str, split: str) -> list[int]:
        """Variation ids of `task` for a split: 'train', 'test' or 'all'."""

    def reset(self, task: str, variation: int, seed: int) -> tuple[str, StepInfo]:
        """Starts an episode; returns the first observation and its info."""

    def step(self, action: str) -> tuple[str, float, bool, StepInfo]:
        """Executes one action; returns observation, reward (score delta), done and info."""


_WORD = re.compile(r"[a-z0-9]+")


def words(text: str) -> set[str]:
    """Lower-cased word set of a text, the unit of the word-overlap correction."""
    return set(_WORD.findall(text.lower()))


def jaccard(a: set[str], b: set[str]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


# What a chat model puts around an action: a text game's prompt mark ("> go north"), a label
# ("Action: go north"), quotes, backticks or bold, and sentence punctuation at the end.
_LEADING_MARKS = re.compile(r"^(?:>+\s*|action\s*:\s*)+", re.IGNORECASE)
_WRAPPING = " \t\"'`*"
_TRAILING_PUNCTUATION = ".!?;:," + _WRAPPING


def parse_action(text: str) -> str:
    """The one action in what a policy wrote: its first non-empty line, without a leading
    prompt mark or label, wrapping quotes and trailing punctuation, whitespace collapsed; ''
    when nothing is left. Case is kept (each game decides). The built-in policy's own output
    ("go to kitchen") comes back unchanged; anything else that is still no valid action stays
    invalid, and correction (when on) replaces it as before.
    """
    line = next((line for line in text.splitlines() if line.strip()), "")
    line = _LEADING_MARKS.sub("", line.strip(_WRAPPING)).strip(_WRAPPING)
    return " ".join(line.rstrip(_TRAILING_PUNCTUATION).split())


def correct_action(action: str, valid_actions: Sequence[str]) -> str:
    """The valid action with the highest word overlap (Jaccard) with `action`.

    This is the reference setup's correction of invalid actions. An exact match (after
    whitespace and case normalisation) is returned as it is; ties go to the first valid action
    in the environment's order, so the correction is deterministic.
    """
    if not valid_actions:
        return action
    normalised = " ".join(action.lower().split())
    for candidate in valid_actions:
        if candidate == normalised:
            return candidate
    target = words(action)
    best, best_score = valid_actions[0], -1.0
    for candidate in valid_actions:
        score = jaccard(target, words(candidate))
        if score > best_score:
            best, best_score = candidate, score
    return best
