"""Lockbox: a locked-door text puzzle, an example of an environment of one's own for EMPO²."""

from .env import HIDING_PLACES, LockboxEnv

__all__ = ["LockboxEnv", "HIDING_PLACES"]
