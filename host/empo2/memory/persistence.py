"""Crash-safe, append-only files of one memory store.

A store folder holds two files:

  events.jsonl  one JSON object per line: a header, then add | update | delete | evict events,
                each with what replay needs (an add lists every entry's key text and action and
                the row of its first key).
  keys.f32      the entries' key vectors, float32 rows of `dim`, in entry order (row = entry
                number), so reopening never re-embeds.

Writes: keys first, then the event lines, each flushed and fsynced, one write per logical
operation, through the run folder's one crash-safe kit (atomic.py). A kill -9 can therefore leave
only (a) a torn last line, (b) a partial last key row,
(c) key rows that no event references yet. `EventLog.open` cuts all three away; everything before
is intact, so replaying the log gives exactly the state before the crash. Evict lines are derived
(an add's evictions follow from the state), written for people and tools reading the log; replay
recomputes them.

A marker ({events_bytes, keys_bytes, ...}) taken at a training checkpoint lets a resumed run cut
both files back to that point (`truncate_to`).
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from ..atomic import encode_lines, fsync_dir, intact_length, truncate_synced, write_synced
from .layout import EVENTS_FILE, KEYS_FILE
from .tips import CorruptMemory, MemoryInUse, is_person

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no cross-process guard
    fcntl = None  # type: ignore[assignment]

log = logging.getLogger(__name__)

FORMAT = 1


class EventFiles:
    """The two files of a store folder as they are now, for replay only: no lock, nothing
    created, cut or appended, so a writer in another process goes on undisturbed. A torn last
    line (that writer mid-append) is left out; key rows no event names yet are ignored by replay.
    `EventLog` is the writer's kind."""

    def __init__(self, folder: Path, dim: int):
        self.folder = Path(folder)
        self.dim = dim
        self.row_bytes = 4 * dim
        self.events_path = self.folder / EVENTS_FILE
        self.keys_path = self.folder / KEYS_FILE
        self.events_bytes = intact_length(self.events_path) if self.events_path.exists() else 0
        self.keys_rows = (self.keys_path.stat().st_size // self.row_bytes) if self.keys_path.exists() else 0

    # --- reading -------------------------------------------------------------------------

    def iter_events(self, start: int = 0, stop: int | None = None) -> Iterator[tuple[dict, int]]:
        """(event, end offset) for the lines in bytes [start, stop) of events.jsonl."""
        stop = self.events_bytes if stop is None else stop
        if stop <= start:  # nothing to read (a reader of a folder not written yet has no file)
            return
        with open(self.events_path, "rb") as f:
            f.seek(start)
            offset = start
            while offset < stop:
                line = f.readline()
                if not line.endswith(b"\n"):
                    raise CorruptMemory(f"{self.events_path}: line at byte {offset} is incomplete")
                try:
                    event = json.loads(line)
                except ValueError as exc:
                    raise CorruptMemory(f"{self.events_path}: line at byte {offset} is not JSON ({exc})") from None
                offset += len(line)
                yield event, offset

    def keys_view(self) -> np.ndarray:
        """All key rows, memory-mapped read-only: (rows, dim). Replay reads them once, in order."""
        if self.keys_rows == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        shape = (self.keys_rows, self.dim)
        return np.memmap(self.keys_path, dtype=np.float32, mode="r", shape=shape)

    def read_keys(self, first: int, count: int) -> np.ndarray:
        """Key rows [first, first + count): float32 (count, dim), a copy."""
        if first + count > self.keys_rows:
            raise CorruptMemory(
                f"{self.keys_path}: rows {first}..{first + count - 1} are referenced but the file "
                f"has {self.keys_rows} rows"
            )
        out = np.empty((count, self.dim), dtype=np.float32)
        with open(self.keys_path, "rb") as f:
            f.seek(first * self.row_bytes)
            data = f.read(count * self.row_bytes)
        out[:] = np.frombuffer(data, dtype=np.float32).reshape(count, self.dim)
        return out


class EventLog(EventFiles):
    """The two files of a store folder, opened for appending after tail recovery: the one
    writer (a second one gets MemoryInUse)."""

    def __init__(self, folder: Path, dim: int):
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        created = not (folder / EVENTS_FILE).exists()
        super().__init__(folder, dim)
        for p in (self.events_path, self.keys_path):
            p.touch(exist_ok=True)
        if created:
            fsync_dir(self.folder)
        self._events = open(self.events_path, "ab")
        self._lock_folder()
        self._recover_tails()
        self._keys = open(self.keys_path, "ab")
        self.events_bytes = self._events.seek(0, os.SEEK_END)
        self.keys_rows = self._keys.seek(0, os.SEEK_END) // self.row_bytes

    def _lock_folder(self) -> None:
        """One writer per folder: two trainers appending to one log would interleave garbage."""
        if fcntl is None:
            return
        try:
            fcntl.flock(self._events.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self._events.close()
            raise MemoryInUse(f"the memory in {self.folder} is already open (another run or tab uses it)") from None

    def _recover_tails(self) -> None:
        size = self.events_path.stat().st_size
        keep = intact_length(self.events_path)
        if keep < size:
            log.warning("memory: cut a torn tail of %d bytes from %s", size - keep, self.events_path)
            _truncate_path(self.events_path, keep)
        size = self.keys_path.stat().st_size
        keep = size - size % self.row_bytes
        if keep < size:
            log.warning("memory: cut a partial key row (%d bytes) from %s", size - keep, self.keys_path)
            _truncate_path(self.keys_path, keep)

    # --- writing -------------------------------------------------------------------------

    def append(self, events: list[dict[str, Any]], keys: np.ndarray | None = None) -> None:
        """One logical operation: key rows (if any), then its event lines; fsync after each."""
        if keys is not None and len(keys):
            write_synced(self._keys, np.ascontiguousarray(keys, dtype=np.float32).tobytes())
            self.keys_rows += len(keys)
        data = encode_lines(events)
        write_synced(self._events, data)
        self.events_bytes += len(data)

    def cut_orphan_keys(self, referenced_rows: int) -> None:
        """Drop key rows no event references (a crash between the two writes of one add)."""
        if referenced_rows > self.keys_rows:
            raise CorruptMemory(f"{self.keys_path} has {self.keys_rows} rows but the log references {referenced_rows}")
        if referenced_rows < self.keys_rows:
            log.warning(
                "memory: cut %d key rows that no event references from %s",
                self.keys_rows - referenced_rows,
                self.keys_path,
            )
            self.truncate_to(self.events_bytes, referenced_rows * self.row_bytes)

    def check_cut(self, events_bytes: int, keys_bytes: int) -> None:
        """Raise CorruptMemory unless the lengths are a valid cut of both files."""
        if events_bytes > self.events_bytes or keys_bytes > self.keys_rows * self.row_bytes:
            raise CorruptMemory(
                f"memory marker ({events_bytes}, {keys_bytes} bytes) lies beyond the files in "
                f"{self.folder} ({self.events_bytes}, {self.keys_rows * self.row_bytes} bytes)"
            )
        if keys_bytes % self.row_bytes:
            raise CorruptMemory(f"memory marker cuts a key row in half ({keys_bytes} bytes)")
        if events_bytes and self._byte_before(events_bytes) != b"\n":
            raise CorruptMemory(f"memory marker cuts an event line in half (byte {events_bytes})")

    def truncate_to(self, events_bytes: int, keys_bytes: int) -> None:
        """Cut both files back to the given lengths (a checkpoint's marker)."""
        self.check_cut(events_bytes, keys_bytes)
        for f, n in ((self._events, events_bytes), (self._keys, keys_bytes)):
            truncate_synced(f, n)
        self.events_bytes = events_bytes
        self.keys_rows = keys_bytes // self.row_bytes

    def _byte_before(self, offset: int) -> bytes:
        with open(self.events_path, "rb") as f:
            f.seek(offset - 1)
            return f.read(1)

    def close(self) -> None:
        for f in (self._events, self._keys):
            if f is not None and not f.closed:
                f.close()


def person_events_after(events: EventLog, marker: dict) -> list[tuple[dict, np.ndarray | None]]:
    """People's add/update/delete events after the marker, with the key rows of their adds
    (read now: truncation is about to cut them)."""
    if marker.get("events_bytes") is None or marker.get("keys_bytes") is None:
        raise ValueError("this memory marker comes from an in-memory store; nothing to roll back")
    events.check_cut(int(marker["events_bytes"]), int(marker["keys_bytes"]))
    out: list[tuple[dict, np.ndarray | None]] = []
    for ev, _ in events.iter_events(start=int(marker["events_bytes"])):
        kind = ev.get("kind")
        if kind == "add" and is_person(ev["tip"]["author"]):
            out.append((ev, events.read_keys(int(ev["first_entry"]), len(ev["entries"]))))
        elif kind in ("update", "delete") and is_person(ev["author"]):
            out.append((ev, None))
    return out


def _truncate_path(path: Path, length: int) -> None:
    with open(path, "rb+") as f:
        truncate_synced(f, length)
