"""The host server: binds the WebSocket, wires the pieces, and shuts down in order.

    settings = Settings(token=os.environ["EMPO2_HOST_TOKEN"], roots=[Path(".empo2/runs")])
    server = HostServer(settings)
    port = await server.start()          # bound; port 0 picks a free one
    await server.serve_until_shutdown()  # a `shutdown` request or a signal ends it

Wiring, by hand: Hub (notifications) ← RunManager (the training run, and the MemoryAccess it
hands tip stores to) → Dispatcher (the method table) → one Connection per client. Blocking work
of handlers (reading run folders, memory operations) runs in a small thread pool, never on the
event loop.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import importlib
import logging
import os
import time
from concurrent.futures import ThreadPoolExecutor

from websockets.asyncio.server import serve

from .. import __version__
from ..config import TrainConfig, presets
from .debug_sessions import MAX_SESSIONS, DebugSessions
from .device import DeviceProbe
from .logs import LogForwarder
from .methods import METHODS
from .runs.followed_runs import FollowedRuns
from .runs.run_manager import RunManager
from .settings import Settings, is_loopback
from .transport.auth import Gate
from .transport.connection import Connection
from .transport.dispatch import Dispatcher
from .transport.fanout import Hub
from .transport.protocol import Validators, load_schema, notification_methods, protocol_version

log = logging.getLogger("empo2.server")


class HostServer:
    def __init__(self, settings: Settings):
        if not is_loopback(settings.host) and not settings.allow_remote:
            raise ValueError(
                f"binding {settings.host} exposes the host beyond this machine; "
                "pass --allow-remote to do it anyway (better: an SSH tunnel)"
            )
        self.settings = settings
        self.shutting_down = False
        self.port: int | None = None
        self._connections = 0
        self._embedder = None

    # -- lifecycle -------------------------------------------------------------------------------

    async def start(self) -> int:
        self.loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        self.hurried = asyncio.Event()
        self.executor = ThreadPoolExecutor(self.settings.handler_threads, thread_name_prefix="empo2-handler")
        self.hub = Hub(self.loop)
        self.device = DeviceProbe(self.loop)  # in the background: the ready line does not wait
        self.validators = Validators(load_schema())
        self.runs = RunManager(self.settings.roots, self.hub, self.loop, self.embedder, self.blocking)
        self.memory = self.runs.memory
        self.followed = FollowedRuns(self.runs, self.hub, self.blocking, self.settings.follow_interval_s)
        self._following = self.loop.create_task(self.followed.run())
        self.debug = DebugSessions()
        self.dispatcher = Dispatcher(METHODS, self.validators, self)
        self.log_forwarder = LogForwarder(self.hub, lambda: self.runs.live.run_id if self.runs.live else None)
        logging.getLogger("empo2").addHandler(self.log_forwarder)
        limits = self.settings.limits
        self.server = await serve(
            self._connection,
            self.settings.host,
            self.settings.port,
            process_request=Gate(self.settings.token),
            max_size=limits.max_frame_bytes,
            compression=None,  # no permessage-deflate: no decompression bombs, no CPU spent on it
            max_queue=16,
            ping_interval=20,
            ping_timeout=20,
            close_timeout=5,
            server_header=None,
        )
        self.port = self.server.sockets[0].getsockname()[1]
        log.info("listening on %s:%d (protocol %s)", self.settings.host, self.port, protocol_version())
        return self.port

    async def serve_until_shutdown(self) -> None:
        await self._stop.wait()
        await self.close()

    def request_shutdown(self, now: bool = False) -> None:
        """A shutdown (signal, stdin's end, `shutdown`); asked again, or with now=True, it stops
        waiting for the live run's iteration boundary."""
        if now or self.shutting_down:
            self.hurry()
        self.shutting_down = True
        self._stop.set()

    def hurry(self) -> None:
        """Stop waiting for the live run's iteration boundary (it resumes from its checkpoint)."""
        self.hurried.set()

    @property
    def abandoned_run(self):
        """The run whose trainer thread was still inside an iteration when the host closed:
        the process must exit without waiting for that thread (main.py does)."""
        return self.runs.abandoned

    async def close(self) -> None:
        """Interrupts the live run (bounded wait), closes every connection (1001), frees threads."""
        self.shutting_down = True
        self._following.cancel()
        await self.runs.shutdown(self.settings.shutdown_grace_s, self.hurried)
        self.server.close()  # closes connections with 1001 (going away)
        await self.server.wait_closed()
        await self.memory.close()
        logging.getLogger("empo2").removeHandler(self.log_forwarder)
        self.executor.shutdown(wait=False, cancel_futures=True)
        self.device.close()
        self._stop.set()

    async def exit_after_reply(self, connection) -> None:
        """Lets a `shutdown` answer reach its client before the connections close."""
        deadline = time.monotonic() + 2.0
        await asyncio.sleep(0)
        while len(connection.outbox) and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        self._stop.set()  # the run was already interrupted and waited for by the handler

    # -- shared services -------------------------------------------------------------------------

    async def blocking(self, fn, *args):
        """Runs blocking work (disk, memory store, embedding) off the event loop."""
        return await self.loop.run_in_executor(self.executor, functools.partial(fn, *args))

    async def load(self, module: str):
        """Imports a module that loads the training stack (torch), in a handler thread.

        Importing torch takes seconds and holds the interpreter lock while its libraries load;
        on the loop it would stall every connection, WebSocket pongs included, long enough for a
        client's keepalive to drop a healthy link (tests/test_server_startup.py keeps the
        handlers to this)."""
        return await self.blocking(importlib.import_module, module)

    def embedder(self):
        """The sentence embedder, made on first use (loading it costs seconds)."""
        if self._embedder is None:
            factory = self.settings.embedder_factory
            if factory is None:
                from ..memory.embedding import SentenceEmbedder

                factory = SentenceEmbedder
            self._embedder = factory()
        return self._embedder

    def capabilities(self) -> dict:
        limits = self.settings.limits
        schema = load_schema()
        return {
            "maxConcurrentRuns": 1,
            "batchRequests": False,
            "maxFrameBytes": limits.max_frame_bytes,
            "requestsPerSecond": limits.requests_per_second,
            "requestBurst": limits.request_burst,
            "inboxLimit": limits.inbox_limit,
            "sendQueueLimit": limits.send_queue_limit,
            "runRoots": [str(r) for r in self.runs.roots],
            "presets": sorted(presets()),
            "methods": [m.name for m in METHODS],
            "notifications": sorted(notification_methods()),
            "trajectoryFilters": sorted(schema["$defs"]["TrajectoryFilter"]["properties"]),
            "memoryEditsReachTraining": True,
            "debugSessions": MAX_SESSIONS,
            "debugAlongsideTraining": True,
            "configFields": [f.name for f in dataclasses.fields(TrainConfig)],
        }

    async def server_info(self) -> dict:
        device = await self.device.info()
        return {"name": "empo2-host", "version": __version__, "pid": os.getpid(), "device": device}

    # -- connections -------------------------------------------------------------------------------

    async def _connection(self, websocket) -> None:
        self._connections += 1
        number = self._connections
        log.info("connection %d opened", number)
        try:
            await Connection(websocket, number, self.dispatcher, self.hub, self.settings.limits).serve()
        finally:
            self.debug.connection_closed(number)


__all__ = ["HostServer", "Settings", "is_loopback"]
