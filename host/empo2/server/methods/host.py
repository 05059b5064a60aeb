"""`initialize`, `shutdown`, `ping`, `log.tail`: the connection's handshake, the host's lifecycle
and its log."""

from __future__ import annotations

import asyncio
import time

from ..logs import TAIL_LIMIT
from ..transport.protocol import ProtocolError, protocol_version


async def initialize(request, params: dict) -> dict:
    """Checks the major version, records what the client wants, subscribes it to notifications."""
    connection, host = request.connection, request.host
    if connection.initialized:
        raise ProtocolError("InvalidRequest", "this connection is already initialized.")
    ours = protocol_version()
    if params["protocolVersion"].split(".")[0] != ours.split(".")[0]:
        raise ProtocolError(
            "ProtocolVersionMismatch",
            f"the host speaks protocol {ours}, the client {params['protocolVersion'][:20]}.",
            {"hostVersion": ours},
        )
    connection.client_name = params["clientInfo"]["name"]
    connection.capabilities = dict(params.get("capabilities", {}))
    connection.initialized = True
    connection.subscribe()
    return {
        "protocolVersion": ours,
        "serverInfo": await host.server_info(),
        "connection": connection.number,
        "capabilities": host.capabilities(),
    }


async def shutdown(request, params: dict) -> dict:
    """Interrupts the live run (it ends `interrupted`, resumable; waited for up to the grace
    period, or not at all with `now`), answers, then closes every connection and exits."""
    host = request.host
    host.shutting_down = True
    if params.get("now"):
        host.hurry()
    stopped = await host.runs.shutdown(host.settings.shutdown_grace_s, host.hurried)
    asyncio.get_running_loop().create_task(host.exit_after_reply(request.connection))
    return {"stoppedRun": stopped}


async def ping(request, params: dict) -> dict:
    return {"time": time.time()}


async def log_tail(request, params: dict) -> dict:
    """The host's newest log lines after `after` (server lines included; see logs.py)."""
    return request.host.log_forwarder.tail(params.get("after", 0), params.get("limit", TAIL_LIMIT))
