"""The built-in text environment: small procedurally generated houses (see tasks.py, world.py).

Scores follow ScienceWorld's conventions so the trainer treats both alike: the score runs from 0
to 100 (the interface allows [-100, 100]), rewards are score deltas, and the episode ends on
success or at the step limit. Progress is scored in stages: taking the item (25), putting it into
the target (50), using the target (100); a kind may pay less for the first two (`take_credit`,
`put_credit`). A locked container (a kind with a key room) opens only while the key is carried,
and in a kind with a card room the key's container only while the card is; trying one without
what opens it is a valid action that changes nothing. The decoy earns less and never more: taking it (15),
putting it into the target (30), and using the target with it costs 20 and breaks it for good.
The score is the better of the two paths, less the penalty, so nothing is earned on the true path
before the item is found, and the decoy cannot be farmed.

Speed matters (the trainer steps B×N episodes every turn): no regexes or deep copies on the step
path; the valid actions are rebuilt from a handful of sets.
"""

from __future__ import annotations

from ..base import StepInfo, correct_action, parse_action
from .tasks import CARD_ITEM, KEY_ITEM, START_ROOM, TASK_KINDS, TEST_VARIATIONS, TRAIN_VARIATIONS
from .world import World, generate_world

SCORE_SUCCESS = 100.0
DECOY_TAKE, DECOY_PUT, DECOY_PENALTY = 15.0, 15.0, 20.0
DEFAULT_MAX_STEPS = 15
_EXITS = " exits : "  # a room's description, and only it, lists the exits after this


def lists_exits(observation: str) -> bool:
    """Whether an observation is a room's description, the one that names the rooms to go to."""
    return _EXITS in observation


def _listing(things: list[str]) -> str:
    if not things:
        return "nothing"
    if len(things) == 1:
        return f"a {things[0]}"
    return " , ".join(f"a {t}" for t in things[:-1]) + f" and a {things[-1]}"


