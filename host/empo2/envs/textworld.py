"""TextWorld games behind the `TextEnv` interface, generated offline by the real `textworld` package.

    empo2-host train --preset textworld-cooking      # docs/benchmarks.md

Why TextWorld: ALFWorld (the text half of ALFRED) is a set of TextWorld games, but its game files
come from a download script, not from a registry package; TextWorld itself ships Inform 7 and
generates games on this machine (`tw-make`), so a fresh clone plays real TextWorld games with no
network. Its challenges are the classic ones: Coin Collector (navigation), Treasure Hunter
(find an object among distractors, keys and locked doors) and the First TextWorld Problems
cooking games (read a recipe, fetch, cut and cook ingredients, prepare the meal).

A variation is the game's seed: training games are seeds 0–4, test games seeds 1000–1019 (games
no training run saw). A game is generated once (a few seconds, Inform 7 compiling it) into
$EMPO2_CACHE_DIR/textworld/ and reused. Scores are the game's points scaled to [0, 100]
(100 = the game's maximum), rewards are their deltas, success is TextWorld's `won`. Correction
works as on ScienceWorld: with `correction="unparsed"` (the default) a command the game's parser
rejects ("That's not a verb I recognise.", "You can't see any such thing.", ...; such replies
cost no game turn) is replaced by the admissible command of highest word overlap; with
"listed" every command that is not admissible is. The walkthroughs TextWorld writes contain
harmless repeats ("open fridge" when it is open), which "listed" would turn into other commands.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import tempfile
import threading
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from ..cache import cache_root
from .base import StepInfo, parse_action
from .text_game import CORRECTIONS, TextGameEnv

log = logging.getLogger(__name__)

TRAIN_SEEDS = tuple(range(5))
TEST_SEEDS = tuple(range(1000, 1020))


@dataclass(frozen=True)
class GameKind:
    challenge: str  # a tw-make challenge
    settings: dict = field(default_factory=dict)
    max_steps: int = 30  # per-task step limit (env.step_limits = "per-task")


# Sized so that a 7B model has something to learn within the paper's step budgets; the gold
# walkthroughs are 3–20 commands.
TASK_KINDS: dict[str, GameKind] = {
    "coin-collector": GameKind("tw-coin_collector", {"level": 5}, 25),
    "coin-collector-hard": GameKind("tw-coin_collector", {"level": 110}, 50),
    "treasure-hunter": GameKind("tw-treasure_hunter", {"level": 5}, 30),
    "treasure-hunter-hard": GameKind("tw-treasure_hunter", {"level": 15}, 50),
    "cooking-1room": GameKind(
        "tw-cooking", {"recipe": 1, "take": 1, "go": 1, "open": True, "cook": False, "cut": False}, 20
    ),
    "cooking": GameKind("tw-cooking", {"recipe": 2, "take": 2, "go": 6, "open": True, "cook": True, "cut": True}, 50),
}
_COOKING_DEFAULTS = {
    "recipe": 1,
    "take": 0,
    "go": 1,
    "open": False,
    "cook": False,
    "cut": False,
    "drop": False,
    "recipe_seed": 0,
    "split": None,
}

INSTRUCTIONS = """\
You are playing a text adventure. Every turn you see your goal, your last commands with what \
happened, and what you observe now. Reply with exactly one command and nothing else.

Commands (X and Y are things named in the observations):
look | inventory | examine X | go north | go south | go east | go west
open X | close X | take X | take X from Y | drop X | put X on Y | insert X into Y
unlock X with Y | lock X with Y | eat X | read X
cook X with Y | slice X with Y | dice X with Y | chop X with Y | prepare meal

Explore. What you need is often in another room or inside a closed container: open things, \
examine them, and move on when a room has nothing left for you. A command that changed nothing \
will not work better the second time.

