"""Branch runs: a what-if copy of a run at one of its checkpoints, the parent never touched.

A branch is an ordinary run folder (it opens, resumes and trains like any other) with one more
file, `parent.json`, saying where it came from:

    {"format": 1, "run": parent run id, "path": parent folder, "checkpoint": iteration,
     "memory_version": bytes of the parent's memory log the branch copied,
     "memory_marker": the checkpoint's memory marker,
     "tip_edits": [{tip_id, kind, variation_key, author, at, before, after}, ...],
     "created": unix time, "adopted": null or unix time}

`tip_edits` are the edits people made to the parent's memory after the checkpoint (the ones a
resume re-applies): the edits the branch was made with.

How the parent stays untouched, even under `kill -9` of the branch at any instant:
1. The parent is only ever read: its checkpoint folder and memory files are copied byte for byte
   (never opened by a writer: `MemoryStore.open` would lock and repair the parent's log).
2. The branch is assembled in `<root>/.empo2-branching/<name>/` (not a run: no `config.json`
   directly under the root) and renamed into place when complete, `config.json` written last.
   A kill leaves a stale staging folder that the next branch of that name clears.
3. While copying, a shared lock on the parent's `.writer.lock` keeps a trainer from starting on
   it; a parent that is being trained is refused (`RunLockedError`).
4. The memory log is copied before its key file, so the copy never references a key row it
   lacks (extra rows are cut when the branch opens its memory).

Adopting a branch marks it as a run of its own (`adopted`); training it (`empo2-host resume`) is
the same as for any run. Deleting one moves it out of the root first, so a kill mid-delete never
leaves a half run under the root.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows: no advisory locks
    fcntl = None

from ..atomic import atomic_write_json, commit_folder, move_folder
from ..memory.layout import EVENTS_FILE, KEYS_FILE
from ..memory.tips import is_person
from ..run_folder.branch_files import PARENT_FILE
from ..run_folder.folder import WRITER_LOCK, RunFolder, RunFolderError, RunLockedError, iteration_name

RERUN_FILE = "rerun.json"  # a branch's rerun: settings, progress, comparison (rerun/runner.py)
STAGING = ".empo2-branching"  # under the root: branches being assembled
TRASH = ".empo2-deleting"  # under the root: branches being deleted
FORMAT = 1


class BranchError(RunFolderError):
    """A branch that cannot be made, adopted or deleted; one sentence."""


def rerun_status(folder: RunFolder) -> str | None:
    """The status its rerun.json gives a branch's rerun (running, stopped, finished), or None."""
    try:
        status = json.loads((folder.path / RERUN_FILE).read_text()).get("status")
    except (OSError, ValueError, AttributeError):
        return None
    return status if isinstance(status, str) else None


