"""How the outside world steers a training run and hears from it, without importing the trainer.

The server (and the CLI) subclass these before any run exists; keeping them here, free of torch,
lets `empo2-host serve` start without loading the training stack (trainer.py imports it).
"""

from __future__ import annotations

import threading
import time


class TrainerHooks:
    """What a trainer tells the outside world; the server subclasses it. All optional."""

    def on_state(self, state: str, iteration: int) -> None: ...
    def on_progress(self, iteration: int, phase: str, done: int, total: int) -> None: ...
    def on_metrics(self, record: dict) -> None: ...
    def on_trajectories(self, iteration: int, summaries: list[dict]) -> None: ...

    def on_episode(self, iteration: int, summary: dict, record: dict, done: int, total: int) -> None:
        """An episode of the iteration in progress ended: its summary and its full record as far
        as they are known then (records.ended_summary, ended_record: no novelty reward, no tip
        yet), `done` of the iteration's `total` episodes ended. The iteration's `on_trajectories`
        later carries the summaries of the records written."""


# At most ~10 progress reports a second within a phase: a run's progress.json (which the host
# tells clients as `run/progress`) and a rerun job's `update/progress`.
PROGRESS_INTERVAL_S = 0.1


class ProgressThrottle:
    """The one rule for how often a run's progress is passed on: a new (iteration, phase) at
    once, then at most one every `interval_s` within it (the host's `run/progress` and
    `update/progress`, and the progress a run writes to its folder)."""

    def __init__(self, interval_s: float):
        self.interval_s = interval_s
        self._last = (None, None, 0.0)  # iteration, phase, time of the last one passed on

    def due(self, iteration: int, phase: str) -> bool:
        now = time.monotonic()
        last_iteration, last_phase, last_time = self._last
        if (iteration, phase) == (last_iteration, last_phase) and now - last_time < self.interval_s:
            return False
        self._last = (iteration, phase, now)
        return True


class RecordedProgress(TrainerHooks):
    """The trainer's hooks with each progress also written to the run folder (progress.json),
    and each episode of the iteration in progress as it ends (ended-episodes.jsonl, dropped once
    the iteration is written), so that a host in another process, following the run from its
    files, can say where it is and show its episodes as they end. Within one phase a progress
    write comes at most every `interval_s`; a new phase is written at once."""

    def __init__(self, inner: TrainerHooks, folder, interval_s: float = PROGRESS_INTERVAL_S):
        self.inner, self.folder = inner, folder
        self._throttle = ProgressThrottle(interval_s)

    def on_progress(self, iteration: int, phase: str, done: int, total: int) -> None:
        if self._throttle.due(iteration, phase):
            self.folder.write_progress({"iteration": iteration, "phase": phase, "done": int(done), "total": int(total)})
        self.inner.on_progress(iteration, phase, done, total)

    def on_state(self, state: str, iteration: int) -> None:
        # Starting, a resumed run plays its unfinished iteration again; ending, it plays none.
        self.folder.drop_ended_episodes()
        self.inner.on_state(state, iteration)

    def on_metrics(self, record: dict) -> None:
        self.inner.on_metrics(record)

    def on_trajectories(self, iteration: int, summaries: list[dict]) -> None:
        # The iteration's records are in the folder now; its ended episodes are dropped after
        # the inner hooks have returned (the host reads them one last time there).
        self.inner.on_trajectories(iteration, summaries)
        self.folder.drop_ended_episodes()

    def on_episode(self, iteration: int, summary: dict, record: dict, done: int, total: int) -> None:
        entry = {"iteration": iteration, "done": done, "total": total, "summary": summary, "record": record}
        self.folder.write_ended_episode(entry, first=done == 1)
        self.inner.on_episode(iteration, summary, record, done, total)


class RunControl:
    """Pause, resume and stop requests from another thread, honoured between steps."""

    def __init__(self):
        self._running = threading.Event()
        self._running.set()
        self.stop_requested = False
        self.interrupted = False

    def pause(self) -> None:
        self._running.clear()

    def resume(self) -> None:
        self._running.set()

    def stop(self) -> None:
        self.stop_requested = True
        self._running.set()

    def interrupt(self) -> None:
        """Stops like `stop`, but the run ends `interrupted`: its host went away, not its user,
        so it is meant to be resumed."""
        self.interrupted = True
        self.stop()

    @property
    def paused(self) -> bool:
        return not self._running.is_set()

    def wait_if_paused(self) -> bool:
        """Blocks while paused; True when the run should stop."""
        self._running.wait()
        return self.stop_requested
