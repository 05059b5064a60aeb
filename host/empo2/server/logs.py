"""The host's log lines for clients: `log/message` notifications and the `log.tail` method.

One handler on the `empo2` logger numbers every line (INFO and up) and keeps the newest
`TAIL_LINES` of them. Training lines (loggers under `empo2`, not `empo2.server`) are also
forwarded live as `log/message`. The server's own lines (a refused connection, a client that fell
behind) are only kept for `log.tail`: forwarding them would let one client's trouble generate
traffic for every client, and a resync warning could feed itself. A client of a remote host asks
`log.tail {after}` after each (re)connect, which shows it the server's lines too and fills in
what it missed while the link was down.
"""

from __future__ import annotations

import logging
import secrets
import threading
from collections import deque

LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
MAX_MESSAGE = 4000
TAIL_LINES = 5000
TAIL_LIMIT = 500  # lines per log.tail answer unless the client asks for fewer


class LogForwarder(logging.Handler):
    def __init__(self, hub, current_run):
        super().__init__(logging.INFO)
        self.hub = hub
        self.current_run = current_run  # () -> run id of the live run, or None
        self.instance = secrets.token_hex(8)  # a new host process numbers its lines from 1 again
        self._lines: deque[dict] = deque(maxlen=TAIL_LINES)
        self._count = 0
        self._lock = threading.Lock()  # records arrive from the loop and the training thread

    def emit(self, record: logging.LogRecord) -> None:
        try:
            message = record.getMessage()
            if record.exc_info:
                message += f" ({record.exc_info[1]!r})"
            entry = {
                "time": record.created,
                "level": record.levelname if record.levelname in LEVELS else "INFO",
                "logger": record.name,
                "message": message[:MAX_MESSAGE],
            }
            run_id = self.current_run()
            if run_id is not None:
                entry["runId"] = run_id
            with self._lock:
                self._count += 1
                entry["n"] = self._count
                self._lines.append(entry)
            if not record.name.startswith("empo2.server"):
                self.hub.publish_threadsafe("log/message", {"entries": [dict(entry)]})
        except Exception:  # noqa: BLE001 - logging must never raise into the caller
            self.handleError(record)

    def tail(self, after: int = 0, limit: int = TAIL_LIMIT) -> dict:
        """The kept lines numbered after `after`, oldest first (the `log.tail` result)."""
        with self._lock:
            newest = self._count
            kept = list(self._lines)
        oldest = kept[0]["n"] if kept else newest + 1
        if after > newest:  # numbers from another host process: this one is new to the client
            after = 0
        entries = [dict(e) for e in kept if e["n"] > after][:limit]
        return {"instance": self.instance, "entries": entries, "dropped": max(0, oldest - after - 1), "newest": newest}


__all__ = ["LogForwarder", "TAIL_LIMIT"]
