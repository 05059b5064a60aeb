"""The run folder: everything a run produces, and the source of truth for every reader.

Layout (docs/run-folder.md has the record formats):

    config.json                  the resolved config, written once
    run.json                     state (running, paused, interrupted, finished, failed, stopped), iteration
    progress.json                while it trains: the iteration, phase and count the trainer is at
    metrics.jsonl                one line per iteration
    trajectories/iter-NNNNNN.jsonl   every episode of one iteration, in full (written whole)
    trajectories/index.jsonl     one summary line per episode, for listing without reading all
    memory/                      the tip store (its own append-only log, see memory/store.py)
    checkpoints/iter-NNNNNN/     model, optimizer, RNG and trainer state, memory marker
    onnx/iter-NNNNNN/            optional: that checkpoint as ONNX (`empo2-host export-onnx`)
    host.log                     the host's log
    .writer.lock                 held (flock) by the process that trains the run

An iteration's records are written in a fixed order — trajectories, index, metrics, then the
checkpoint — so after a kill the last checkpoint tells which iteration is complete; `rollback_to`
removes what a later, unfinished iteration left behind. Every file is written through the one
crash-safe kit (atomic.py).

There is no `checkpoints/LATEST` pointer: a checkpoint folder appears under its final name only
when it is complete (`commit_folder`), so the newest `iter-*` folder with a `trainer.json` *is*
the newest checkpoint, and a second record of that fact could only disagree with it (runs
written before this release may still hold a LATEST file; nothing reads it).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows: no advisory locks; one writer is then the user's care
    fcntl = None

from ..atomic import (
    append_jsonl,
    atomic_write_bytes,
    atomic_write_json,
    commit_folder,
    encode_lines,
    iter_jsonl,
    repair_jsonl,
    rewrite_jsonl,
)

WRITER_LOCK = ".writer.lock"


class RunFolderError(ValueError):
    """A folder that is not a run, or a run that cannot be created; one sentence."""


class RunLockedError(RunFolderError):
    """Another process is training this run; nothing was touched."""


def _flock_soon(handle, attempts: int = 20) -> bool:
    """The exclusive lock, retried for ~0.1 s: a reader's `writer_alive` probe holds it shared
    for microseconds, and must not make a real writer fail."""
    for attempt in range(attempts):
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except OSError:
            if attempt + 1 < attempts:
                time.sleep(0.005)
    return False


def iteration_name(iteration: int) -> str:
    return f"iter-{iteration:06d}"


class RunFolder:
    def __init__(self, path: Path, kept_paused_here: bool = False):
        self.path = Path(path)
        # A handle to a run this very process trains and keeps paused at an iteration boundary
        # while it reads the run (the host's rerun beside its paused run): its checkpoints stand
        # still and its memory log only grows, so reading it is safe although this process holds
        # its writer lock (rerun/branch.py, not_training).
        self.kept_paused_here = kept_paused_here

    def kept_paused(self) -> RunFolder:
        """This run's handle for a reader in the process that trains it and keeps it paused."""
        return RunFolder(self.path, kept_paused_here=True)

    # -- creating and opening ------------------------------------------------------------------

    @classmethod
    def create(cls, root: Path, run_id: str, config: dict) -> RunFolder:
        path = Path(root) / run_id
        if (path / "config.json").exists():
            raise RunFolderError(f"run folder {path} already exists; use `resume` or another name")
        path.mkdir(parents=True, exist_ok=True)
        folder = cls(path)
        atomic_write_json(path / "config.json", config)
        folder.set_state("created", iteration=0)
        return folder

    @classmethod
    def open(cls, path: Path) -> RunFolder:
        path = Path(path)
        if not (path / "config.json").is_file():
            raise RunFolderError(f"{path} is not a run folder (it has no config.json)")
        return cls(path)

    @contextlib.contextmanager
    def writer_lock(self) -> Iterator[None]:
        """Held by the one process that trains this run. An advisory lock on `.writer.lock`: the
        kernel drops it when the holder dies, so a run killed with -9 resumes without cleanup."""
        if fcntl is None:
            yield
            return
        handle = open(self.path / WRITER_LOCK, "a+")
        try:
            if not _flock_soon(handle):
                handle.seek(0)
                holder = handle.read().strip() or "another process"
                raise RunLockedError(f"run {self.run_id} is being trained by {holder}; stop it first") from None
            handle.truncate(0)
            handle.write(f"pid {os.getpid()}")
            handle.flush()
            yield
        finally:
            handle.close()

    def writer_alive(self) -> bool | None:
        """Whether some process holds the writer lock now (read-only probe: browsing a run must
        not write into it). None where there are no advisory locks (Windows): unknown."""
        if fcntl is None:
            return None
        try:
            handle = open(self.path / WRITER_LOCK)
        except FileNotFoundError:
            return False  # never trained
        except OSError:
            return None
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            return True
        finally:
            handle.close()  # closing drops the probe's lock
        return False

    def written_here(self) -> bool:
        """Whether this process holds the writer lock now (the lock file names its holder)."""
        try:
            holder = (self.path / WRITER_LOCK).read_text().strip()
        except OSError:
            return False
        return holder == f"pid {os.getpid()}" and self.writer_alive() is True

    def config(self) -> dict:
        return json.loads((self.path / "config.json").read_text())

    @property
    def run_id(self) -> str:
        return self.path.name

    # -- state ------------------------------------------------------------------------------------

    def state(self) -> dict:
        try:
            record = json.loads((self.path / "run.json").read_text())
        except (FileNotFoundError, ValueError):
            record = None
        return record if isinstance(record, dict) else {"state": "created", "iteration": 0}

    def set_state(self, state: str, **fields) -> None:
        record = {**self.state(), **fields, "state": state, "updated": time.time()}
        atomic_write_json(self.path / "run.json", record)

    # -- progress within an iteration -------------------------------------------------------------

    @property
    def progress_path(self) -> Path:
        return self.path / "progress.json"

    @property
    def ended_episodes_path(self) -> Path:
        return self.path / "ended-episodes.jsonl"

    def write_ended_episode(self, entry: dict, first: bool) -> None:
        """An episode of the iteration in progress as it ended (`iteration`, `done`, `total`, its
        `summary` and `record`), for readers in other processes. One JSON line each; the
        iteration's `first` starts a new file (a new inode: a reader that sees one reads it from
        its start). Not durable: it means something only until the iteration is written."""
        data = encode_lines([entry])
        if first:
            atomic_write_bytes(self.ended_episodes_path, data, durable=False)
        else:
            with open(self.ended_episodes_path, "ab") as f:
                f.write(data)

    def drop_ended_episodes(self) -> None:
        """The iteration is written (or about to be played again): its ended episodes are in
        the trajectories, or will be played anew."""
        self.ended_episodes_path.unlink(missing_ok=True)

    def ended_episodes(self) -> list[dict]:
        """The whole lines of the iteration in progress's ended episodes (none when absent)."""
        return list(iter_jsonl(self.ended_episodes_path))

    def write_progress(self, progress: dict | None) -> None:
        """What the trainer does now (RunProgress: iteration, phase, done, total), for readers in
        other processes; None when it stops. Not durable: it only means something while the
        writer lock is held."""
        if progress is None:
            self.progress_path.unlink(missing_ok=True)
        else:
            atomic_write_json(self.progress_path, progress, durable=False)

    def progress(self) -> dict | None:
        """The progress the trainer last wrote; None if none, or not one (a damaged file)."""
        try:
            record = json.loads(self.progress_path.read_text())
        except (OSError, ValueError):
            return None
        counts = ("iteration", "done", "total")
        if not (
            isinstance(record, dict)
            and set(record) == {*counts, "phase"}
            and isinstance(record["phase"], str)
            and all(type(record[k]) is int and record[k] >= 0 for k in counts)
        ):
            return None
        return record

    # -- metrics and trajectories ------------------------------------------------------------------

    @property
    def metrics_path(self) -> Path:
        return self.path / "metrics.jsonl"

    @property
    def index_path(self) -> Path:
        return self.path / "trajectories" / "index.jsonl"

    def trajectory_path(self, iteration: int) -> Path:
        return self.path / "trajectories" / f"{iteration_name(iteration)}.jsonl"

    def append_metrics(self, record: dict) -> None:
        append_jsonl(self.metrics_path, [record])

    def metrics(self) -> list[dict]:
        return list(iter_jsonl(self.metrics_path))

    def write_trajectories(self, iteration: int, episodes: list[dict], summaries: list[dict]) -> None:
        atomic_write_bytes(self.trajectory_path(iteration), encode_lines(episodes))
        append_jsonl(self.index_path, summaries)

    def trajectory_summaries(self) -> Iterator[dict]:
        return iter_jsonl(self.index_path)

    def trajectories(self, iteration: int) -> Iterator[dict]:
        return iter_jsonl(self.trajectory_path(iteration))

    def trajectory(self, episode_id: str) -> dict | None:
        iteration = int(episode_id.split("-")[0][1:])
        for episode in self.trajectories(iteration):
            if episode["id"] == episode_id:
                return episode
        return None

    # -- checkpoints -------------------------------------------------------------------------------

    @property
    def checkpoints_path(self) -> Path:
        return self.path / "checkpoints"

    def new_checkpoint_dir(self, iteration: int) -> Path:
        """A fresh temporary folder to fill; `commit_checkpoint` makes it visible atomically."""
        tmp = self.checkpoints_path / f".{iteration_name(iteration)}.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        return tmp

    def commit_checkpoint(self, iteration: int, tmp: Path, keep: int, pinned: int | None = None) -> Path:
        """Puts the checkpoint in place and deletes the older ones beyond the newest `keep`,
        except `pinned` (the one before a person's edits that no rerun has seen yet)."""
        final = self.checkpoints_path / iteration_name(iteration)
        shutil.rmtree(final, ignore_errors=True)
        commit_folder(tmp, final)
        for old in self.checkpoint_iterations()[:-keep]:
            if old != pinned:
                shutil.rmtree(self.checkpoints_path / iteration_name(old), ignore_errors=True)
        return final

    def checkpoint_iterations(self) -> list[int]:
        if not self.checkpoints_path.exists():
            return []
        found = []
        for p in self.checkpoints_path.iterdir():
            if p.is_dir() and p.name.startswith("iter-") and (p / "trainer.json").exists():
                found.append(int(p.name[len("iter-") :]))
        return sorted(found)

    def latest_checkpoint(self) -> tuple[int, Path] | None:
        """The newest complete checkpoint (what `resume` restores), or None."""
        iterations = self.checkpoint_iterations()
        if not iterations:
            return None
        return iterations[-1], self.checkpoints_path / iteration_name(iterations[-1])

    # -- resuming ------------------------------------------------------------------------------------

    def rollback_to(self, iteration: int) -> None:
        """Removes every record of iterations after `iteration` (an interrupted one)."""
        for path in (self.metrics_path, self.index_path):
            repair_jsonl(path)
            rewrite_jsonl(path, lambda r: r.get("iteration", 0) <= iteration)
        folder = self.path / "trajectories"
        if folder.exists():
            for p in folder.glob("iter-*.jsonl"):
                if int(p.stem[len("iter-") :]) > iteration:
                    p.unlink()
            for p in folder.glob(".*.tmp"):
                p.unlink()
        if self.checkpoints_path.exists():
            for p in self.checkpoints_path.glob(".*.tmp"):
                shutil.rmtree(p, ignore_errors=True)

    @property
    def memory_path(self) -> Path:
        return self.path / "memory"

    @property
    def log_path(self) -> Path:
        return self.path / "host.log"