def rerun_iterations(folder: RunFolder) -> int | None:
    """The update iterations a branch's rerun was asked for (its rerun.json), or None."""
    try:
        value = json.loads((folder.path / RERUN_FILE).read_text())["settings"]["iterations"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def parent_record(folder: RunFolder) -> dict | None:
    """The branch's parent.json, or None for a run that is not a branch."""
    try:
        return json.loads((folder.path / PARENT_FILE).read_text())
    except FileNotFoundError:
        return None
    except ValueError:
        raise BranchError(f"{folder.path / PARENT_FILE} is not valid JSON") from None


@contextlib.contextmanager
def not_training(folder: RunFolder) -> Iterator[None]:
    """Holds a shared lock on the run's writer lock, or raises RunLockedError when a process is
    training it. Opens the lock file read-only: the parent is not written, not even its lock."""
    if fcntl is None or not (folder.path / WRITER_LOCK).exists():
        yield  # never trained by a locking trainer: nothing can be training it
        return
    if folder.kept_paused_here:
        yield  # this process trains it and keeps it paused (RunFolder.kept_paused)
        return
    with open(folder.path / WRITER_LOCK) as handle:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            holder = handle.read().strip() or "another process"
            raise RunLockedError(f"run {folder.run_id} is being trained by {holder}; stop it first") from None
        yield


def create_branch(
    parent: RunFolder,
    checkpoint: int | None = None,
    name: str | None = None,
    root: Path | None = None,
    records: dict[str, dict] | None = None,
) -> RunFolder:
    """A new branch of `parent` at `checkpoint` (default: its latest), next to it in its root
    (or in `root`: a dry run's scratch folder). `records` are JSON files the branch is born with
    (a rerun's rerun.json), so no kill can leave it without them."""
    root = Path(root) if root is not None else parent.path.parent
    with not_training(parent):
        checkpoint, marker = checkpoint_marker(parent, checkpoint)
        name = name or _free_name(root, f"{parent.run_id}-branch")
        if not name or "/" in name or name.startswith("."):
            raise BranchError(f"{name!r} cannot name a run folder")
        if (root / name).exists():
            raise BranchError(f"a run named {name} already exists in {root}")
        staging = root / STAGING / name
        shutil.rmtree(staging, ignore_errors=True)  # a kill's leftover of an earlier try
        staging.mkdir(parents=True)
        source = parent.checkpoints_path / iteration_name(checkpoint)
        shutil.copytree(source, staging / "checkpoints" / iteration_name(checkpoint))
        copied = _copy_memory(parent.memory_path, staging / "memory")
        atomic_write_json(
            staging / PARENT_FILE,
            {
                "format": FORMAT,
                "run": parent.run_id,
                "path": str(parent.path.resolve()),
                "checkpoint": checkpoint,
                "memory_version": copied,
                "memory_marker": marker,
                "tip_edits": person_edits_after(staging / "memory" / EVENTS_FILE, marker),
                "created": time.time(),
                "adopted": None,
            },
        )
        for filename, value in (records or {}).items():
            atomic_write_json(staging / filename, value)
        RunFolder(staging).set_state("created", iteration=checkpoint)
        config = {**parent.config(), "name": name, "root": str(root)}
        atomic_write_json(staging / "config.json", config)  # last: now it is a run folder
    commit_folder(staging, root / name)
    return RunFolder(root / name)


def checkpoint_marker(parent: RunFolder, checkpoint: int | None) -> tuple[int, dict | None]:
    """The checkpoint's iteration (default: the latest) and its memory marker; BranchError for
    a run without checkpoints or without that one."""
    iterations = parent.checkpoint_iterations()
    if not iterations:
        raise BranchError(f"run {parent.run_id} has no checkpoint to branch from")
    if checkpoint is None:
        checkpoint = iterations[-1]
    if checkpoint not in iterations:
        raise BranchError(
            f"run {parent.run_id} has no checkpoint at iteration {checkpoint} "
            f"(it has {', '.join(map(str, iterations))})"
        )
    state = json.loads((parent.checkpoints_path / iteration_name(checkpoint) / "trainer.json").read_text())
    return checkpoint, state.get("memory_marker")


def _copy_memory(source: Path, target: Path) -> int:
    """Byte copies of the memory's log, then its keys; returns the log bytes copied."""
    target.mkdir(parents=True)
    events = source / EVENTS_FILE
    if not events.exists():
        return 0
    shutil.copyfile(events, target / EVENTS_FILE)
    if (source / KEYS_FILE).exists():
        shutil.copyfile(source / KEYS_FILE, target / KEYS_FILE)
    return (target / EVENTS_FILE).stat().st_size


def person_edits_after(events_path: Path, marker: dict | None) -> list[dict]:
    """People's adds, updates and deletes after the marker, each with the tip text before and
    after it (read from the log alone: no store is opened)."""
    cut = int((marker or {}).get("events_bytes") or 0)
    return [edit for end, edit in _tip_events(events_path) if end > cut and is_person(edit["author"])]


def person_edits_in(events_path: Path) -> list[dict]:
    """People's adds, updates and deletes that the memory of this log holds, whenever they were
    made, oldest first. A branch's log, once its trainer has opened it, is the memory its rerun
    uses: the checkpoint's (people's earlier edits included) with their later edits re-applied.
    An edit whose tip the policy rewrote afterwards is no longer in that memory: left out."""
    kept: dict[str, list[tuple[int, dict]]] = {}
    for end, edit in _tip_events(events_path):
        if is_person(edit["author"]):
            kept.setdefault(edit["tip_id"], []).append((end, edit))
        else:
            kept.pop(edit["tip_id"], None)
    return [edit for _, edit in sorted((e for edits in kept.values() for e in edits), key=lambda e: e[0])]


def _tip_events(events_path: Path) -> Iterator[tuple[int, dict]]:
    """Each add, update and delete of a memory log with the tip text before and after it, and
    the byte offset where its line ends (read from the log alone: no store is opened)."""
    if not events_path.exists():
        return
    texts: dict[str, str] = {}
    keys: dict[str, str] = {}
    offset = 0
    with open(events_path, "rb") as f:
        for raw in f:
            offset += len(raw)
            if not raw.endswith(b"\n"):
                break  # a torn last line: not an event yet
            try:
                ev = json.loads(raw)
            except ValueError:
                break
            kind = ev.get("kind")
            if kind == "add":
                tip = ev["tip"]
                tip_id, author, before, after = tip["id"], tip["author"], None, tip["text"]
                keys[tip_id] = tip["variation_key"]
            elif kind in ("update", "delete"):
                tip_id, author = ev["tip_id"], ev["author"]
                before = texts.get(tip_id)
                after = ev["text"] if kind == "update" else None
            else:
                continue
            if after is not None:
                texts[tip_id] = after
            yield (
                offset,
                {
                    "tip_id": tip_id,
                    "kind": kind,
                    "variation_key": keys.get(tip_id),
                    "author": author,
                    "at": ev.get("at"),
                    "before": before,
                    "after": after,
                },
            )


def adopt_branch(branch: RunFolder) -> dict:
    """Marks a branch as a run of its own; returns its parent record."""
    record = parent_record(branch)
    if record is None:
        raise BranchError(f"run {branch.run_id} is not a branch")
    if not record.get("adopted"):
        record["adopted"] = time.time()
        atomic_write_json(branch.path / PARENT_FILE, record)
    return record


def delete_branch(branch: RunFolder) -> None:
    """Removes a branch folder (never a run that is not a branch, nor one being trained)."""
    if parent_record(branch) is None:
        raise BranchError(f"run {branch.run_id} is not a branch; only branches are deleted here")
    with not_training(branch):
        trash = branch.path.parent / TRASH / f"{branch.run_id}-{time.time_ns()}"
        trash.parent.mkdir(exist_ok=True)
        move_folder(branch.path, trash)  # atomic: the run is gone from the root in one step
    shutil.rmtree(trash, ignore_errors=True)


def branches_of(parent: RunFolder) -> list[RunFolder]:
    """The branches made from `parent` in its root, oldest first."""
    root, found = parent.path.parent, []
    target = str(parent.path.resolve())
    for child in sorted(root.iterdir()):
        if (child / PARENT_FILE).is_file() and (child / "config.json").is_file():
            try:
                record = parent_record(RunFolder(child))
            except BranchError:
                continue
            if record and record.get("path") == target:
                found.append((record.get("created", 0), RunFolder(child)))
    return [f for _, f in sorted(found, key=lambda x: x[0])]


def _free_name(root: Path, stem: str) -> str:
    n = 1
    while (root / f"{stem}-{n}").exists() or (root / STAGING / f"{stem}-{n}").exists():
        n += 1
    return f"{stem}-{n}"
