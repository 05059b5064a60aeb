"""The one run a host trains, as the event loop holds it, and the control its trainer thread
obeys (pause, pause after iteration N, stop)."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from ...config import TrainConfig
from ...run_folder.folder import RunFolder
from ...training.run_control import RunControl

if TYPE_CHECKING:  # the store loads numpy: the server names it without importing it
    from ...memory.store import MemoryStore
    from .run_news import RunNews


class ServerControl(RunControl):
    """RunControl that says when the trainer actually blocks, and can pause after iteration N."""

    def __init__(self, on_paused, on_resumed, iteration):
        super().__init__()
        self.pause_after: int | None = None
        self._on_paused, self._on_resumed, self._iteration = on_paused, on_resumed, iteration

    def wait_if_paused(self) -> bool:
        after = self.pause_after
        if after is not None and self._iteration() >= after:
            self.pause_after = None
            self.pause()
        if self.paused and not self.stop_requested:
            self._on_paused()
            stop = super().wait_if_paused()
            if not stop:
                self._on_resumed()
            return stop
        return super().wait_if_paused()


class LiveTrainer(Protocol):
    """What the host reads of its live run's trainer: training/trainer.py's `Trainer` (a
    rerun's too, methods/update.py), named here without importing it (it loads torch)."""

    iteration: int  # the last finished iteration
    memory: MemoryStore | None  # the trainer's own store; None until it has opened it


@dataclass
class LiveRun:
    """The run this host trains. Mutated on the event loop only."""

    run_id: str
    folder: RunFolder
    config: TrainConfig
    resume: bool
    state: str = "starting"
    iteration: int = 0
    progress: dict | None = None
    error: str | None = None
    trainer: LiveTrainer | None = None  # None until the trainer is built (the model loads first)
    control: ServerControl | None = None
    thread: threading.Thread | None = None
    memory_ready: asyncio.Event = field(default_factory=asyncio.Event)
    ended: asyncio.Event = field(default_factory=asyncio.Event)
    work: object = None  # fn(live, hooks) run instead of training (a rerun: methods/update.py)
    # Where its folder's files were read to (run_news.py), from its launch to its end.
    news: RunNews | None = None

    def trained_iteration(self, default: int = 0) -> int:
        """The trainer's last finished iteration; `default` while there is no trainer yet."""
        return self.trainer.iteration if self.trainer is not None else default

    def trainer_memory(self) -> MemoryStore | None:
        """The trainer's own tip store, once there is a trainer and it has opened it."""
        return self.trainer.memory if self.trainer is not None else None
