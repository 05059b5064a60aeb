"""ScienceWorld through the real `scienceworld` package, set up as the paper and its reference code.

    empo2-host train --preset scienceworld-power-component     # on a GPU machine (docs/benchmarks.md)

ScienceWorld (Wang et al., 2022) is a Scala simulator of an elementary-school science curriculum;
the `scienceworld` wheel ships its jar and talks to it over py4j, so every `ScienceWorldEnv` here
owns one JVM (about 2 s to start, about 210 MB resident). The trainer keeps its environments for
the whole run (envs/pool.py), so a run starts B×N JVMs once, not once per iteration.

The setup follows docs/paper.md §5 and the reference code (agl-envs `scienceworld/base.py`):
simplification preset "easy"; training on the first 5 training variations of a task and testing
on the first 20 test variations; rewards are score deltas with the score in [-100, 100]; invalid
actions are replaced by the valid action of highest word overlap (Jaccard), "invalid" meaning
not in the simulator's list of valid actions (`correction="listed"`, the reference) or, with
`correction="unparsed"`, only text the simulator does not understand; success is the
reference's "the simulator ended the episode with a score above 70"; per-task step limits come
from the reference's table (`MAX_STEPS`) when `env.step_limits` is "per-task".

Where we deviate from the reference:
1. An episode takes exactly `max_steps` steps at most; the reference's check runs before its
   counter moves, so it allows one more.
2. "reset task" is not a valid action (it would restart the episode mid-way and hide a failure).
3. When ScienceWorld answers an action with "Ambiguous request" and a numbered list, we choose
   the first reading at once (the reference asks the policy for a number on its next turn).
4. `correction="unparsed"` is ours. The simulator's list of valid actions leaves out actions that
   parse and do nothing ("open door to kitchen" when it is open), and the reference replaces
   those by their nearest listed neighbour ("close door to kitchen"): its own gold action
   sequences then fail on tasks such as power-component. "unparsed" lets the simulator answer
   whatever it understands and corrects only "No known action matches that input."
5. Valid actions come from the JSON call of the simulator, one round trip instead of one per
   action; they are the same strings.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Sequence

from .base import StepInfo, parse_action
from .text_game import CORRECTIONS, TextGameEnv

log = logging.getLogger(__name__)

SIMPLIFICATION = "easy"
ENV_STEP_LIMIT = 100  # the reference's envStepLimit: the simulator's own move cap
TRAIN_VARIATIONS = 5  # the first 5 of the simulator's training split
TEST_VARIATIONS = 20  # the first 20 of its test split
SUCCESS_ABOVE = 70  # reference: success = simulator done and score > 70
AMBIGUOUS = "Ambiguous request"
NOT_UNDERSTOOD = "No known action matches that input."

# Step limits per task, as in the reference code's table (the same table several ScienceWorld
# agent frameworks share). Gold paths under "easy" are shorter than these limits except for
# grow-fruit/grow-plant (63 steps) and the two mendelian-genetics tasks (130 steps, beyond the
# simulator's own cap of 100 moves).
MAX_STEPS: dict[str, int] = {
    "boil": 100,
    "change-the-state-of-matter-of": 80,
    "chemistry-mix": 60,
    "chemistry-mix-paint-secondary-color": 15,
    "chemistry-mix-paint-tertiary-color": 30,
    "find-animal": 15,
    "find-living-thing": 15,
    "find-non-living-thing": 15,
    "find-plant": 15,
    "freeze": 80,
    "grow-fruit": 60,
    "grow-plant": 30,
    "identify-life-stages-1": 30,
    "identify-life-stages-2": 30,
    "inclined-plane-determine-angle": 40,
    "inclined-plane-friction-named-surfaces": 40,
    "inclined-plane-friction-unnamed-surfaces": 40,
    "lifespan-longest-lived": 10,
    "lifespan-longest-lived-then-shortest-lived": 12,
    "lifespan-shortest-lived": 10,
    "measure-melting-point-known-substance": 120,
    "measure-melting-point-unknown-substance": 120,
    "melt": 80,
    "mendelian-genetics-known-plant": 50,
    "mendelian-genetics-unknown-plant": 50,
    "power-component": 20,
    "power-component-renewable-vs-nonrenewable-energy": 30,
    "test-conductivity": 30,
    "test-conductivity-of-unknown-substances": 30,
    "use-thermometer": 30,
}
TASKS = tuple(MAX_STEPS)

# The 18 tasks of the paper's Table 1 (averages over them: GRPO 33.2, EMPO² 75.9). The paper's
# text was not at hand when this list was written: it is the 17 tasks whose reference limit fits
# the paper's 30-step episodes, plus chemistry-mix (named with its 60-step limit in docs/paper.md §5).
# Check it against Table 1 before quoting averages. Every one of the 30 tasks is selectable by
# name whatever this list says; it only feeds `empo2-host`'s table1 presets and docs.
PAPER_TASKS = (
    "chemistry-mix-paint-secondary-color",
    "chemistry-mix-paint-tertiary-color",
    "find-animal",
    "find-living-thing",
    "find-non-living-thing",
    "find-plant",
    "grow-plant",
    "identify-life-stages-1",
    "identify-life-stages-2",
    "lifespan-longest-lived",
    "lifespan-longest-lived-then-shortest-lived",
    "lifespan-shortest-lived",
    "power-component",
    "power-component-renewable-vs-nonrenewable-energy",
    "test-conductivity",
    "test-conductivity-of-unknown-substances",
    "use-thermometer",
    "chemistry-mix",
)

INSTRUCTIONS = """\
You are a science student working in ScienceWorld, a text simulation of a house with a kitchen, \
workshop, greenhouse, foundry and other rooms. Every turn you see your task, your last actions \
with what happened, and what you observe now. Reply with exactly one action and nothing else.

