"""A host running inside another program: its own event loop in a background thread.

For tests, benchmarks and notebooks that want the real server without a subprocess:

    with EmbeddedHost(Settings(token=token, roots=[root])) as host:
        connect(host.url, additional_headers={"Authorization": f"Bearer {token}"})
"""

from __future__ import annotations

import asyncio
import threading

from .app import HostServer
from .settings import Settings


class EmbeddedHost:
    def __init__(self, settings: Settings):
        self.settings = settings
        self.server: HostServer | None = None
        self.port: int | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/"

    def start(self) -> EmbeddedHost:
        self._thread = threading.Thread(target=self._main, name="empo2-embedded-host", daemon=True)
        self._thread.start()
        self._ready.wait()
        if self._error is not None:
            raise self._error
        return self

    def _main(self) -> None:
        self._loop = asyncio.new_event_loop()
        try:
            self._loop.run_until_complete(self._serve())
        finally:
            self._loop.close()

    async def _serve(self) -> None:
        try:
            self.server = HostServer(self.settings)
            self.port = await self.server.start()
        except BaseException as err:  # noqa: BLE001 - handed to the starting thread
            self._error = err
            self._ready.set()
            return
        self._ready.set()
        await self.server.serve_until_shutdown()

    def call(self, fn, *args, timeout: float = 60):
        """Runs fn(*args) on the host's loop (awaited if it is a coroutine function); its result."""

        async def run():
            result = fn(*args)
            return await result if asyncio.iscoroutine(result) else result

        return asyncio.run_coroutine_threadsafe(run(), self._loop).result(timeout=timeout)

    def stop(self, timeout: float = 60) -> None:
        if self._loop is not None and self.server is not None and not self._loop.is_closed():
            try:
                self._loop.call_soon_threadsafe(self.server.request_shutdown)
            except RuntimeError:
                pass
        if self._thread is not None:
            self._thread.join(timeout)

    def __enter__(self) -> EmbeddedHost:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


__all__ = ["EmbeddedHost"]
