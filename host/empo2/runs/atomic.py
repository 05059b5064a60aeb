"""Crash-safe file writes: a `kill -9` at any instant leaves every file whole or absent.

Whole files are written to a temporary sibling, fsynced, then renamed over the target (rename is
atomic on POSIX). Append-only JSON-lines files get whole lines with an fsync; a reader skips a
torn last line, and `repair_jsonl` cuts it off before the next append so it never glues onto a
good line.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Callable, Iterable, Iterator


def fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write_bytes(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: Path, value) -> None:
    atomic_write_text(path, json.dumps(value, indent=2, sort_keys=True) + "\n")


def dumps_line(record: dict) -> str:
    # allow_nan=False: a NaN in a metric must fail loudly here, not produce a line that a
    # strict JSON reader (the extension) rejects later.
    return json.dumps(record, separators=(",", ":"), allow_nan=False) + "\n"


def append_jsonl(path: Path, records: Iterable[dict]) -> None:
    data = "".join(dumps_line(r) for r in records).encode("utf-8")
    if not data:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "ab") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def iter_jsonl(path: Path) -> Iterator[dict]:
    """The whole lines of a JSON-lines file; a torn or corrupt line is skipped."""
    if not path.exists():
        return
    with open(path, "rb") as f:
        for raw in f:
            if not raw.endswith(b"\n"):
                return  # torn last line of a write that a kill interrupted
            try:
                yield json.loads(raw)
            except json.JSONDecodeError:
                continue


def repair_jsonl(path: Path) -> None:
    """Cuts a torn last line off, so the next append starts on a line of its own."""
    if not path.exists():
        return
    with open(path, "rb+") as f:
        data = f.read()
        end = data.rfind(b"\n") + 1
        if end != len(data):
            f.truncate(end)
            f.flush()
            os.fsync(f.fileno())


def rewrite_jsonl(path: Path, keep: Callable[[dict], bool]) -> None:
    """Atomically keeps only the records for which `keep` is true (used on resume)."""
    if not path.exists():
        return
    kept = [r for r in iter_jsonl(path) if keep(r)]
    atomic_write_text(path, "".join(dumps_line(r) for r in kept))
