"""Environments by name: the one place the trainer turns `env.name` into an environment.

Benchmarks with heavy dependencies (a JVM, Inform 7) are imported only when asked for, so the
built-in default starts without them.
"""

from __future__ import annotations

from typing import Callable

from .base import TextEnv
from .builtin.env import BuiltinEnv


def _builtin(config) -> TextEnv:
    return BuiltinEnv(max_steps=config.max_steps, correct_actions=config.correct_actions)


def _scienceworld(config) -> TextEnv:
    from .scienceworld import ScienceWorldEnv

    return ScienceWorldEnv(max_steps=config.max_steps, correct_actions=config.correct_actions,
                           per_task_limits=config.step_limits == "per-task",
                           simplification=config.simplification, correction=config.correction)


def _textworld(config) -> TextEnv:
    from .textworld import TextWorldEnv

    return TextWorldEnv(max_steps=config.max_steps, correct_actions=config.correct_actions,
                        per_task_limits=config.step_limits == "per-task", correction=config.correction)


ENVIRONMENTS: dict[str, Callable[..., TextEnv]] = {
    "builtin": _builtin,
    "scienceworld": _scienceworld,
    "textworld": _textworld,
}


def make_env(config) -> TextEnv:
    """A fresh environment for an `EnvConfig`; unknown names are a config error upstream."""
    try:
        factory = ENVIRONMENTS[config.name]
    except KeyError:
        raise ValueError(f"unknown environment {config.name!r}; known: {', '.join(ENVIRONMENTS)}") from None
    return factory(config)
