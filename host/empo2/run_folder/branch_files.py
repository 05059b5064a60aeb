"""What a branch records of its parent, as far as the parent's own folder needs to know it.

A rerun makes a branch beside its parent (rerun/branch.py writes it); the parent's trainer reads
only how much of its memory log the newest branch took, to tell which of a person's edits a
rerun has covered already (training/checkpoint.py keeps a checkpoint before the others).
"""

from __future__ import annotations

import json
from pathlib import Path

PARENT_FILE = "parent.json"  # a branch's record of where it came from (docs/run-folder.md)


def log_bytes_branched(parent: Path) -> int:
    """The most bytes of `parent`'s memory log any branch beside it copied (0: no branch).

    Edits before that point are in a branch's memory, so a rerun has seen them; a branch whose
    record cannot be read counts as none (it cannot have been made whole).
    """
    target, most = str(parent.resolve()), 0
    for record_path in parent.parent.glob(f"*/{PARENT_FILE}"):
        try:
            record = json.loads(record_path.read_text())
            if record.get("path") == target:
                most = max(most, int(record.get("memory_version") or 0))
        except (OSError, ValueError, TypeError, AttributeError):
            continue
    return most
