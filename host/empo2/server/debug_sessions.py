"""The host's debug sessions: who owns which, at most a few, closed with their connection.

A debug session (empo2/debug/) is owned by the connection that started it: another connection
gets DebugSessionNotFound for it, and closing the connection ends its sessions. Each session's
requests run one at a time (a per-session lock) in the handler thread pool, never on the loop.

Alongside training: served, read-only. A session loads its own copy of a checkpoint's weights
from disk and only ever reads the run's memory (retrieval), so the trainer's weights, optimizer,
memory and run folder are never written; the price is a second copy of the model in memory
(a debug session can be put on the CPU with `device: "cpu"`) and shared compute.

Nothing here imports torch: the debug package is imported inside the handlers.
"""

from __future__ import annotations

import asyncio
import itertools
import secrets
from dataclasses import dataclass, field

from .transport.protocol import ProtocolError

MAX_SESSIONS = 4  # each holds a model copy; more than a few is a mistake, not a workflow


@dataclass
class Entry:
    id: str
    owner: int  # connection number
    session: object  # empo2.debug.session.DebugSession
    info: dict
    memory_run: str | None  # whose tips a memory-mode session retrieves
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


class DebugSessions:
    def __init__(self):
        self.entries: dict[str, Entry] = {}
        self._numbers = itertools.count(1)

    def check_room(self) -> None:
        if len(self.entries) >= MAX_SESSIONS:
            raise ProtocolError("DebugBusy", f"the host already holds {MAX_SESSIONS} debug sessions; stop one first.")

    def add(self, owner: int, session, info: dict, memory_run: str | None) -> Entry:
        self.check_room()
        session_id = f"d{next(self._numbers)}-{secrets.token_hex(3)}"
        entry = Entry(session_id, owner, session, info, memory_run)
        self.entries[session_id] = entry
        return entry

    def get(self, session_id: str, owner: int) -> Entry:
        entry = self.entries.get(session_id)
        if entry is None or entry.owner != owner:
            raise ProtocolError("DebugSessionNotFound", f"no debug session '{session_id[:64]}' on this connection.")
        return entry

    def remove(self, session_id: str, owner: int) -> Entry:
        entry = self.get(session_id, owner)
        del self.entries[session_id]
        return entry

    def connection_closed(self, owner: int) -> None:
        """The sessions of a closed connection end; their models are freed with them."""
        for session_id in [k for k, e in self.entries.items() if e.owner == owner]:
            del self.entries[session_id]


__all__ = ["DebugSessions", "MAX_SESSIONS", "Entry"]
