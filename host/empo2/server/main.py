"""`empo2-host serve`: the host process the extension spawns (or a person starts on a GPU box).

Contract with the spawning process: exactly one line on stdout,
`{"event":"ready","port":..,"pid":..,"protocolVersion":".."}`, once the socket is bound; after it
stdout is redirected to stderr, so no library's stray print can corrupt the channel. Logs go to
stderr, and while a run trains also to its folder's host.log. SIGTERM and SIGINT shut down like a
`shutdown` request: the live run ends `interrupted` (resumable) at its next iteration boundary,
waited for at most a grace period; a second signal stops the wait. Every path exits with status 0
and no fatal error (tests/test_server_shutdown.py runs each).
With EMPO2_HOST_EXIT_ON_STDIN_EOF=1 (the VS Code extension sets it) the end of stdin does too: the
parent holds the pipe open and never writes, so the host outlives no killed parent.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import sys
from pathlib import Path

from .settings import Settings, is_loopback
from .transport.auth import TOKEN_ENV, check_token
from .transport.protocol import protocol_version

log = logging.getLogger("empo2.server")


class ServeError(ValueError):
    """A mistake the user can fix (no token, an unsafe address, a port in use): one sentence."""


def settings_from_args(args, environ=os.environ) -> Settings:
    """Settings from the command line and the environment; ServeError with one sentence."""
    try:
        token = check_token(environ.get(TOKEN_ENV), args.insecure_no_token)
    except ValueError as err:
        raise ServeError(str(err)) from None
    if not is_loopback(args.host):
        if not args.allow_remote:
            raise ServeError(
                f"--host {args.host} is not loopback; pass --allow-remote to bind it "
                "(an SSH tunnel is safer, see protocol/README.md)"
            )
        if token is None:
            raise ServeError("--allow-remote needs a token; --insecure-no-token is for loopback only")
    if args.port < 0 or args.port > 65535:
        raise ServeError("--port must lie in 0..65535")
    grace = getattr(args, "shutdown_grace", 30.0)
    if not grace >= 0:  # also refuses nan
        raise ServeError("--shutdown-grace must be a number of seconds, 0 or more")
    roots = [Path(r) for r in (args.run_root or [".empo2/runs"])]
    for root in roots:
        if root.exists() and not root.is_dir():
            raise ServeError(f"--run-root {root} is not a folder")
    return Settings(
        host=args.host, port=args.port, token=token, roots=roots, allow_remote=args.allow_remote, shutdown_grace_s=grace
    )


EXIT_ON_STDIN_EOF_ENV = "EMPO2_HOST_EXIT_ON_STDIN_EOF"


def _exit_when_stdin_closes(loop, server) -> None:
    """Shuts down when stdin reaches its end: the spawning process (the VS Code extension) keeps
    a pipe open and never writes, so its end means the parent is gone, even after a kill -9 of
    the parent that left it no chance to stop us. No orphaned trainer keeps the GPU."""
    import threading

    def watch() -> None:
        # os.read on the descriptor, not sys.stdin: a daemon thread blocked inside the buffered
        # reader holds its lock, and the interpreter's exit then aborts ("Fatal Python error:
        # _enter_buffered_busy", SIGABRT) while flushing stdin.
        try:
            while os.read(0, 65536):
                pass
        except OSError:
            pass
        log.info("stdin closed (the process that started the host is gone); shutting down")
        try:
            loop.call_soon_threadsafe(server.request_shutdown)
        except RuntimeError:
            pass  # the loop is already closed: the host is exiting anyway

    threading.Thread(target=watch, name="empo2-stdin-watch", daemon=True).start()


def serve_command(args) -> int:
    """Checks the arguments (fast, before the server's modules load), then serves until shutdown."""
    settings = settings_from_args(args)
    if os.environ.get("EMPO2_LOG_LEVEL") is None:
        logging.getLogger("empo2").setLevel(logging.INFO)
    if settings.token is None:
        log.warning("serving WITHOUT a token (--insecure-no-token): any local process can drive training")
    if not is_loopback(settings.host):
        log.warning("serving on %s: reachable from other machines; every client still needs the token", settings.host)
    for root in settings.roots:
        root.mkdir(parents=True, exist_ok=True)
    # Training shares the interpreter with the event loop. PyTorch kernels release the GIL, but
    # the Python between them does not; a 1 ms switch interval (default 5 ms) lets the loop in
    # sooner. Measured with host/benchmarks/ping_under_load.py: it halves the ping tail.
    sys.setswitchinterval(0.001)
    try:
        return asyncio.run(_serve(settings))
    except KeyboardInterrupt:  # Ctrl-C before the loop's handlers were installed: not a crash
        return 130


async def _serve(settings: Settings) -> int:
    # The server's own modules (jsonschema, websockets); the training stack (torch, transformers)
    # loads only when a run starts (server/runs/run_manager.py), so the ready line never waits for it.
    from .app import HostServer

    server = HostServer(settings)
    try:
        port = await server.start()
    except OSError as err:
        raise ServeError(f"cannot listen on {settings.host}:{settings.port} ({err.strerror or err})") from None
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):  # a second one stops waiting for the iteration
        try:
            loop.add_signal_handler(sig, server.request_shutdown)
        except (NotImplementedError, RuntimeError):  # pragma: no cover - Windows
            pass
    ready = {"event": "ready", "port": port, "pid": os.getpid(), "protocolVersion": protocol_version()}
    sys.stdout.write(json.dumps(ready, separators=(",", ":")) + "\n")
    sys.stdout.flush()
    sys.stdout = sys.stderr
    if os.environ.get(EXIT_ON_STDIN_EOF_ENV) == "1":
        _exit_when_stdin_closes(loop, server)
    await server.serve_until_shutdown()
    _ignore_further_signals(loop)
    log.info("host stopped")
    _exit_if_needed(server.abandoned_run is not None)
    return 0


def _ignore_further_signals(loop) -> None:
    """The host has stopped; an impatient second Ctrl-C or SIGTERM from now on changes nothing.
    Closing the loop would reset both to their defaults (KeyboardInterrupt, death by SIGTERM), and
    the exit that follows (the loop closing, torch's teardown) takes long enough for one to land:
    CI saw exit status -2. So the loop's handlers are removed here and the signals ignored (a
    SIGTERM in the microseconds between the two still kills; a SIGINT there is caught)."""
    for sig in (signal.SIGTERM, signal.SIGINT):
        try:
            loop.remove_signal_handler(sig)
            signal.signal(sig, signal.SIG_IGN)
        except KeyboardInterrupt:  # the default SIGINT handler ran between the two lines
            signal.signal(sig, signal.SIG_IGN)
        except (NotImplementedError, RuntimeError, ValueError):  # pragma: no cover - Windows
            pass


def _exit_if_needed(abandoned: bool) -> None:
    """Ends the process at once when a normal interpreter exit could fail: a trainer thread
    still inside an iteration (its run.json already says `interrupted`; the folder resumes from
    its last checkpoint, as after a kill), or stdout/stderr gone with the parent (Ctrl-C of
    scripts/run.sh), where the exit's final flush would fail. Exit status 0 either way: the
    shutdown itself went as asked."""
    broken = False
    for stream in (sys.stderr, sys.__stdout__):
        try:
            stream.flush()
        except (OSError, ValueError):
            broken = True
    if abandoned or broken:
        logging.shutdown()
        os._exit(0)


__all__ = ["serve_command", "settings_from_args", "ServeError"]
