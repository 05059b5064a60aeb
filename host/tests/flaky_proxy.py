"""A loopback TCP proxy that cuts, refuses and freezes its links: a flaky network for tests.

It stands between a client and the host (ws://127.0.0.1:<proxy port>/ → 127.0.0.1:<host port>)
and does to the TCP streams what a bad network or a stalled SSH tunnel does:

  cut      every open link is reset at once (the client sees close 1006, the host a dropped peer)
  refuse   the port stops listening (a connect is refused), open links keep flowing
  accept   the port listens again
  freeze   nothing moves on any link, open or new, in either direction; the sockets stay open
           and bytes wait, as on a dead link where nobody closes anything
           (`freeze up`: only client → host; `freeze down`: only host → client, e.g. a request
           that arrives while its answer never comes back)
  thaw     everything waiting is delivered and traffic flows again

Python tests use it in-process (`FlakyProxy(port).start()`, a thread of its own); the Node test
harness spawns it, `python flaky_proxy.py --target-port N`, reads one JSON line
`{"event": "ready", "port": P}` from stdout and then writes commands, one per line, to stdin
(`cut`, `refuse`, `accept`, `freeze`, `thaw`, `stats`, `quit`), each answered by one JSON line
`{"ok": command, "links": open links, ...}`. Both are bounded in time: the proxy stops after
`lifetime_s`, and the spawned one also when its stdin closes (its parent is gone). It binds
127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import threading
import time

LOOPBACK = "127.0.0.1"
CHUNK = 64 * 1024


DIRECTIONS = ("up", "down")  # up: client → target, down: target → client


class _Link:
    """One client connection and its upstream connection to the target."""

    def __init__(self, frozen: set[str]):
        self.flowing = {d: asyncio.Event() for d in DIRECTIONS}
        for d in DIRECTIONS:
            if d not in frozen:
                self.flowing[d].set()
        self.writers: list[asyncio.StreamWriter] = []
        self.tasks: list[asyncio.Task] = []

    def reset(self) -> None:
        for writer in self.writers:
            writer.transport.abort()  # RST, not FIN: a cut, not a goodbye
        for task in self.tasks:
            task.cancel()


class FlakyProxy:
    def __init__(self, target_port: int, *, port: int = 0, lifetime_s: float = 600.0):
        self.target_port = target_port
        self.port = port
        self.lifetime_s = lifetime_s
        self.frozen: set[str] = set()  # the directions that do not move
        self.links_opened = 0
        self.bytes_forwarded = 0
        self._links: set[_Link] = set()
        self._server: asyncio.AbstractServer | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._done: asyncio.Event | None = None

    @property
    def url(self) -> str:
        return f"ws://{LOOPBACK}:{self.port}/"

    # -- the loop -----------------------------------------------------------------------------------

    async def serve(self, ready=None) -> None:
        """Runs until stop() or lifetime_s; `ready` is called once it listens."""
        self._loop = asyncio.get_running_loop()
        self._done = asyncio.Event()
        await self._listen()
        if ready is not None:
            ready()
        try:
            await asyncio.wait_for(self._done.wait(), self.lifetime_s)
        except TimeoutError:
            pass
        finally:
            if self._server is not None:
                self._server.close()
            for link in list(self._links):
                link.reset()

    async def _listen(self) -> None:
        self._server = await asyncio.start_server(self._accept, LOOPBACK, self.port, reuse_address=True)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        link = _Link(self.frozen)
        link.writers.append(writer)
        self._links.add(link)
        self.links_opened += 1
        try:
            await link.flowing["up"].wait()  # a frozen network does not even reach the target
            if writer.transport.is_closing():  # cut while it waited
                return
            up_reader, up_writer = await asyncio.open_connection(LOOPBACK, self.target_port)
        except (OSError, asyncio.CancelledError):
            link.reset()
            self._links.discard(link)
            return
        link.writers.append(up_writer)
        link.tasks = [
            asyncio.ensure_future(self._pump(link.flowing["up"], link, reader, up_writer)),
            asyncio.ensure_future(self._pump(link.flowing["down"], link, up_reader, writer)),
        ]
        await asyncio.gather(*link.tasks, return_exceptions=True)
        for w in link.writers:
            w.close()
        self._links.discard(link)

    async def _pump(
        self, flowing: asyncio.Event, link: _Link, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        try:
            while True:
                await flowing.wait()
                data = await reader.read(CHUNK)
                if not data:
                    break
                await flowing.wait()  # bytes read just before a freeze wait too
                writer.write(data)
                await writer.drain()
                self.bytes_forwarded += len(data)
        except (OSError, ConnectionError):
            pass
        finally:
            for task in link.tasks:  # one side gone: the link is gone
                if task is not asyncio.current_task():
                    task.cancel()

    # -- faults (on the loop) ---------------------------------------------------------------------

    def _cut(self) -> None:
        for link in list(self._links):
            link.reset()
            self._links.discard(link)

    async def _refuse(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None

    async def _accept_again(self) -> None:
        if self._server is None:
            await self._listen()

    def _freeze(self, direction: str = "both") -> None:
        if direction not in (*DIRECTIONS, "both"):
            raise ValueError(f"freeze takes up, down or both, not {direction!r}")
        self.frozen |= set(DIRECTIONS) if direction == "both" else {direction}
        for link in self._links:
            for d in self.frozen:
                link.flowing[d].clear()

    def _thaw(self) -> None:
        self.frozen = set()
        for link in self._links:
            for event in link.flowing.values():
                event.set()

    def stats(self) -> dict:
        return {
            "links": len(self._links),
            "linksOpened": self.links_opened,
            "bytes": self.bytes_forwarded,
            "frozen": sorted(self.frozen),
            "listening": self._server is not None,
        }

    # -- in-process use (a thread of its own) ----------------------------------------------------

    def start(self) -> FlakyProxy:
        started = threading.Event()

        def main() -> None:
            asyncio.run(self.serve(started.set))

        self._thread = threading.Thread(target=main, name="flaky-proxy", daemon=True)
        self._thread.start()
        if not started.wait(10):
            raise RuntimeError("the flaky proxy did not start listening within 10 s")
        return self

    def _call(self, fn, *args) -> dict:
        async def run():
            result = fn(*args)
            if asyncio.iscoroutine(result):
                await result
            return self.stats()

        return asyncio.run_coroutine_threadsafe(run(), self._loop).result(10)

    def cut(self) -> dict:
        return self._call(self._cut)

    def refuse(self) -> dict:
        return self._call(self._refuse)

    def accept(self) -> dict:
        return self._call(self._accept_again)

    def freeze(self, direction: str = "both") -> dict:
        return self._call(self._freeze, direction)

    def thaw(self) -> dict:
        return self._call(self._thaw)

    def stop(self) -> None:
        if self._loop is not None and self._done is not None and not self._loop.is_closed():
            try:
                self._loop.call_soon_threadsafe(self._done.set)
            except RuntimeError:  # the loop already ended (lifetime spent)
                pass
        if self._thread is not None:
            self._thread.join(10)

    def __enter__(self) -> FlakyProxy:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


# -- spawned use: commands on stdin, answers on stdout ---------------------------------------------

COMMANDS = {
    "cut": "_cut",
    "refuse": "_refuse",
    "accept": "_accept_again",
    "freeze": "_freeze",
    "thaw": "_thaw",
    "stats": None,
}


def _read_commands(proxy: FlakyProxy, loop: asyncio.AbstractEventLoop) -> None:
    """A daemon thread: stdin lines → commands on the loop (a blocked read never holds up exit)."""
    for line in sys.stdin:
        command = line.strip()
        if command == "quit":
            break
        if command:
            asyncio.run_coroutine_threadsafe(_run_command(proxy, command), loop).result()
    loop.call_soon_threadsafe(proxy._done.set)  # EOF or quit: the parent is gone or done


async def _run_command(proxy: FlakyProxy, line: str) -> None:
    command, *args = line.split()
    if command not in COMMANDS:
        _say({"error": f"unknown command {command!r}; known: {', '.join(COMMANDS)}, quit"})
        return
    name = COMMANDS[command]
    try:
        if name is not None:
            result = getattr(proxy, name)(*args)
            if asyncio.iscoroutine(result):
                await result
    except (TypeError, ValueError) as err:
        _say({"error": f"{line}: {err}"})
        return
    _say({"ok": command, "time": time.time(), **proxy.stats()})


def _say(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="A loopback TCP proxy for tests that cuts, refuses and freezes links on command (stdin)."
    )
    parser.add_argument("--target-port", type=int, required=True)
    parser.add_argument("--port", type=int, default=0, help="the port to listen on (0: any free)")
    parser.add_argument(
        "--lifetime", type=float, default=600.0, help="seconds after which the proxy exits whatever happens"
    )
    args = parser.parse_args(argv)
    proxy = FlakyProxy(args.target_port, port=args.port, lifetime_s=args.lifetime)

    async def run() -> None:
        loop = asyncio.get_running_loop()

        def ready() -> None:
            _say({"event": "ready", "port": proxy.port})
            threading.Thread(target=_read_commands, args=(proxy, loop), daemon=True).start()

        await proxy.serve(ready)

    try:
        asyncio.run(run())
    except OSError as err:
        print(f"flaky proxy: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
