"""Where a person's edits are in a memory log, read from the log alone (no store is opened)."""

from __future__ import annotations

import json
from pathlib import Path

from .tips import is_person


def first_person_edit(events_path: Path, start: int = 0) -> int | None:
    """The byte offset where the oldest event of a person (an add, update or delete under a
    person's name) that begins at or after `start` begins; None when there is none. A torn
    last line (no newline yet) is not an event yet."""
    if not events_path.exists():
        return None
    offset = 0
    with open(events_path, "rb") as f:
        for raw in f:
            begins, offset = offset, offset + len(raw)
            if begins < start:
                continue
            if not raw.endswith(b"\n"):
                return None
            try:
                event = json.loads(raw)
            except ValueError:
                return None
            kind = event.get("kind")
            author = (event.get("tip") or {}).get("author") if kind == "add" else event.get("author")
            if kind in ("add", "update", "delete") and isinstance(author, str) and is_person(author):
                return begins
    return None