class BuiltinEnv:
    """One episode at a time of the built-in task kinds.

    max_steps: the step limit of an episode (the reference uses per-task limits; one number
        serves every built-in kind, since they have the same shape).
    correct_actions: replace an invalid action with the valid action of highest word overlap,
        as the reference setup does; off, an invalid action costs a step and changes nothing.
    placement: where items hide ("hidden" for training and evaluation; the demonstration
        builder uses the others, see world.py).
    """

    def __init__(self, max_steps: int = DEFAULT_MAX_STEPS, correct_actions: bool = True, placement: str = "hidden"):
        self.max_steps = max_steps
        self.correct_actions = correct_actions
        self.placement = placement
        self._world: World | None = None

    # -- the TextEnv interface -------------------------------------------------------------

    def tasks(self) -> list[str]:
        return list(TASK_KINDS)

    def variations(self, task: str, split: str) -> list[int]:
        self._kind(task)
        if split == "train":
            return list(TRAIN_VARIATIONS)
        if split == "test":
            return list(TEST_VARIATIONS)
        if split == "all":
            return list(TRAIN_VARIATIONS) + list(TEST_VARIATIONS)
        raise ValueError(f"unknown split {split!r}: use train, test or all")

    def reset(self, task: str, variation: int, seed: int = 0) -> tuple[str, StepInfo]:
        # The world is a function of (task, variation) alone; `seed` is accepted for the
        # interface (ScienceWorld and TextWorld use it) and changes nothing here.
        self._world = generate_world(self._kind(task), variation, self.placement)
        w = self._world
        self.room = START_ROOM
        self.open: set[str] = set()
        # A locked container -> what opens it while carried.
        self.locked: dict[str, str] = {}
        if w.key_room is not None:
            self.locked[w.container_of[w.item_room]] = KEY_ITEM
        if w.card_room is not None:
            self.locked[w.container_of[w.key_room]] = CARD_ITEM
        self.carried: list[str] = []
        self.contents = {c: list(items) for c, items in w.contents.items()}
        self.placed = self.used = self.taken = False
        self.decoy_taken = self.decoy_placed = self.decoy_in_target = self.decoy_failed = False
        self.score = 0.0
        self.moves = 0
        self.done = False
        return self._describe_room(), self._info()

    def step(self, action: str) -> tuple[str, float, bool, StepInfo]:
        if self._world is None:
            raise RuntimeError("step() before reset()")
        if self.done:
            return "the episode is over .", 0.0, True, self._info()
        valid = self.valid_actions()
        command = parse_action(action).lower()
        # A parsed action ran: the history shows it, not the wrapping ("> go north.").
        corrected = command if command in valid and command != " ".join(action.lower().split()) else None
        if command not in valid and self.correct_actions:
            corrected = correct_action(command, valid)
            command = corrected
        before = self.score
        observation = self._execute(command) if command in valid else "nothing happens ."
        self.score = self._score()
        self.moves += 1
        if self.used or self.moves >= self.max_steps:
            self.done = True
        info = self._info()
        info.corrected_action = corrected
        return observation, self.score - before, self.done, info

    # -- state ------------------------------------------------------------------------------

    @property
    def world(self) -> World:
        assert self._world is not None
        return self._world

    def visible_items(self) -> list[str]:
        container = self.world.container_of[self.room]
        return self.contents[container] if container in self.open else []

    def valid_actions(self) -> list[str]:
        w = self.world
        actions = ["look around"]
        actions += [f"go to {r}" for r in w.rooms if r != self.room]
        container = w.container_of[self.room]
        if container not in self.open:
            actions.append(f"open {container}")
        actions += [f"take {i}" for i in self.visible_items()]
        if self.room == w.target_room:
            actions += [f"put {i} in {w.target}" for i in self.carried]
            actions.append(f"{w.kind.use_verb} {w.target}")
        return actions

    # -- what actions do ---------------------------------------------------------------------

    def _execute(self, command: str) -> str:
        w = self.world
        if command == "look around":
            return self._describe_room()
        if command.startswith("go to "):
            self.room = command[len("go to ") :]
            return self._describe_room()
        if command.startswith("open "):
            container = command[len("open ") :]
            unlocked = ""
            opener = self.locked.get(container)
            if opener is not None:
                if opener not in self.carried:
                    return f"the {container} is locked . it opens with a {opener} ." + self._carrying()
                del self.locked[container]
                unlocked = f"you unlock the {container} with the {opener} . "
            self.open.add(container)
            inside = self.contents[container]
            held = f"it holds {_listing(inside)}" if inside else "it is empty"
            return f"{unlocked}you open the {container} . {held} ." + self._carrying()
        if command.startswith("take "):
            item = command[len("take ") :]
            self.contents[w.container_of[self.room]].remove(item)
            self.carried.append(item)
            self.taken |= item == w.item
            self.decoy_taken |= item == w.decoy
            return f"you take the {item} ." + self._carrying()
        if command.startswith("put "):
            item = command[len("put ") :].split(" in ")[0]
            if item == w.item and not self.placed:
                self.carried.remove(item)
                self.placed = True
                swapped = ""
                if self.decoy_in_target:  # the item takes the decoy's place
                    self.decoy_in_target = False
                    self.carried.append(w.decoy)
                    swapped = f"you take out the {w.decoy} . "
                return swapped + f"you put the {item} in the {w.target} ." + self._carrying()
            if item == w.decoy and not (self.placed or self.decoy_in_target):
                self.carried.remove(item)
                self.decoy_placed = self.decoy_in_target = True
                return f"you put the {item} in the {w.target} ." + self._carrying()
            return f"the {w.target} has no place for the {item} ." + self._carrying()
        # the use verb on the target
        if self.placed:
            self.used = True
            return f"the {w.target} works . you completed the task ."
        if self.decoy_in_target:
            self.decoy_in_target, self.decoy_failed = False, True
            return f"the {w.target} sparks and goes dark . the {w.decoy} does not work ." + self._carrying()
        return f"nothing happens . the {w.target} needs a {w.item} ." + self._carrying()

    def _score(self) -> float:
        if self.used:
            return SCORE_SUCCESS
        kind = self.world.kind
        true_path = kind.take_credit * self.taken + kind.put_credit * self.placed
        decoy_path = DECOY_TAKE * self.decoy_taken + DECOY_PUT * self.decoy_placed
        return max(true_path, decoy_path) - DECOY_PENALTY * self.decoy_failed

    def _carrying(self) -> str:
        return f" you carry {_listing(self.carried)} ." if self.carried else ""

    def _describe_room(self) -> str:
        w = self.world
        container = w.container_of[self.room]
        if container in self.open:
            inside = self.contents[container]
            things = [f"open {container} with {_listing(inside)}" if inside else f"open empty {container}"]
        else:
            things = [f"closed {container}"]
        if self.room == w.target_room:
            things.append(w.target)
        exits = " , ".join(r for r in w.rooms if r != self.room)
        return f"you are in the {self.room} . here : {_listing(things)} .{_EXITS}{exits} ." + self._carrying()

    def _info(self) -> StepInfo:
        return StepInfo(
            task_description=self.world.description,
            valid_actions=self.valid_actions(),
            score=self.score,
            success=self.used,
            extra={"moves": self.moves, "room": self.room},
        )

    @staticmethod
    def _kind(task: str):
        try:
            return TASK_KINDS[task]
        except KeyError:
            known = ", ".join(TASK_KINDS)
            raise ValueError(f"unknown built-in task {task!r}; known tasks: {known}") from None