How a turn goes (another game, shortened):
goal: Find the coin and take it.
now: -= Kitchen =- ... There is an exit to the east.
you: go east
now: -= Pantry =- ... You see a coin.
you: take coin"""

_GENERATE = threading.Lock()  # TextWorld's generator keeps global state; one game at a time
_BLANK_LINES = re.compile(r"\n\s*\n+")
_STATUS_LINE = re.compile(r"\s*-= [^\n]*=-\s*-?\d+/\d+\s*$")  # the Z-machine's "-= Room =-score/moves"
# Inform 7's parser replies that mean "not understood" (no game turn passes).
NOT_UNDERSTOOD = (
    "That's not a verb I recognise.",
    "You can't see any such thing.",
    "I didn't understand that sentence.",
    "I only understood you as far as",
    "You seem to have said too little",
    "I beg your pardon?",
    "You can't use multiple objects with that verb.",
    "What do you want to",
    "Which do you mean,",
)


def games_root() -> Path:
    return cache_root() / "textworld"


def game_path(task: str, seed: int) -> Path:
    """The game file of (task, seed), generated first if it is not cached yet."""
    kind = TASK_KINDS[task]
    path = games_root() / task / f"seed{seed}.z8"
    if path.exists():
        return path
    with _GENERATE, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # jericho: generated games are "not fully supported"
        if path.exists():
            return path
        import textworld
        from textworld.challenges import CHALLENGES

        _, make, _ = CHALLENGES[kind.challenge]
        settings = dict(kind.settings)
        if kind.challenge == "tw-cooking":
            settings = {**_COOKING_DEFAULTS, **settings}
        path.parent.mkdir(parents=True, exist_ok=True)
        # Built in a scratch folder, then renamed: a killed run never leaves half a game behind.
        scratch = Path(tempfile.mkdtemp(dir=path.parent, prefix=".gen-"))
        try:
            options = textworld.GameOptions()
            options.seeds = seed
            options.path = str(scratch / path.name)
            options.file_ext = ".z8"
            game = make(settings=settings, options=options)
            built = Path(textworld.generator.compile_game(game, options))
            json_file = built.with_suffix(".json")
            if json_file.exists():
                os.replace(json_file, path.with_suffix(".json"))
            os.replace(built, path)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    return path


class TextWorldEnv(TextGameEnv):
    """One TextWorld game at a time.

    max_steps: step limit; per_task_limits uses TASK_KINDS[task].max_steps instead.
    correct_actions: replace a rejected command with the nearest admissible one.
    correction: "unparsed" (commands the parser rejects) or "listed" (commands not admissible).
    """

    GAME = "TextWorld"
    INSTRUCTIONS = INSTRUCTIONS

    def __init__(
        self,
        max_steps: int = 30,
        correct_actions: bool = True,
        per_task_limits: bool = False,
        correction: str = CORRECTIONS[0],
    ):
        import textworld  # noqa: F401 - fail here, not in the middle of a rollout

        super().__init__(max_steps, correct_actions, per_task_limits, correction)
        self._game: Path | None = None
        self._env = None
        self._state = None

    # -- the TextEnv interface -------------------------------------------------------------

    def tasks(self) -> list[str]:
        return list(TASK_KINDS)

    def split_variations(self, task: str) -> tuple[list[int], list[int]]:
        return list(TRAIN_SEEDS), list(TEST_SEEDS)

    def task_step_limit(self, task: str) -> int:
        return TASK_KINDS[task].max_steps

    def reset(self, task: str, variation: int, seed: int = 0) -> tuple[str, StepInfo]:
        # A game is a function of (task, variation); `seed` changes nothing.
        self._check_task(task)
        path = game_path(task, variation)
        if self._env is None or self._game != path:
            self._start(path)
        self._state = self._env.reset()
        self._begin_episode(task, " ".join(str(self._state.objective or "").split()))
        observation = _clean(self._state.description or self._state.feedback)
        return observation, self._info(False, None)

    def step(self, action: str) -> tuple[str, float, bool, StepInfo]:
        if self._state is None:
            raise RuntimeError("step() before reset()")
        if self.done:
            return "The game is over.", 0.0, True, self._info(False, None)
        command = parse_action(action).lower()
        corrected = command if command != " ".join(action.lower().split()) else None  # "> go east." ran as "go east"
        valid = self.valid_actions()
        if self.corrects_listed and command not in valid:
            corrected = self._replacement(command, valid)
        self._state, _, game_over = self._env.step(corrected or command)
        if self.corrects_unparsed and _not_understood(self._state.feedback):
            corrected = self._replacement(command, valid)
            if corrected is not None:
                self._state, _, game_over = self._env.step(corrected)
        max_score = max(float(self._state.max_score or 0), 1.0)
        reward = self._scored_step(100.0 * float(self._state.score or 0) / max_score)
        won = bool(self._state.won)
        self.done = bool(game_over) or won or bool(self._state.lost) or self.steps >= self.limit
        return _clean(self._state.feedback), reward, self.done, self._info(won, corrected)

    # -- extras ----------------------------------------------------------------------------

    def valid_actions(self) -> list[str]:
        if self._state is None or self.done:
            return []
        return list(self._state.admissible_commands or [])

    def gold_actions(self, task: str, variation: int) -> list[str]:
        """The game's own walkthrough (call reset afterwards)."""
        import textworld

        infos = textworld.EnvInfos(extras=["walkthrough"])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            env = textworld.start(str(game_path(task, variation)), request_infos=infos)
        try:
            return list(env.reset()["extra.walkthrough"])
        finally:
            env.close()

    def close(self) -> None:
        if self._env is not None:
            self._env.close()
            self._env = None

    # -- internals -------------------------------------------------------------------------

    def _start(self, path: Path) -> None:
        import textworld

        self.close()
        infos = textworld.EnvInfos(
            admissible_commands=True, objective=True, description=True, max_score=True, score=True, won=True, lost=True
        )
        with warnings.catch_warnings():
            # jericho warns that generated games are not in its list of known games; expected.
            warnings.simplefilter("ignore")
            self._env = textworld.start(str(path), request_infos=infos)
        self._game = path

    def _info(self, success: bool, corrected: str | None) -> StepInfo:
        return super()._info(success, corrected, self.valid_actions())


def _clean(text: str) -> str:
    """Game text without the status line, the prompt sign and runs of blank lines."""
    text = _STATUS_LINE.sub("", text or "")
    text = text.replace("\n>", "\n").strip().rstrip(">").strip()
    return _BLANK_LINES.sub("\n", text)


def _not_understood(feedback: str) -> bool:
    return _clean(feedback).startswith(NOT_UNDERSTOOD)
