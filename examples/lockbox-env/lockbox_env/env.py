"""Lockbox: a house of four rooms, a lock, and a key that hides in another place every variation.

Two tasks: `escape` (unlock the front door in the hall and leave) and `open-chest` (unlock the
chest in the cellar and take the coin). Variation v puts the key in HIDING_PLACES[(3v + k) % 8]
(k: 0 for escape, 4 for open-chest), so variations 0–7 each hide it somewhere else; training
uses 0–5, testing 6 and 7, places a trained policy has not seen. The seed picks the room the
player starts in: a reset is a function of (task, variation, seed) alone.

Scores run from 0 to 100 and rewards are their deltas: taking the key 30, unlocking 60, the goal
100. Every place but the key's holds something else, so searching is the whole difficulty.
"""

from __future__ import annotations

import random
from pathlib import Path

from empo2.envs import StepInfo

ROOMS = {
    "hall": ("coat rack", "umbrella stand"),
    "study": ("desk drawer", "bookshelf"),
    "kitchen": ("flour jar", "oven"),
    "cellar": ("wine barrel", "crate"),
}
HIDING_PLACES = [(room, place) for room, places in ROOMS.items() for place in places]
CLUTTER = (
    "an old letter",
    "a spider",
    "dust",
    "a broken pencil",
    "some crumbs",
    "a single glove",
    "a faded map",
    "nothing at all",
)
TASKS = {
    # task: (description, room of the lock, the lock, what opening it says, offset of the key)
    "escape": (
        "find the key and leave the house through the front door",
        "hall",
        "front door",
        "you step outside . you escaped the house .",
        0,
    ),
    "open-chest": (
        "find the key and open the chest in the cellar",
        "cellar",
        "chest",
        "you open the chest and take the gold coin .",
        4,
    ),
}
TRAIN_VARIATIONS, TEST_VARIATIONS = list(range(6)), [6, 7]
SCORE_KEY, SCORE_UNLOCK, SCORE_GOAL = 30.0, 60.0, 100.0


class LockboxEnv:
    """One episode at a time; max_steps ends an episode that has not reached its goal."""

    def __init__(self, max_steps: int = 20):
        self.max_steps = max_steps

    def tasks(self) -> list[str]:
        return list(TASKS)

    def variations(self, task: str, split: str) -> list[int]:
        return {"train": TRAIN_VARIATIONS, "test": TEST_VARIATIONS, "all": TRAIN_VARIATIONS + TEST_VARIATIONS}[split]

    def instructions(self) -> str:
        return (
            "You are in a house with a locked door or chest. Each turn answer with exactly "
            "one of the valid actions, e.g. 'search oven' or 'go to cellar'."
        )

    def demonstrations(self) -> Path:
        """A scripted solver's episodes on the training variations (make_demonstrations.py), for
        `empo2-host build-policy --warm-start --env lockbox`."""
        return Path(__file__).with_name("demonstrations.jsonl")

    def reset(self, task: str, variation: int, seed: int) -> tuple[str, StepInfo]:
        self.description, self.lock_room, self.lock, self.goal_text, offset = TASKS[task]
        self.key_at = HIDING_PLACES[(3 * variation + offset) % len(HIDING_PLACES)]
        self.room = random.Random(seed * 7919 + variation).choice(sorted(ROOMS))
        self.found = self.carrying = self.unlocked = self.done = False
        self.score, self.steps = 0.0, 0
        return self.describe(), self.info()

    def step(self, action: str) -> tuple[str, float, bool, StepInfo]:
        before, command = self.score, " ".join(action.lower().split())
        observation = self.act(command) if command in self.valid_actions() else "nothing happens ."
        self.steps += 1
        self.done = self.done or self.steps >= self.max_steps
        return observation, self.score - before, self.done, self.info()

    def valid_actions(self) -> list[str]:
        actions = ["look around"] + [f"go to {r}" for r in ROOMS if r != self.room]
        actions += [f"search {p}" for p in ROOMS[self.room]]
        if self.found and not self.carrying and self.key_at[0] == self.room:
            actions.append("take key")
        if self.room == self.lock_room:
            actions += [f"unlock {self.lock}", f"open {self.lock}"]
        return actions

    def act(self, action: str) -> str:
        if action.startswith("go to "):
            self.room = action[len("go to ") :]
            return self.describe()
        if action.startswith("search "):
            place = action[len("search ") :]
            if (self.room, place) == self.key_at and not self.carrying:
                self.found = True
                return f"you search the {place} . you find a small brass key ."
            clutter = CLUTTER[HIDING_PLACES.index((self.room, place)) % len(CLUTTER)]
            return f"you search the {place} . you find {clutter} ."
        if action == "take key":
            self.carrying, self.score = True, max(self.score, SCORE_KEY)
            return "you take the brass key ."
        if action.startswith("unlock "):
            if not self.carrying:
                return f"the {self.lock} is locked and you have no key ."
            self.unlocked, self.score = True, max(self.score, SCORE_UNLOCK)
            return f"the key turns . the {self.lock} is unlocked ."
        if action.startswith("open "):
            if not self.unlocked:
                return f"the {self.lock} is locked ."
            self.done, self.score = True, SCORE_GOAL
            return self.goal_text
        return self.describe()

    def describe(self) -> str:
        places = " and ".join(("an " if p[0] in "aeiou" else "a ") + p for p in ROOMS[self.room])
        lock = f" the {self.lock} is here ." if self.room == self.lock_room else ""
        doors = " , ".join(r for r in ROOMS if r != self.room)
        carried = " you carry a brass key ." if self.carrying else ""
        return f"you are in the {self.room} . you see {places} .{lock} doors lead to {doors} .{carried}"

    def info(self) -> StepInfo:
        return StepInfo(
            task_description=self.description,
            valid_actions=self.valid_actions(),
            score=self.score,
            success=self.score == SCORE_GOAL,
        )
