"""Environments kept for a whole run, so simulators with a start-up cost start once.

A ScienceWorld environment is a JVM (about 2 s to start, 210 MB); a batch of B×N lockstep
episodes needs B×N of them at once. The pool makes them on first demand and hands the same ones
out again every iteration; `reset` makes an environment's past irrelevant, so reusing one is the
same as making a new one (tested on the built-in worlds, whose runs are bit-for-bit unchanged).
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from .base import TextEnv


class EnvPool:
    def __init__(self, factory: Callable[[], TextEnv], workers: int = 1):
        self.factory = factory
        self.workers = workers
        self._envs: list[TextEnv] = []

    def take(self, n: int) -> list[TextEnv]:
        """The first n environments, making the missing ones (on `workers` threads)."""
        missing = n - len(self._envs)
        if missing > 0:
            if self.workers > 1 and missing > 1:
                with ThreadPoolExecutor(max_workers=min(self.workers, missing)) as pool:
                    self._envs += list(pool.map(lambda _: self.factory(), range(missing)))
            else:
                self._envs += [self.factory() for _ in range(missing)]
        return self._envs[:n]

    def __len__(self) -> int:
        return len(self._envs)

    def close(self) -> None:
        for env in self._envs:
            close = getattr(env, "close", None)
            if callable(close):
                close()
        self._envs = []
