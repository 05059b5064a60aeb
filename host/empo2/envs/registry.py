"""Environments by name: the one place the trainer turns `env.name` into an environment."""

from __future__ import annotations

from typing import Callable

from .base import TextEnv
from .builtin.env import BuiltinEnv


def _builtin(config) -> TextEnv:
    return BuiltinEnv(max_steps=config.max_steps, correct_actions=config.correct_actions)


ENVIRONMENTS: dict[str, Callable[..., TextEnv]] = {"builtin": _builtin}


def make_env(config) -> TextEnv:
    """A fresh environment for an `EnvConfig`; unknown names are a config error upstream."""
    try:
        factory = ENVIRONMENTS[config.name]
    except KeyError:
        raise ValueError(f"unknown environment {config.name!r}; known: {', '.join(ENVIRONMENTS)}") from None
    return factory(config)
