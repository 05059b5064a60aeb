"""From a parsed JSON value to a JSON-RPC response: envelope, gate, params, handler, errors.

Methods come from one table (methods/__init__.py) pairing each name with its params definition
in the schema and its handler; the dispatcher looks the name up there, never in a chain of
comparisons. Every incoming params object is validated against the schema before its handler
runs, so the schema is enforced, not just documented. Any exception a handler raises that is not
a ProtocolError is a bug: it is logged with its traceback and answered with InternalError, and
the connection and the host carry on.

Batches (JSON arrays) are refused with one InvalidRequest error (id null): one request per frame
keeps ordering, rate limiting and the inbox bound simple, and no client needs batches.

A message nested deeper than MAX_DEPTH arrays and objects is refused with InvalidRequest before
the schema sees it: the schema's validator descends recursively, and a few thousand levels would
exhaust the stack inside it. The deepest message of the protocol (a run's config inside
`run.start`) nests five levels; the connection checks a frame's text against the same bound
before decoding it (connection.py).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from .protocol import ProtocolError, Validators

log = logging.getLogger("empo2.server.dispatch")

ENVELOPE = {"jsonrpc", "id", "method", "params"}
MAX_METHOD_LENGTH = 100
MAX_DEPTH = 64
"""The deepest nesting of arrays and objects a message may have, the envelope's object included."""
TOO_DEEP = f"the request nests arrays and objects deeper than {MAX_DEPTH} levels."


@dataclass(frozen=True)
class Method:
    """One protocol method: its name, its params definition in the schema, its handler."""

    name: str
    params: str
    handler: Callable[[Request, dict], Awaitable[dict]]
    before_initialize: bool = False
    while_shutting_down: bool = False


@dataclass
class Request:
    """What a handler gets besides its params: the connection and the host."""

    connection: object
    host: object
    id: object


class Dispatcher:
    def __init__(self, methods: tuple[Method, ...], validators: Validators, host):
        self.methods = {m.name: m for m in methods}
        self.validators = validators
        self.host = host

    async def handle(self, connection, message) -> dict | None:
        """The response to send, or None for a notification."""
        # Errors answer with the request's id when it can be read, else null (JSON-RPC 2.0 §5).
        rid = message.get("id") if isinstance(message, dict) and _valid_id(message.get("id")) else None
        try:
            method, params = self._envelope(message)
            if method is None:
                return None  # a valid client notification: none are defined, so it is ignored
            return {"jsonrpc": "2.0", "id": rid, "result": await self._call(connection, method, rid, params)}
        except ProtocolError as err:
            return {"jsonrpc": "2.0", "id": rid, "error": err.to_error()}
        except Exception as err:  # noqa: BLE001 - a bug must not take the connection down
            log.exception("internal error in %s", _method_name(message))
            return {
                "jsonrpc": "2.0",
                "id": rid,
                "error": ProtocolError(
                    "InternalError", f"internal error: {type(err).__name__}; the host logged the details."
                ).to_error(),
            }

    def _envelope(self, message) -> tuple[Method | None, dict]:
        if nesting_depth(message, MAX_DEPTH) > MAX_DEPTH:
            raise ProtocolError("InvalidRequest", TOO_DEEP)
        if isinstance(message, list):
            raise ProtocolError("InvalidRequest", "batch requests are not supported; send one request per frame.")
        if not isinstance(message, dict):
            raise ProtocolError("InvalidRequest", "a JSON-RPC message must be a JSON object.")
        unknown = sorted(set(message) - ENVELOPE)
        if unknown:
            raise ProtocolError("InvalidRequest", f"unknown member '{unknown[0][:50]}' in the request.")
        if message.get("jsonrpc") != "2.0":
            raise ProtocolError("InvalidRequest", "the member 'jsonrpc' must be \"2.0\".")
        has_id = "id" in message
        if has_id and not _valid_id(message["id"]):
            raise ProtocolError("InvalidRequest", "the id must be an integer or a string of at most 256 characters.")
        name = message.get("method")
        if not isinstance(name, str) or not name or len(name) > MAX_METHOD_LENGTH:
            raise ProtocolError(
                "InvalidRequest",
                f"the member 'method' must be a non-empty string of at most {MAX_METHOD_LENGTH} characters.",
            )
        params = message.get("params", {})
        if not isinstance(params, dict):
            if not has_id:
                raise ProtocolError("InvalidRequest", "params must be an object (named parameters).")
            raise ProtocolError(
                "InvalidParams",
                "params must be an object (named parameters), not an array or a value.",
                {"field": "params"},
            )
        if not has_id:
            return None, params
        method = self.methods.get(name)
        if method is None:
            raise ProtocolError("MethodNotFound", f"unknown method '{name}'.")
        return method, params

    async def _call(self, connection, method: Method, rid, params: dict) -> dict:
        if not connection.initialized and not method.before_initialize:
            raise ProtocolError("NotInitialized", f"send 'initialize' before '{method.name}'.")
        if self.host.shutting_down and not method.while_shutting_down:
            raise ProtocolError("ShuttingDown", "the host is shutting down.")
        self.validators.check_params(method.params, params)
        return await method.handler(Request(connection, self.host, rid), params)


def nesting_depth(value, limit: int) -> int:
    """How deeply arrays and objects nest in a decoded JSON value (a scalar: 0), level by level
    without recursion, and counted only up to limit + 1: a deeper value costs no more than that."""
    deepest, level = 0, [value]
    while deepest <= limit:
        level = [v for v in level if isinstance(v, (dict, list))]
        if not level:
            break
        deepest += 1
        level = [child for v in level for child in (v.values() if isinstance(v, dict) else v)]
    return deepest


def _valid_id(rid) -> bool:
    if isinstance(rid, bool):
        return False
    if isinstance(rid, int):
        return abs(rid) <= 2**53 - 1
    return isinstance(rid, str) and len(rid) <= 256


def _method_name(message) -> str:
    if isinstance(message, dict) and isinstance(message.get("method"), str):
        return message["method"][:100]
    return "a message"


__all__ = ["Method", "Request", "Dispatcher", "MAX_DEPTH", "TOO_DEEP", "nesting_depth"]
