"""Training log lines as `log/message` notifications.

Only the training side is forwarded (loggers under `empo2`, not `empo2.server`): the server's own
lines (a refused connection, a client that fell behind) go to stderr only, since forwarding them
would let one client's trouble generate traffic for every client, and a resync warning could feed
itself.
"""

from __future__ import annotations

import logging

LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
MAX_MESSAGE = 4000


class LogForwarder(logging.Handler):
    def __init__(self, hub, current_run):
        super().__init__(logging.INFO)
        self.hub = hub
        self.current_run = current_run  # () -> run id of the live run, or None

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.name.startswith("empo2.server")

    def emit(self, record: logging.LogRecord) -> None:
        try:
            message = record.getMessage()
            if record.exc_info:
                message += f" ({record.exc_info[1]!r})"
            entry = {"time": record.created,
                     "level": record.levelname if record.levelname in LEVELS else "INFO",
                     "logger": record.name, "message": message[:MAX_MESSAGE]}
            run_id = self.current_run()
            if run_id is not None:
                entry["runId"] = run_id
            self.hub.publish_threadsafe("log/message", {"entries": [entry]})
        except Exception:  # noqa: BLE001 - logging must never raise into the caller
            self.handleError(record)


__all__ = ["LogForwarder"]
