"""Notifications to every client, in one order, without letting a slow client hold anyone up.

The hub stamps each notification with a host-wide `seq` and puts it in every client's outbox,
on the event loop thread (the trainer thread posts through `publish_threadsafe`), so all
clients see the same order. Publishing never blocks: an outbox is a bounded queue, drained by
that client's own writer task. For a slow client the outbox first merges: consecutive progress
notifications of a run keep only the newest; consecutive list-carrying notifications (metrics
records, trajectory summaries, episodes as they end, memory changes, log entries) of one run (and
one iteration, where they name it) are joined, up to `MERGE_LIMIT` items. When it still
overflows, every queued notification is dropped and one `host/resync` takes their place: the
client re-fetches state. Responses are never dropped (a pending request would hang); the
connection stops reading requests while too many responses wait, which bounds them.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque

log = logging.getLogger("empo2.server.fanout")

MERGE_LIMIT = 64
# method → how a newer notification folds into the one queued just before it.
REPLACE = "replace"
MERGE_FIELDS = {
    "run/progress": REPLACE,
    "update/progress": REPLACE,
    "run/metrics": "records",
    "trajectory/added": "summaries",
    "trajectory/progress": "summaries",  # with the newer one's done/total, one iteration only
    "memory/changed": "changes",
    "log/message": "entries",
}


class Outbox:
    """One client's send queue: responses and notifications in order, notifications bounded."""

    def __init__(self, limit: int = 256, response_limit: int = 256):
        self.limit = limit
        self.response_limit = response_limit
        self._items: deque[dict] = deque()
        self._notifications = 0
        self._responses = 0
        self._wakeup = asyncio.Event()
        self._drained = asyncio.Event()
        self._drained.set()
        self.resyncs = 0
        self.closed = False

    def __len__(self) -> int:
        return len(self._items)

    def put_response(self, message: dict) -> None:
        self._items.append(message)
        self._responses += 1
        if self._responses >= self.response_limit:
            self._drained.clear()
        self._wakeup.set()

    def put_notification(self, message: dict, next_seq) -> None:
        """Queues, merges or, on overflow, replaces the backlog with `host/resync`.

        `next_seq` gives the seq for a resync notice, so that it too takes its place in the
        host-wide order.
        """
        if self.closed:
            return
        if self._merge(message):
            self._wakeup.set()
            return
        if self._notifications >= self.limit:
            dropped = self._drop_notifications() + 1  # the one that did not fit
            self.resyncs += 1
            self._items.append(
                {
                    "jsonrpc": "2.0",
                    "method": "host/resync",
                    "params": {
                        "seq": next_seq(),
                        "reason": "the client fell behind; notifications were dropped",
                        "dropped": dropped,
                    },
                }
            )
            self._notifications += 1
            self._wakeup.set()
            return
        self._items.append(message)
        self._notifications += 1
        self._wakeup.set()

    def _merge(self, message: dict) -> bool:
        if not self._items:
            return False
        last = self._items[-1]
        method = message["method"]
        how = MERGE_FIELDS.get(method)
        if how is None or last.get("method") != method or "id" in last:
            return False
        old, new = last["params"], message["params"]
        if old.get("runId") != new.get("runId") or old.get("iteration") != new.get("iteration"):
            return False
        if how == REPLACE:
            self._items[-1] = message
            return True
        if len(old[how]) + len(new[how]) > MERGE_LIMIT:
            return False
        # A new dict: the queued one may be shared with other clients' outboxes.
        merged = {**new, how: old[how] + new[how]}
        self._items[-1] = {"jsonrpc": "2.0", "method": method, "params": merged}
        return True

    def _drop_notifications(self) -> int:
        kept: deque[dict] = deque()
        dropped = 0
        for m in self._items:
            if "id" in m:
                kept.append(m)
            elif m["method"] == "host/resync":
                dropped += m["params"]["dropped"]  # an earlier notice is folded into the new one
            else:
                dropped += 1
        self._items = kept
        self._notifications = 0
        return dropped

    async def get(self) -> dict | None:
        """The next message to send; None once closed and empty."""
        while not self._items:
            if self.closed:
                return None
            self._wakeup.clear()
            await self._wakeup.wait()
        message = self._items.popleft()
        if "id" in message:
            self._responses -= 1
            if self._responses < self.response_limit // 2:
                self._drained.set()
        else:
            self._notifications -= 1
        return message

    async def wait_drained(self) -> None:
        """Returns once few enough responses wait (the reader's backpressure)."""
        await self._drained.wait()

    def close(self) -> None:
        self.closed = True
        self._drained.set()
        self._wakeup.set()


class Subscriber:
    """What the hub needs of a connection: an outbox and which notifications it wants."""

    outbox: Outbox

    def wants(self, method: str) -> bool:  # pragma: no cover - interface
        return True


class Hub:
    """Stamps notifications with `seq` and hands them to every initialized connection."""

    def __init__(self, loop: asyncio.AbstractEventLoop):
        self.loop = loop
        self.seq = 0
        self.subscribers: set[Subscriber] = set()
        self.published = 0

    def next_seq(self) -> int:
        self.seq += 1
        return self.seq

    def publish(self, method: str, params: dict) -> None:
        """On the loop thread only. O(clients); never waits for a client."""
        message = {"jsonrpc": "2.0", "method": method, "params": {"seq": self.next_seq(), **params}}
        self.published += 1
        for subscriber in list(self.subscribers):
            if subscriber.wants(method):
                subscriber.outbox.put_notification(message, self.next_seq)

    def publish_threadsafe(self, method: str, params: dict) -> None:
        """From any thread (the trainer's, a handler's worker); keeps the callers' order."""
        try:
            self.loop.call_soon_threadsafe(self.publish, method, params)
        except RuntimeError:
            pass  # the loop is closed: the host is exiting and nobody is listening


__all__ = ["Hub", "Outbox", "Subscriber", "MERGE_FIELDS", "MERGE_LIMIT"]
