"""Demonstrations an environment ships: episodes a chat model is fine-tuned on before EMPO²
(`build-policy --model NAME --warm-start --env ENV`, policy/env_warm_start.py;
docs/environments.md).

An environment declares them with an optional method, `demonstrations()`, that returns the path
of a JSON-lines file, one episode a line:

    {"task": "escape", "task_description": "find the key and leave the house ...",
     "observations": ["you are in the hall ...", "you search the coat rack ..."],
     "actions": ["search coat rack"], "score": 100, "tip": "the key was in the ... score 100"}

`observations` and `actions` are required: the observation from reset and then the one after
each action (one more than the actions; the last may be left out). `task_description` is the
goal as the prompt shows it (default: none shown); `task` is for the reader; `tip` is the
one-sentence tip a good writer leaves after the episode and needs the episode's final `score`
and its last observation.

Each step becomes one example, the prompt the trainer would build at that step (the environment's
instructions as the system prompt, the task, the recent history, the observation: prompting.py)
and the action as the answer; each tip one example of the reflection prompt. Torch-free: the
file is checked before a model loads, and every fault in it is one sentence naming the line.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from pathlib import Path

from ..envs.base import parse_action
from ..envs.plugin import EnvironmentFault, raised
from .prompting import Turn, reflection_messages, step_messages, step_user_text

DEMONSTRATIONS_METHOD = "demonstrations"
_KEYS = {"task", "task_description", "observations", "actions", "score", "tip"}


@dataclass(frozen=True)
class DemonstrationEpisode:
    """One line of a demonstrations file."""

    task_description: str
    observations: list[str]  # len(actions) or len(actions) + 1
    actions: list[str]
    score: float | None = None
    tip: str = ""
    task: str = ""


def demonstrations_file(env, name: str) -> Path:
    """The demonstrations file `env` declares; an EnvironmentFault (one sentence) when it
    declares none, its method raises or returns no path of an existing file."""
    inner = getattr(env, "inner", env)  # a PluginEnv's environment, or a built-in TextEnv
    method = getattr(inner, DEMONSTRATIONS_METHOD, None)
    if not callable(method):
        raise EnvironmentFault(
            f"environment {name!r} ships no demonstrations (an environment declares "
            f"them with a method {DEMONSTRATIONS_METHOD}() that returns the path of a "
            "JSON-lines file; docs/environments.md)"
        )
    try:
        found = method()
    except Exception as err:  # noqa: BLE001 - a researcher's code: any exception is its fault
        raise EnvironmentFault(raised(name, f"{DEMONSTRATIONS_METHOD}()", err)) from err
    if not isinstance(found, (str, Path)):
        raise EnvironmentFault(
            f"environment {name!r} {DEMONSTRATIONS_METHOD}() returned a "
            f"{type(found).__name__}, not the path of a JSON-lines file"
        )
    path = Path(found)
    if not path.is_file():
        raise EnvironmentFault(f"environment {name!r} names the demonstrations file {path}, which does not exist")
    return path


def file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def load_demonstrations(path: Path, name: str) -> list[DemonstrationEpisode]:
    """Every episode of the file, checked; an EnvironmentFault naming the file and line of the
    first fault (at least one episode is required)."""
    episodes = []
    with open(path, encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if line.strip():
                where = f"environment {name!r} demonstrations {path.name} line {number}"
                episodes.append(_episode(line, where))
    if not episodes:
        raise EnvironmentFault(f"environment {name!r} demonstrations {path.name} hold no episode")
    return episodes


def _episode(line: str, where: str) -> DemonstrationEpisode:
    try:
        data = json.loads(line)
    except ValueError as err:
        raise EnvironmentFault(f"{where} is not JSON ({err.args[0].split(':')[0]})") from None
    if not isinstance(data, dict):
        raise EnvironmentFault(f"{where} is a {type(data).__name__}, not a JSON object")
    unknown = sorted(set(data) - _KEYS)
    if unknown:
        raise EnvironmentFault(f"{where} has the unknown key {unknown[0]!r} (keys: {', '.join(sorted(_KEYS))})")
    observations, actions = data.get("observations"), data.get("actions")
    for key, value in (("observations", observations), ("actions", actions)):
        if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
            raise EnvironmentFault(f"{where}: {key!r} is not a non-empty list of text")
    if len(observations) not in (len(actions), len(actions) + 1):
        raise EnvironmentFault(
            f"{where} has {len(observations)} observations for {len(actions)} actions "
            "(the first observation and one after each action, the last optional)"
        )
    for step, action in enumerate(actions, 1):
        if parse_action(action) != action:
            raise EnvironmentFault(
                f"{where}: action {step} {action!r} is not as the environment receives "
                f"it ({parse_action(action)!r}): write one line without wrapping marks"
            )
    for key in ("task", "task_description", "tip"):
        if not isinstance(data.get(key, ""), str):
            raise EnvironmentFault(f"{where}: {key!r} is not text")
    score = data.get("score")
    if score is not None and (
        isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score)
    ):
        raise EnvironmentFault(f"{where}: 'score' is not a finite number")
    if data.get("tip", "").strip() and (score is None or len(observations) == len(actions)):
        raise EnvironmentFault(
            f"{where} has a tip but not the final 'score' and the last observation that its reflection prompt shows"
        )
    return DemonstrationEpisode(
        data.get("task_description", ""),
        observations,
        actions,
        None if score is None else float(score),
        data.get("tip", "").strip(),
        data.get("task", ""),
    )


def demonstration_examples(
    episodes: list[DemonstrationEpisode],
    system: str,
    history_steps: int,
    observation_words: int,
    reflection_observation_words: int,
) -> list[tuple[list[dict], str]]:
    """(chat messages, answer) pairs: every step with the prompt a rollout would build at it,
    and every tip with the reflection prompt of its episode."""
    examples: list[tuple[list[dict], str]] = []
    for episode in episodes:
        # As a rollout's history: each action with the observation it led to.
        turns = [Turn(a, o) for a, o in zip(episode.actions, episode.observations[1:])]
        for step, (observation, action) in enumerate(zip(episode.observations, episode.actions)):
            user = step_user_text(episode.task_description, turns[:step], observation, history_steps, observation_words)
            examples.append((step_messages(user, system), action))
        if episode.tip:
            examples.append(
                (
                    reflection_messages(
                        episode.task_description, turns, episode.score, reflection_observation_words, system
                    ),
                    episode.tip,
                )
            )
    return examples
