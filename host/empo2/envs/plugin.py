"""A researcher's own environment behind `TextEnv`: defaults for what it leaves out, and a check
of everything it returns (docs/environments.md).

An environment found by name (registry.py) needs only `reset` and `step`. This adapter gives it
the rest of the trainer's contract:

- no `tasks()`: one task, `main`; no `variations()`: seeds play as variations (variation v is
  reset with seed v; SEED_VARIATIONS says which seeds each split has);
- `reset` is called with the keywords it names of `task`, `variation` and `seed`, and may return
  the observation alone or `(observation, info)`;
- `step` may return `(observation, reward, done, info)` or gymnasium's
  `(observation, reward, terminated, truncated, info)`; `info` is a `StepInfo`, a dict of its
  fields, or None; a missing score is the sum of the rewards so far, a missing success False;
- valid actions (from `info` or a `valid_actions()` method) are optional: with them an action
  outside the list is replaced by the nearest one (env.correct_actions); without them actions go
  to the environment as the policy wrote them (its first line, parse_action), which the run's
  log says once;
- the episode ends at env.max_steps at the latest.

Whatever the environment does wrong — raises, hangs past env.step_timeout_s, returns the wrong
shape, a reward that is not a finite number, an observation that is not text or is over
MAX_OBSERVATION_CHARS — is an `EnvironmentFault`: one sentence naming the environment and what it
did, which ends the run `failed` (training/trainer.py).
"""

from __future__ import annotations

import inspect
import logging
import math
import numbers
import queue
import threading
import time
from dataclasses import fields
from itertools import repeat

from .base import StepInfo, correct_action, parse_action

log = logging.getLogger(__name__)

DEFAULT_TASK = "main"
# Seeds that play as variations when an environment lists none (env.train_variations and
# env.test_variations choose others).
SEED_VARIATIONS = {"train": list(range(10)), "test": list(range(1000, 1020))}
SEED_VARIATIONS["all"] = SEED_VARIATIONS["train"] + SEED_VARIATIONS["test"]
MAX_OBSERVATION_CHARS = 1_000_000
_INFO_FIELDS = {f.name for f in fields(StepInfo)}
_warned_no_valid_actions: set[str] = set()


class EnvironmentFault(RuntimeError):
    """An environment did something the contract does not allow; the message is one sentence
    that names it and says what it did."""


