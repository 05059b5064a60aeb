"""What a run folder says of itself to clients: its state (run.json corrected by the writer lock),
its checkpoints, the branch it is of. Read-only; the run manager adds what the host knows live."""

from __future__ import annotations

import json

from ...rerun.branch import PARENT_FILE, rerun_status
from ...run_folder.folder import RunFolder
from ..transport.wire import to_wire

STATES = (
    "created",
    "starting",
    "running",
    "pausing",
    "paused",
    "stopping",
    "stopped",
    "interrupted",
    "finished",
    "failed",
)
ACTIVE = ("starting", "running", "pausing", "paused", "stopping")
INTERRUPTED = "interrupted"  # its writer went away mid-run (host shut down or killed): resumable


def stored_state(folder: RunFolder, stored: dict) -> str:
    """A folder's state as run.json has it, corrected by its writer lock: a run that says it is
    active while no process holds the lock was interrupted (its host was killed, or exited
    without the chance to say so) and is resumable."""
    state = stored.get("state", "created")
    if state not in STATES:
        return "failed"
    if state in ACTIVE and folder.writer_alive() is False:
        return INTERRUPTED
    if state == "stopped" and rerun_status(folder) == "finished":
        return "finished"  # a branch whose rerun finished, recorded "stopped" by earlier hosts
    return state


def branch_origin(folder: RunFolder) -> dict | None:
    """A branch's BranchOrigin from its parent.json; None for other runs (or an unreadable one)."""
    try:
        record = json.loads((folder.path / PARENT_FILE).read_text())
        return {
            "runId": str(record["run"]),
            "checkpoint": int(record["checkpoint"]),
            "adopted": bool(record.get("adopted")),
        }
    except (OSError, ValueError, KeyError, TypeError):
        return None


def configured_iterations(folder: RunFolder) -> int | None:
    try:
        value = folder.config().get("iterations")
    except (OSError, ValueError, AttributeError):
        return None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def checkpoints(folder: RunFolder) -> list[dict]:
    """CheckpointInfo of each readable checkpoint of a folder, oldest first."""
    iterations = folder.checkpoint_iterations()
    found = []
    for it in iterations:
        path = folder.checkpoints_path / f"iter-{it:06d}"
        try:
            state = json.loads((path / "trainer.json").read_text())
        except (OSError, ValueError):
            continue
        found.append(
            to_wire(
                "CheckpointInfo",
                state,
                iteration=it,
                path=str(path),
                hasModel=bool(state.get("has_model")),
                latest=it == iterations[-1],
            )
        )
    return found
