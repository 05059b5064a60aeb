"""What the adapters of real text games (ScienceWorld, TextWorld) share behind `TextEnv`.

An episode's running state (goal, step limit, steps, score, done), the train/test/all split of a
task's variations, the check of a task name, action correction by word overlap in its two
flavours, and the StepInfo a step reports. A subclass says how to list a task's variations,
its step limit per task, and talks to its simulator.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..config import CHOICES
from .base import StepInfo, correct_action

# What counts as an invalid action (config key env.correction, the first is the default):
# "unparsed": only text the game does not understand; "listed": anything not in the game's list
# of valid actions (the reference code's rule).
CORRECTIONS = CHOICES["env.correction"]
SPLITS = ("train", "test", "all")


class TextGameEnv:
    """Base of one real text game at a time.

    max_steps: step limit of an episode; per_task_limits uses the game's own limit per task.
    correct_actions: replace an invalid action with the valid one of highest word overlap.
    correction: one of CORRECTIONS.
    """

    GAME = ""  # the game's name in messages
    INSTRUCTIONS = ""  # its system prompt (policy/prompting.py)

    def __init__(self, max_steps: int, correct_actions: bool, per_task_limits: bool, correction: str):
        if correction not in CORRECTIONS:
            raise ValueError(f"unknown correction {correction!r}; choose one of {', '.join(CORRECTIONS)}")
        self.max_steps = max_steps
        self.correct_actions = correct_actions
        self.per_task_limits = per_task_limits
        self.correction = correction
        self.description = ""
        self.limit = max_steps
        self.steps = 0
        self.score = 0.0
        self.done = True

    # -- what a game says ------------------------------------------------------------------

    def tasks(self) -> list[str]:
        raise NotImplementedError

    def split_variations(self, task: str) -> tuple[list[int], list[int]]:
        """(train, test) variations of a known task, as the benchmark uses them."""
        raise NotImplementedError

    def task_step_limit(self, task: str) -> int:
        """The game's own step limit of `task` (used with per_task_limits)."""
        raise NotImplementedError

    # -- shared ----------------------------------------------------------------------------

    def variations(self, task: str, split: str) -> list[int]:
        self._check_task(task)
        if split not in SPLITS:
            raise ValueError(f"unknown split {split!r}: use train, test or all")
        train, test = self.split_variations(task)
        return {"train": train, "test": test, "all": train + test}[split]

    def instructions(self) -> str:
        """The system prompt of an agent playing this game (policy/prompting.py)."""
        return self.INSTRUCTIONS

    def _begin_episode(self, task: str, description: str) -> None:
        self.description = description
        self.limit = self.task_step_limit(task) if self.per_task_limits else self.max_steps
        self.steps = 0
        self.score = 0.0
        self.done = False

    def _scored_step(self, score: float) -> float:
        """Counts a step that brought the game to `score`; returns the reward (its delta)."""
        self.steps += 1
        reward, self.score = score - self.score, score
        return reward

    @property
    def corrects_listed(self) -> bool:
        """Correction "listed" is on: commands not in the valid list are replaced before a step."""
        return self.correct_actions and self.correction == "listed"

    @property
    def corrects_unparsed(self) -> bool:
        """Correction "unparsed" is on: a command the game did not understand (which costs no
        game turn) is replaced, and the replacement is this step."""
        return self.correct_actions and self.correction == "unparsed"

    def _replacement(self, command: str, valid: Sequence[str]) -> str | None:
        """The valid action of highest word overlap that replaces `command`; None without any."""
        return correct_action(command, valid) if valid else None

    def _info(self, success: bool, corrected: str | None, valid_actions) -> StepInfo:
        return StepInfo(
            task_description=self.description,
            valid_actions=valid_actions,
            score=self.score,
            success=success,
            corrected_action=corrected,
            extra={"steps": self.steps, "limit": self.limit},
        )

    def _check_task(self, task: str) -> None:
        if task not in self.tasks():
            raise ValueError(f"unknown {self.GAME} task {task!r}; known tasks: {', '.join(self.tasks())}")