class PluginEnv:
    """`TextEnv` over any object with `reset` and `step` (see the module docstring).

    name: how the run names the environment (its env.name), used in every fault's sentence.
    max_steps: the step limit of an episode.
    correct_actions: replace an action outside the listed valid actions with the nearest one.
    step_timeout_s: the longest a reset or a step may take; 0 waits forever.
    """

    def __init__(self, inner, name: str, max_steps: int, correct_actions: bool = True, step_timeout_s: float = 0.0):
        self.inner = inner
        self.name = name
        self.max_steps = max_steps
        self.correct_actions = correct_actions
        self.step_timeout_s = step_timeout_s
        self._caller = _Caller(name, step_timeout_s) if step_timeout_s > 0 else None
        self._reset_keywords = _keywords(inner.reset, ("task", "variation", "seed"))
        self.description = ""
        self.valid: list[str] | None = None
        self.score = 0.0
        self.steps = 0
        self.done = True

    # -- the TextEnv interface -------------------------------------------------------------

    def tasks(self) -> list[str]:
        listed = getattr(self.inner, "tasks", None)
        if not callable(listed):
            return [DEFAULT_TASK]
        tasks = self._call("tasks", listed)
        if not isinstance(tasks, (list, tuple)) or not tasks or not all(isinstance(t, str) for t in tasks):
            raise EnvironmentFault(
                f"environment {self.name!r} listed its tasks as {_shown(tasks)}, not a non-empty list of names"
            )
        return list(tasks)

    def variations(self, task: str, split: str) -> list[int]:
        if split not in SEED_VARIATIONS:
            raise ValueError(f"unknown split {split!r}: use train, test or all")
        listed = getattr(self.inner, "variations", None)
        if not callable(listed):
            return list(SEED_VARIATIONS[split])
        variations = self._call("variations", listed, task, split)
        if not isinstance(variations, (list, tuple)) or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in variations
        ):
            raise EnvironmentFault(
                f"environment {self.name!r} listed the variations of {task!r} "
                f"as {_shown(variations)}, not a list of integers"
            )
        return list(variations)

    def instructions(self) -> str | None:
        own = getattr(self.inner, "instructions", None)
        return self._call("instructions", own) if callable(own) else None

    def reset(self, task: str, variation: int, seed: int = 0) -> tuple[str, StepInfo]:
        if not callable(getattr(self.inner, "variations", None)):
            seed = variation  # seeds play as variations: every rollout of a group plays one world
        given = {"task": task, "variation": variation, "seed": seed}
        result = self._call("reset", self.inner.reset, **{k: given[k] for k in self._reset_keywords})
        if isinstance(result, tuple) and len(result) == 2:
            observation, raw_info = result
        else:
            observation, raw_info = result, None
        observation = self._observation(observation, "reset")
        info = self._info(raw_info, "reset")
        self.description = info.get("task_description") or ""
        self.score, self.steps, self.done = float(info.get("score") or 0.0), 0, False
        self.valid = self._valid_actions(info, "reset")
        return observation, self._step_info(info)

    def step(self, action: str) -> tuple[str, float, bool, StepInfo]:
        if self.done:
            return "the episode is over .", 0.0, True, self._step_info({})
        if self.valid and action in self.valid:  # the usual case, as it is: nothing to parse
            command, corrected = action, None
        else:
            command = parse_action(action)
            if self.valid and command not in self.valid and self.correct_actions:
                command = correct_action(command, self.valid)
            corrected = command if command != " ".join(action.split()) else None
        result = self._call("step", self.inner.step, command)
        if not isinstance(result, tuple) or len(result) not in (4, 5):
            raise EnvironmentFault(
                f"environment {self.name!r} step returned {_shown(result)}, not (observation, reward, done, info)"
            )
        if len(result) == 5:  # gymnasium: terminated or truncated ends the episode
            observation, reward, terminated, truncated, raw_info = result
            done = terminated or truncated
        else:
            observation, reward, done, raw_info = result
        observation = self._observation(observation, "step")
        if not _finite(reward):
            raise EnvironmentFault(
                f"environment {self.name!r} step returned the reward {_shown(reward)}, not a finite number"
            )
        if not (
            type(done) is bool or isinstance(done, numbers.Integral) or type(done).__name__ == "bool_"
        ):  # numpy's too
            raise EnvironmentFault(f"environment {self.name!r} step returned done={_shown(done)}, not true or false")
        info = self._info(raw_info, "step")
        self.steps += 1
        score = info.get("score")
        self.score = float(score) if score is not None else self.score + float(reward)
        self.valid = self._valid_actions(info, "step")
        self.done = bool(done) or self.steps >= self.max_steps
        step_info = self._step_info(info)
        step_info.corrected_action = corrected
        return observation, float(reward), self.done, step_info

    def close(self) -> None:
        close = getattr(self.inner, "close", None)
        if callable(close):
            close()

    # -- checks ----------------------------------------------------------------------------

    def _call(self, what: str, method, *args, **kwargs):
        """The environment's method, its exception a fault, within the timeout when one is set."""
        if self._caller is not None:
            return self._caller.call(what, method, *args, **kwargs)
        try:
            return method(*args, **kwargs)
        except Exception as err:  # noqa: BLE001 - whatever it raised, said in one sentence
            raise EnvironmentFault(raised(self.name, what, err)) from err

    def _observation(self, observation, where: str) -> str:
        if not isinstance(observation, str):
            raise EnvironmentFault(
                f"environment {self.name!r} {where} returned an observation of type "
                f"{type(observation).__name__}, not text"
            )
        if len(observation) > MAX_OBSERVATION_CHARS:
            raise EnvironmentFault(
                f"environment {self.name!r} {where} returned an observation of "
                f"{len(observation):,} characters (at most {MAX_OBSERVATION_CHARS:,})"
            )
        return observation

    def _info(self, info, where: str) -> dict:
        """The info as a dict of StepInfo's fields (a missing or None field: not given), its
        other keys kept for StepInfo.extra."""
        if info is None:
            return {}
        if isinstance(info, StepInfo):
            info = info.__dict__  # read, never written
        elif not isinstance(info, dict):
            raise EnvironmentFault(
                f"environment {self.name!r} {where} returned info {_shown(info)}, not a StepInfo or a dict"
            )
        score = info.get("score")
        if score is not None and not _finite(score):
            raise EnvironmentFault(
                f"environment {self.name!r} {where} returned the score {_shown(score)}, not a finite number"
            )
        return info

    def _valid_actions(self, info: dict, where: str) -> list[str] | None:
        valid = info.get("valid_actions")
        if not valid:
            method = getattr(self.inner, "valid_actions", None)
            valid = self._call("valid_actions", method) if callable(method) else None
        if not valid:
            # Said once, of the first observation: a last step may well list none.
            if where == "reset" and self.name not in _warned_no_valid_actions:
                _warned_no_valid_actions.add(self.name)
                log.info(
                    "environment %r lists no valid actions: its actions are not corrected "
                    "(env.correct_actions has no effect on it)",
                    self.name,
                )
            return None
        if not isinstance(valid, (list, tuple)) or not all(map(isinstance, valid, repeat(str))):
            raise EnvironmentFault(
                f"environment {self.name!r} {where} listed its valid actions as {_shown(valid)}, not a list of text"
            )
        return list(valid)

    def _step_info(self, info: dict) -> StepInfo:
        extra = {} if info.keys() <= _INFO_FIELDS else {k: v for k, v in info.items() if k not in _INFO_FIELDS}
        if isinstance(info.get("extra"), dict):
            extra.update(info["extra"])
        extra["steps"], extra["limit"] = self.steps, self.max_steps
        return StepInfo(self.description, self.valid or [], self.score, bool(info.get("success") or False), None, extra)


