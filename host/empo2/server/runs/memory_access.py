"""One writer per tip store: the trainer's while a run trains, the host's own otherwise.

While a run trains, every memory request goes to the trainer's own `MemoryStore` instance
(`trainer.memory`): an edit lands in the very store the next retrieval reads, under the store's
lock, so the very next retrieval sees it. Before the trainer has opened its store (the run is
starting) requests wait for it. When no run trains a folder, the host opens that folder's store
itself, once, and keeps it; before a run starts or resumes on the folder the host closes its copy
(under the folder's lock, so no edit is half-way) and the trainer opens its own; when the run
ends the host adopts the trainer's instance. So there are never two writers on one store.

A run that another process trains (a terminal's `train`, another window's host) keeps its store:
the host reads it from a snapshot (`MemoryStore.read_snapshot`), kept per folder and brought up
to date before each read and on each look of the run's follower (followed_runs.py), which
publishes what the other process changed as `memory/changed`.

Who changed a tip: the store calls its listener in the thread that made the change; a client's
change runs in a handler thread that first records the client in a thread-local, so the
listener can tell a person's edit (and which connection made it) from the policy's own tips.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from ...memory.layout import EVENTS_FILE
from ...memory.tips import MemoryInUse, author_kind
from ...run_folder.folder import RunFolder
from ..transport.protocol import ProtocolError
from ..transport.wire import tip_json

if TYPE_CHECKING:  # the store loads numpy: only when a run's memory is first opened
    from ...memory.store import MemoryStore
    from .run_manager import RunManager

log = logging.getLogger("empo2.server.memory")

STARTING_TIMEOUT_S = 300.0  # a first run may build the built-in policy before it opens memory


class MemoryAccess:
    """Built by the RunManager it asks which run is live (run_manager.py): the manager decides
    when a store passes between the host and a trainer, and calls `hand_over`, `attach_trainer`
    and `take_back` when it does."""

    def __init__(self, runs: RunManager, hub, blocking, embedder):
        self.runs = runs
        self.hub = hub
        self.blocking = blocking
        self.embedder = embedder
        self._stores: dict[Path, MemoryStore] = {}
        self._snapshots: dict[Path, MemoryStore] = {}  # of stores another process holds
        self._run_ids: dict[Path, str] = {}
        self._locks: dict[Path, asyncio.Lock] = {}
        self._local = threading.local()

    def _lock(self, path: Path) -> asyncio.Lock:
        return self._locks.setdefault(path, asyncio.Lock())

    async def use(self, run_id: str, fn, *, author: dict | None = None, create: bool = False):
        """fn(store) in a worker thread on the run's one store.

        fn gets None when the run has no memory yet and `create` is false: reading a run must
        not create files in it.
        """
        folder = self.runs.folder(run_id)
        live = self.runs.live
        if live is not None and live.folder.path == folder.path:
            if not live.memory_ready.is_set():
                try:
                    await asyncio.wait_for(live.memory_ready.wait(), STARTING_TIMEOUT_S)
                except TimeoutError:
                    raise ProtocolError(
                        "RunBusy", f"run '{run_id}' is still starting; try again.", {"runId": run_id}
                    ) from None
            store = live.trainer_memory()
            if store is not None and self.runs.live is live:
                return await self.blocking(self._call, fn, store, author)
        async with self._lock(folder.path):
            store = self._stores.get(folder.path)
            if store is None:
                if not create and not _has_memory(folder):
                    return await self.blocking(fn, None)
                try:
                    store = await self.blocking(self._open, folder)
                except MemoryInUse:
                    return await self._elsewhere(run_id, folder, fn, writes=create or author is not None)
                self._snapshots.pop(folder.path, None)  # that process let go: this store is the one
                self._stores[folder.path] = store
                self._run_ids[folder.path] = run_id
            return await self.blocking(self._call, fn, store, author)

    async def _elsewhere(self, run_id: str, folder: RunFolder, fn, *, writes: bool):
        """A run that another process trains keeps its store: reads get the folder's snapshot,
        brought up to date first (that process goes on writing); changes are refused, in one
        sentence, rather than lost. The caller holds the folder's lock."""
        if writes:
            raise ProtocolError(
                "RunBusy",
                f"run '{run_id}' is trained by another process (another VS Code "
                "window or a terminal); change its tips there, or here once it stops.",
                {"runId": run_id},
            )
        snapshot = self._snapshots.get(folder.path)
        if snapshot is None:
            from ...memory.store import MemoryStore

            snapshot = await self.blocking(
                lambda: MemoryStore.read_snapshot(folder.memory_path, self.embedder(), **_capacity(folder))
            )
            self._snapshots[folder.path] = snapshot
        else:
            self._publish(run_id, await self.blocking(snapshot.catch_up))
        return await self.blocking(fn, snapshot)

    async def follow(self, run_id: str, folder: RunFolder) -> None:
        """The follower's look at a run another process trains: the tips it changed since, as
        `memory/changed`. Only a snapshot a client has read is followed (none: nobody looks)."""
        async with self._lock(folder.path):
            snapshot = self._snapshots.get(folder.path)
            if snapshot is not None:
                self._publish(run_id, await self.blocking(snapshot.catch_up))

    async def unfollow(self, folder: RunFolder) -> None:
        """That process let go of the run: its next read opens the store itself."""
        async with self._lock(folder.path):
            self._snapshots.pop(folder.path, None)

    def _call(self, fn, store, author):
        self._local.author = author
        try:
            return fn(store)
        finally:
            self._local.author = None

    def _open(self, folder: RunFolder) -> MemoryStore:
        from ...memory.store import MemoryStore

        store = MemoryStore.open(folder.memory_path, self.embedder(), **_capacity(folder))
        self._listen(store, self.runs.run_id_of(folder))
        return store

    # -- hand-over between the host and a trainer ---------------------------------------------------

    async def hand_over(self, folder: RunFolder) -> None:
        """Closes the host's copy of the folder's store before a trainer opens its own."""
        async with self._lock(folder.path):
            store = self._stores.pop(folder.path, None)
            if store is not None:
                await self.blocking(_close, store)

    def attach_trainer(self, live) -> None:
        """Trainer thread, right after the trainer opened its store: listen to its changes."""
        store = live.trainer_memory()
        if store is not None:
            self._listen(store, live.run_id)

    def take_back(self, live) -> None:
        """On the loop when a run ended: the trainer's store becomes the host's copy."""
        store = live.trainer_memory()
        if store is not None:
            self._stores[live.folder.path] = store

    async def close(self) -> None:
        for path, store in list(self._stores.items()):
            async with self._lock(path):
                await self.blocking(_close, store)
        self._stores.clear()

    # -- change notifications ------------------------------------------------------------------------

    def _listen(self, store: MemoryStore, run_id: str) -> None:
        """Every change of the store → `memory/changed` (the store calls this under its lock,
        in the changing thread; publishing only posts to the loop, so it never blocks)."""

        def changed(event: dict) -> None:
            self.hub.publish_threadsafe("memory/changed", {"runId": run_id, "changes": [self._change(event)]})

        store.on_change = changed

    def _publish(self, run_id: str, events: list[dict]) -> None:
        """On the loop: a snapshot's catch-up, as one `memory/changed` (none when nothing changed)."""
        if events:
            self.hub.publish("memory/changed", {"runId": run_id, "changes": [self._change(e) for e in events]})

    def _change(self, event: dict) -> dict:
        """A store's change event as a MemoryChange."""
        return {
            "change": CHANGES.get(event["kind"], "updated"),
            "tip": tip_json(event["tip"]),
            "by": self._author_of(event.get("author", "")),
        }

    def _author_of(self, name: str) -> dict:
        local = getattr(self._local, "author", None)
        if local is not None and local["name"] == name:
            return local  # a client's edit: name and connection
        return {"kind": author_kind(name), "name": name}


CHANGES = {"add": "added", "update": "updated", "delete": "deleted", "evict": "evicted"}


def _has_memory(folder: RunFolder) -> bool:
    return (folder.memory_path / EVENTS_FILE).is_file()


def _capacity(folder: RunFolder) -> dict:
    """The store's capacity keyword from the run's config; none (the store's default) if unset."""
    try:
        value = folder.config().get("memory", {}).get("capacity")
    except (OSError, ValueError, AttributeError):
        return {}
    return {"capacity": value} if isinstance(value, int) and value > 0 else {}


def _close(store) -> None:
    close = getattr(store, "close", None)
    if close is not None:
        close()


__all__ = ["MemoryAccess"]