Actions (OBJ is an object and LOC a room, named as in the observations):
look around | look at OBJ | look in OBJ | read OBJ | inventory | task
go to LOC | teleport to LOC | open OBJ | close OBJ
pick up OBJ | put down OBJ | move OBJ to OBJ | pour OBJ in OBJ | dunk OBJ in OBJ | mix OBJ
activate OBJ | deactivate OBJ | use OBJ on OBJ | connect OBJ to OBJ | disconnect OBJ
eat OBJ | flush OBJ | wait | wait1 | focus on OBJ

Be careful with "focus on OBJ": it tells the simulator which object your answer is about. Focusing \
on the wrong object ends the task as a failure, so focus only on what the task names, and only \
once you are sure it is the right one.

Explore. If what you need is not in this room, it is elsewhere: look around, open containers and \
try other rooms. An action that changed nothing will not work better the second time.

How a turn goes (a different task, shortened):
task: Your task is to find a(n) non-living thing. First, focus on the thing. Then, move it to \
the red box in the kitchen.
now: This room is called the hallway. ... A door to the kitchen (that is open) ...
you: teleport to kitchen
now: You teleport to the kitchen.
you: look around
now: This room is called the kitchen. In it, you see: ... a red box ... a counter ...
you: focus on counter"""


# py4j's launcher is not safe to call from several threads at once (it reads the new JVM's port
# from a shared pipe); starting JVMs one at a time costs nothing we would notice.
_JVM_START = threading.Lock()
_SPLITS: dict[str, tuple[list[int], list[int]]] = {}  # task -> (train, test), same in every JVM


class _ValidActions(Sequence):
    """The valid actions of one state, asked of the simulator only when someone reads them.

    Listing them costs the simulator about 70 ms, three times a step; with correction="unparsed"
    the rollout never reads them, so most steps never pay. Reading them after the environment
    has moved on is a bug (they would describe another state), so it raises.
    """

    def __init__(self, env: ScienceWorldEnv):
        self._env, self._stamp, self._items = env, env._stamp, None

    def _load(self) -> list[str]:
        if self._items is None:
            if self._env._stamp != self._stamp:
                raise RuntimeError("valid actions of a past state read after the environment moved on")
            self._items = self._env.valid_actions()
        return self._items

    def __getitem__(self, index):
        return self._load()[index]

    def __len__(self) -> int:
        return len(self._load())

    def __eq__(self, other) -> bool:
        return list(self._load()) == list(other)

    def __repr__(self) -> str:
        return repr(self._load())


class ScienceWorldEnv(TextGameEnv):
    """One ScienceWorld simulator (one JVM) behind the `TextEnv` interface.

    max_steps: step limit of an episode; per_task_limits replaces it by `MAX_STEPS[task]`.
    correct_actions: replace an invalid action with the valid one of highest word overlap.
    correction: what counts as invalid: "listed" (not in the simulator's valid-action list, the
        reference) or "unparsed" (the simulator does not understand it).
    simplification: ScienceWorld simplifications ("easy" = teleport, open doors and containers,
        self-watering pots, no electrical actions where a task does not need them).
    """

    GAME = "ScienceWorld"
    INSTRUCTIONS = INSTRUCTIONS

    def __init__(
        self,
        max_steps: int = 30,
        correct_actions: bool = True,
        per_task_limits: bool = False,
        simplification: str = SIMPLIFICATION,
        env_step_limit: int = ENV_STEP_LIMIT,
        correction: str = CORRECTIONS[0],
    ):
        try:
            from scienceworld import ScienceWorldEnv as Simulator
        except ImportError as err:  # pragma: no cover - a pinned dependency
            raise RuntimeError(f"the scienceworld package is not installed ({err})") from None
        super().__init__(max_steps, correct_actions, per_task_limits, correction)
        self.simplification = simplification
        self.env_step_limit = env_step_limit
        with _JVM_START:
            try:
                self._sim = Simulator("", envStepLimit=env_step_limit)
            except Exception as err:  # py4j raises bare Exceptions when java is missing
                raise RuntimeError(
                    f"ScienceWorld could not start its Java simulator ({err}); it needs Java 8+ on PATH"
                ) from None
        self._server = self._sim.server
        self._loaded: tuple[str, int] | None = None
        self._valid: list[str] | None = []  # None: not asked for in this state yet
        self._stamp = 0  # counts states, for _ValidActions
        self.task = ""

    # -- the TextEnv interface -------------------------------------------------------------

    def tasks(self) -> list[str]:
        return list(TASKS)

    def split_variations(self, task: str) -> tuple[list[int], list[int]]:
        train, test = self._splits(task)
        return train[:TRAIN_VARIATIONS], test[:TEST_VARIATIONS]

    def task_step_limit(self, task: str) -> int:
        return MAX_STEPS[task]

    def reset(self, task: str, variation: int, seed: int = 0) -> tuple[str, StepInfo]:
        # ScienceWorld is deterministic given (task, variation); `seed` changes nothing.
        self._check_task(task)
        if self._loaded != (task, variation):
            self._sim.load(task, variation, self.simplification, generateGoldPath=False)
            self._loaded = (task, variation)
        self._server.reset()
        observation = self._server.step("look around")
        self.task = task
        self._begin_episode(task, self._server.getTaskDescription())
        self._new_state()
        return observation, self._info(False, None)

    def step(self, action: str) -> tuple[str, float, bool, StepInfo]:
        if self._loaded is None:
            raise RuntimeError("step() before reset()")
        if self.done:
            return "The episode is over.", 0.0, True, self._info(False, None)
        command = parse_action(action)
        corrected = command if command != " ".join(action.split()) else None  # "> open door." ran as "open door"
        if self.corrects_listed and command not in self.valid_actions():
            corrected = self._replacement(command, self.valid_actions())
        observation = self._server.step(corrected or command)
        if self.corrects_unparsed and observation == NOT_UNDERSTOOD:
            corrected = self._replacement(command, self.valid_actions())
            if corrected is not None:
                observation = self._server.step(corrected)
        if observation.startswith(AMBIGUOUS):
            observation = self._server.step("0")  # deviation 3: the first reading
        score = float(round(100 * self._server.getScore()))
        completed = bool(self._server.getCompleted())
        moves = int(self._server.getNumMoves())
        reward = self._scored_step(score)
        ended_by_simulator = completed or score < 0 or moves > self.env_step_limit
        success = ended_by_simulator and score > SUCCESS_ABOVE
        self.done = ended_by_simulator or self.steps >= self.limit
        self._new_state()
        if self.done:
            self._valid = []
        elif self.correction == "listed":
            self.valid_actions()  # the next step needs them anyway
        return observation, reward, self.done, self._info(success, corrected)

    # -- extras ----------------------------------------------------------------------------

    def gold_actions(self, task: str, variation: int) -> list[str]:
        """The simulator's own solution of a variation (loads it; call reset afterwards)."""
        self._check_task(task)
        self._sim.load(task, variation, self.simplification, generateGoldPath=True)
        self._loaded = None  # the next reset reloads without the gold path
        return list(self._server.getGoldActionSequence())

    def valid_actions(self) -> list[str]:
        """The valid actions of the current state (asked of the simulator once per state)."""
        if self._valid is None:
            self._valid = self._list_valid_actions()
        return self._valid

    def close(self) -> None:
        """Stops this simulator's JVM (it also dies with the Python process)."""
        try:
            self._sim.close()
        except Exception:  # already gone
            pass

    # -- internals -------------------------------------------------------------------------

    def _new_state(self) -> None:
        self._valid = None
        self._stamp += 1

    def _list_valid_actions(self) -> list[str]:
        payload = json.loads(self._server.getValidActionObjectCombinationsJSON())
        seen, actions = set(), []
        for item in payload["validActions"]:
            text = item["action"]
            if text not in seen and text != "reset task":  # deviation 2
                seen.add(text)
                actions.append(text)
        return actions

    def _info(self, success: bool, corrected: str | None) -> StepInfo:
        return super()._info(success, corrected, _ValidActions(self))

    def _splits(self, task: str) -> tuple[list[int], list[int]]:
        if task not in _SPLITS:
            self._sim.load(task, 0, self.simplification, generateGoldPath=False)
            self._loaded = (task, 0)
            _SPLITS[task] = (list(self._server.getVariationsTrain()), list(self._server.getVariationsTest()))
        return _SPLITS[task]