def _finite(value) -> bool:
    """A real number that is finite (not a bool, not NaN or infinite)."""
    if type(value) is float or type(value) is int:  # the usual case, without the ABC check
        return math.isfinite(value)
    return not isinstance(value, bool) and isinstance(value, numbers.Real) and math.isfinite(value)


def raised(name: str, what: str, err: BaseException) -> str:
    """The sentence of an exception an environment's `what` raised."""
    text = str(err).strip().splitlines()[0][:200] if str(err).strip() else ""
    return f"environment {name!r} raised {type(err).__name__} in {what}" + (f": {text}" if text else "")


def _shown(value) -> str:
    """A value in a fault's sentence: its type and a short repr."""
    text = repr(value)
    return f"{type(value).__name__} {text[:60] + '…' if len(text) > 60 else text}"


def _keywords(method, wanted: tuple[str, ...]) -> tuple[str, ...]:
    """Which of `wanted` a method takes by keyword (all of them with **kwargs)."""
    try:
        parameters = inspect.signature(method).parameters.values()
    except (TypeError, ValueError):
        return wanted
    if any(p.kind is p.VAR_KEYWORD for p in parameters):
        return wanted
    names = {p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    return tuple(w for w in wanted if w in names)


class _Caller:
    """Runs an environment's calls on a thread of its own so that a call that hangs ends in a
    fault after `timeout_s` instead of hanging the run (the stuck thread is a daemon: it
    cannot keep the process alive).

    A hand-off between threads costs more than a small environment's whole step, so a rollout
    turn goes over in one (`turn`): the turn's thread calls each environment directly and
    notes which call it is in since when; the waiting thread ends the turn in a fault when
    one call runs past `timeout_s`.
    """

    def __init__(self, name: str, timeout_s: float):
        self.name = name
        self.timeout_s = timeout_s
        self._calls: queue.SimpleQueue = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._stuck = False

    def call(self, what: str, method, *args, **kwargs):
        playing = getattr(_turn_thread, "turn", None)
        if playing is not None:  # on a turn's thread: the turn's waiter keeps the time
            playing.name, playing.what, playing.since = self.name, what, time.monotonic()
            try:
                return method(*args, **kwargs)
            except Exception as err:  # noqa: BLE001 - whatever it raised, said in one sentence
                raise EnvironmentFault(raised(self.name, what, err)) from err
        answer = self._hand_over(lambda: method(*args, **kwargs))
        try:
            ok, value = answer.get(timeout=self.timeout_s)
        except queue.Empty:
            self._stuck = True
            raise EnvironmentFault(
                f"environment {self.name!r} took more than {self.timeout_s:g} s in {what} (env.step_timeout_s)"
            ) from None
        if not ok:
            raise EnvironmentFault(raised(self.name, what, value)) from value
        return value

    def turn(self, play):
        """`play()` on this caller's thread, its environments' calls made there directly; an
        EnvironmentFault when one of them takes more than `timeout_s`."""
        playing = _Turn(self.name)

        def on_the_thread():
            _turn_thread.turn = playing
            try:
                return play()
            finally:
                _turn_thread.turn = None

        answer = self._hand_over(on_the_thread)
        while True:
            left = playing.since + self.timeout_s - time.monotonic()
            try:
                ok, value = answer.get(timeout=max(left, 0.0))
                break
            except queue.Empty:
                if time.monotonic() - playing.since >= self.timeout_s:
                    self._stuck = True
                    raise EnvironmentFault(
                        f"environment {playing.name!r} took more than "
                        f"{self.timeout_s:g} s in {playing.what} "
                        "(env.step_timeout_s)"
                    ) from None
        if not ok:
            raise value
        return value

    def _hand_over(self, job) -> queue.SimpleQueue:
        if self._stuck:
            raise EnvironmentFault(
                f"environment {self.name!r} is still inside a call that took more "
                f"than {self.timeout_s:g} s (env.step_timeout_s)"
            )
        if self._thread is None:
            self._thread = threading.Thread(target=self._serve, name=f"env {self.name}", daemon=True)
            self._thread.start()
        answer: queue.SimpleQueue = queue.SimpleQueue()
        self._calls.put((job, answer))
        return answer

    def _serve(self) -> None:
        while True:
            job, answer = self._calls.get()
            try:
                answer.put((True, job()))
            except BaseException as err:  # noqa: BLE001 - handed to the caller's thread
                answer.put((False, err))


class _Turn:
    """Which environment call a turn's thread is in, and since when (time.monotonic)."""

    def __init__(self, name: str):
        self.name, self.what, self.since = name, "a turn", time.monotonic()


_turn_thread = threading.local()  # .turn: the _Turn this thread plays, if any


def call_each(call, envs: list, items: list) -> list:
    """call(env, item) for every pair, in order, on this thread. Environments with a step
    timeout take the whole turn in one hand-off to a thread of theirs (see _Caller)."""
    callers = [env._caller if isinstance(env, PluginEnv) else None for env in envs]
    if not envs or any(caller is None for caller in callers):
        return [call(env, item) for env, item in zip(envs, items)]
    return callers[0].turn(lambda: [call(env, item) for env, item in zip(envs, items)])
