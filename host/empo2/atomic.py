"""The one crash-safe write kit: a `kill -9` (or a power cut) at any instant leaves every file of
a run folder, its memory store included, whole or absent.

Every writer of the run folder goes through these helpers (run_folder/folder.py,
training/checkpoint.py, memory/persistence.py, memory/store.py, export/onnx.py); they sit on the
package's ground floor, below every writer, and import nothing of the package.

The order of every write, which tests/test_write_order.py checks call by call:

    whole file   write a temporary sibling → fsync it → os.replace over the target → fsync the
                 folder (the rename itself becomes durable); a file that only says what a
                 process does right now (progress.json) skips both fsyncs: whole or absent
                 still, but after a power cut possibly an older one, which nobody reads then
    folder       fsync every file and folder inside → fsync the folder → os.replace into place
                 → fsync the parent (a checkpoint)
    append       write whole lines → flush → fsync the file → fsync the folder when the append
                 created it
    truncate     cut → fsync the file

A reader skips a torn last line (`iter_jsonl`), and `repair_jsonl` cuts it off before the next
append so it never glues onto a good line. Append-only logs that must not skip anything (the
memory's event log) cut their tail with `intact_length` on open instead.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, Any


def fsync_dir(folder: Path) -> None:
    """Makes the entries of `folder` durable (a rename or a creation in it), where the OS allows
    it: Windows cannot open a folder, and a few file systems refuse to fsync one."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # pragma: no cover - Windows
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover - e.g. some network file systems
        pass
    finally:
        os.close(fd)


def write_synced(f: IO[bytes], data: bytes) -> None:
    """Appends `data` to an open file and returns once it is on disk."""
    f.write(data)
    f.flush()
    os.fsync(f.fileno())


def truncate_synced(f: IO[bytes], length: int) -> None:
    """Cuts an open file to `length` bytes, durably, and leaves it positioned at the end."""
    f.flush()
    f.truncate(length)
    f.seek(0, os.SEEK_END)
    os.fsync(f.fileno())


# -- whole files and folders --------------------------------------------------------------------


def _plain_file_mode() -> int:
    """The mode open() gives a new file here (0o666 less the umask). mkstemp makes its file
    0o600, which would leave every atomically written file of a run folder private to its writer
    (another account reading a shared run folder could not). The umask can only be read by
    setting it, so this runs once, at import, before any thread of the host starts."""
    umask = os.umask(0o022)
    os.umask(umask)
    return 0o666 & ~umask


_FILE_MODE = _plain_file_mode()


def atomic_write_bytes(path: Path, data: bytes, durable: bool = True) -> None:
    """Replaces `path` with `data` in one step; `durable=False` leaves out the fsyncs (see above)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, _FILE_MODE)
        with os.fdopen(fd, "wb") as f:
            if durable:
                write_synced(f, data)
            else:
                f.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    if durable:
        fsync_dir(path.parent)


def atomic_write_text(path: Path, text: str, durable: bool = True) -> None:
    atomic_write_bytes(path, text.encode("utf-8"), durable)


def atomic_write_json(path: Path, value: Any, durable: bool = True) -> None:
    # ensure_ascii=False: tip texts and task names stay readable in the files people open.
    atomic_write_text(path, json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n", durable)


def fsync_tree(folder: Path) -> None:
    """fsyncs every file and folder under `folder`, deepest first, then `folder` itself."""
    for root, _, files in os.walk(folder, topdown=False):
        for name in files:
            with open(Path(root) / name, "rb") as f:
                os.fsync(f.fileno())
        fsync_dir(Path(root))


def commit_folder(tmp: Path, final: Path) -> None:
    """Moves a filled temporary folder into place as one step: after a kill the folder is
    either complete under its final name or still temporary. `final` must not exist."""
    fsync_tree(tmp)
    os.replace(tmp, final)
    fsync_dir(final.parent)


def move_folder(path: Path, target: Path) -> None:
    """Moves a whole folder in one step (a branch to the trash), durable in both parents."""
    os.replace(path, target)
    fsync_dir(target.parent)
    fsync_dir(path.parent)


# -- JSON lines ---------------------------------------------------------------------------------


def dumps_line(record: dict) -> str:
    """One compact ASCII JSON line. allow_nan=False: a NaN must fail loudly here, not produce a
    line that a strict JSON reader (the extension) rejects later; ensure_ascii keeps every line
    free of raw newlines and odd encodings."""
    return json.dumps(record, separators=(",", ":"), allow_nan=False, ensure_ascii=True) + "\n"


def encode_lines(records: Iterable[dict]) -> bytes:
    return "".join(dumps_line(r) for r in records).encode("ascii")


def append_jsonl(path: Path, records: Iterable[dict]) -> None:
    data = encode_lines(records)
    if not data:
        return
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    created = not path.exists()
    with open(path, "ab") as f:
        write_synced(f, data)
    if created:
        fsync_dir(path.parent)


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


def read_appended(path: Path, offset: int) -> tuple[list[dict], int]:
    """The whole lines written to a JSON-lines file after byte `offset` (a corrupt one skipped),
    and the offset after them: a torn last line waits for the next read. A file now shorter
    than `offset` (cut back, or gone) is read on from its end."""
    try:
        with open(path, "rb") as f:
            size = f.seek(0, os.SEEK_END)
            if size < offset:
                return [], size
            f.seek(offset)
            data = f.read(size - offset)
    except FileNotFoundError:
        return [], 0
    whole = data[: data.rfind(b"\n") + 1]
    records = []
    for raw in whole.splitlines():
        try:
            record = json.loads(raw)
        except ValueError:
            continue
        if isinstance(record, dict):
            records.append(record)
    return records, offset + len(whole)


def intact_length(path: Path) -> int:
    """Length of `path` without a torn last line.

    A last line without its newline is torn; so is a last complete line that does not parse
    (garbage can only end a file whose last write was cut). Damage further up is no crash
    signature: readers report or skip it.
    """
    with open(path, "rb") as f:
        end = _last_newline_end(f, f.seek(0, os.SEEK_END))
        if end == 0:
            return 0
        start = _last_newline_end(f, end - 1)
        f.seek(start)
        try:
            json.loads(f.read(end - start))
        except ValueError:
            return start
        return end


def _last_newline_end(f: Any, limit: int) -> int:
    """Offset just after the last b'\\n' in bytes [0, limit) of the open file (0 if none)."""
    pos = limit
    while pos > 0:
        step = min(1 << 16, pos)
        f.seek(pos - step)
        chunk = f.read(step)
        i = chunk.rfind(b"\n")
        if i >= 0:
            return pos - step + i + 1
        pos -= step
    return 0


def repair_jsonl(path: Path) -> None:
    """Cuts a torn last line off, so the next append starts on a line of its own."""
    if not path.exists():
        return
    keep = intact_length(path)
    if keep != path.stat().st_size:
        with open(path, "rb+") as f:
            truncate_synced(f, keep)


def rewrite_jsonl(path: Path, keep: Callable[[dict], bool]) -> None:
    """Atomically keeps only the records for which `keep` is true (used on resume)."""
    if not path.exists():
        return
    kept = [r for r in iter_jsonl(path) if keep(r)]
    atomic_write_bytes(path, encode_lines(kept))
