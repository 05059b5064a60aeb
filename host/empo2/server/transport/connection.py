"""One client connection: read frames, admit requests, answer them in order, send.

Three tasks per connection, so that nothing one client does can stall another or training:

- the reader parses each text frame and admits it through a token bucket into a bounded inbox;
  a request over the rate or beyond the inbox is answered at once with RateLimited instead of
  queueing forever, and the reader stops reading while too many responses wait unsent (so a
  client that floods without reading is throttled by TCP itself);
- the worker takes requests from the inbox one at a time, so a connection's requests are answered
  in the order they arrived, and hands each to the dispatcher;
- the writer drains the outbox (fanout.Outbox), so a slow socket delays only its own client.

Protocol violations that JSON-RPC cannot answer close the connection with a reason: a binary
frame (1003), a frame over the size limit (1009, by the websockets library), invalid UTF-8 (1007,
likewise). A frame whose arrays and objects nest deeper than the dispatcher's MAX_DEPTH is
answered InvalidRequest without being decoded: the json module decodes recursively.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import re
import time
from dataclasses import dataclass

from websockets.exceptions import ConnectionClosed

from ...memory.tips import PERSON
from .dispatch import MAX_DEPTH, TOO_DEEP
from .fanout import Outbox, Subscriber
from .protocol import ProtocolError

log = logging.getLogger("empo2.server.connection")


@dataclass
class Limits:
    """Per-connection limits; each is also announced in the host's capabilities."""

    max_frame_bytes: int = 1 << 20
    """Largest incoming frame; a larger one closes the connection with 1009."""
    requests_per_second: float = 200.0
    """Token bucket refill: sustained requests a second per connection."""
    request_burst: int = 400
    """Token bucket size: requests a connection may send at once."""
    inbox_limit: int = 64
    """Requests admitted but not yet handled, per connection; more get RateLimited."""
    send_queue_limit: int = 256
    """Notifications waiting to be sent to one client; beyond it: drop them, send host/resync."""
    response_limit: int = 256
    """Responses waiting to be sent to one client; beyond it the connection stops reading."""


class TokenBucket:
    """`rate` tokens a second up to `burst`; a request takes one."""

    def __init__(self, rate: float, burst: int):
        self.rate, self.burst = rate, burst
        self.tokens = float(burst)
        self.stamp = time.monotonic()

    def take(self) -> bool:
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return True
        return False

    def retry_after_ms(self) -> int:
        return max(1, int((1.0 - self.tokens) / self.rate * 1000) + 1)


def _reject_constant(name: str):
    raise ValueError(f"{name} is not valid JSON")


_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def brackets_too_deep(text: str, limit: int = MAX_DEPTH) -> bool:
    """Whether the arrays and objects of a frame's text nest deeper than `limit`, from its
    brackets outside strings, balanced ones only (unbalanced ones are a parse error to report).
    A frame holding no more than `limit` brackets is answered by two counts."""
    if text.count("[") + text.count("{") <= limit:
        return False
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    if brackets.count("[") != brackets.count("]") or brackets.count("{") != brackets.count("}"):
        return False
    return max(itertools.accumulate(_STEP[b] for b in brackets)) > limit


def parse_frame(text: str):
    """The JSON value of a frame; ValueError for anything that is not strict JSON, and
    InvalidRequest for a frame nested deeper than MAX_DEPTH (told from its text, undecoded).

    NaN and Infinity are refused (a strict JSON reader on the other side would choke on them
    echoed back); unbalanced nesting deep enough to exhaust the decoder's stack is a
    RecursionError, reported as a parse error.
    """
    if brackets_too_deep(text):
        raise ProtocolError("InvalidRequest", TOO_DEEP)
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except RecursionError:
        raise ValueError("the JSON nests too deeply") from None


def encode(message: dict) -> str:
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def error_response(request_id, error: ProtocolError) -> dict:
    return {"jsonrpc": "2.0", "id": request_id, "error": error.to_error()}


def readable_id(message):
    """The id to answer with: the request's own when it is a valid one, else null."""
    if isinstance(message, dict):
        rid = message.get("id")
        if isinstance(rid, str) and len(rid) <= 256:
            return rid
        if isinstance(rid, int) and not isinstance(rid, bool) and abs(rid) <= 2**53 - 1:
            return rid
    return None


class Connection(Subscriber):
    def __init__(self, websocket, number: int, dispatcher, hub, limits: Limits):
        self.websocket = websocket
        self.number = number
        self.dispatcher = dispatcher
        self.hub = hub
        self.limits = limits
        self.outbox = Outbox(limits.send_queue_limit, limits.response_limit)
        self.bucket = TokenBucket(limits.requests_per_second, limits.request_burst)
        self.inbox: asyncio.Queue = asyncio.Queue(maxsize=limits.inbox_limit)
        self.initialized = False
        self.client_name = ""
        self.capabilities: dict = {}

    # -- what the hub and the methods need -------------------------------------------------------

    def wants(self, method: str) -> bool:
        if method == "log/message":
            return self.capabilities.get("logMessages", True) is not False
        if method in ("run/progress", "trajectory/progress"):  # both are progress within an iteration
            return self.capabilities.get("progress", True) is not False
        return True

    def subscribe(self) -> None:
        self.hub.subscribers.add(self)

    def author(self) -> dict:
        return {"kind": PERSON, "client": self.client_name, "connection": self.number}

    # -- the three tasks -----------------------------------------------------------------------------

    async def serve(self) -> None:
        writer = asyncio.create_task(self._write(), name=f"empo2-write-{self.number}")
        worker = asyncio.create_task(self._work(), name=f"empo2-work-{self.number}")
        try:
            await self._read()
        except ConnectionClosed:
            pass
        finally:
            self.hub.subscribers.discard(self)
            worker.cancel()
            self.outbox.close()
            await asyncio.gather(worker, return_exceptions=True)
            try:
                await asyncio.wait_for(writer, timeout=5)
            except (TimeoutError, Exception):  # noqa: BLE001 - a closing socket may fail anyhow
                writer.cancel()
            log.info("connection %d closed", self.number)

    async def _read(self) -> None:
        async for frame in self.websocket:
            if isinstance(frame, bytes):
                await self.websocket.close(1003, "binary frames are not supported; send JSON text")
                return
            await self.outbox.wait_drained()
            try:
                message = parse_frame(frame)
            except ProtocolError as err:  # nested too deeply to decode
                self._answer(None, err)
                continue
            except ValueError as err:
                self._answer(None, ProtocolError("ParseError", f"parse error: {_short(err)}."))
                continue
            rid = readable_id(message)
            is_request = isinstance(message, dict) and "id" in message
            if not self.bucket.take():
                if is_request:
                    self._answer(
                        rid,
                        ProtocolError(
                            "RateLimited",
                            "too many requests; slow down.",
                            {"retryAfterMs": self.bucket.retry_after_ms()},
                        ),
                    )
                continue
            try:
                self.inbox.put_nowait(message)
            except asyncio.QueueFull:
                if is_request:
                    self._answer(
                        rid,
                        ProtocolError(
                            "RateLimited",
                            "too many requests waiting on this connection; slow down.",
                            {"retryAfterMs": 50},
                        ),
                    )

    async def _work(self) -> None:
        while True:
            message = await self.inbox.get()
            response = await self.dispatcher.handle(self, message)
            if response is not None:
                self.outbox.put_response(response)

    async def _write(self) -> None:
        while True:
            message = await self.outbox.get()
            if message is None:
                return
            try:
                text = encode(message)
            except (TypeError, ValueError) as err:  # a result that is not strict JSON: a bug
                log.error("cannot encode a reply (%s)", err)
                if "id" not in message:
                    continue
                text = encode(
                    error_response(
                        message["id"],
                        ProtocolError("InternalError", "internal error: the result could not be encoded as JSON."),
                    )
                )
            try:
                await self.websocket.send(text)
            except ConnectionClosed:
                return

    def _answer(self, request_id, error: ProtocolError) -> None:
        self.outbox.put_response(error_response(request_id, error))


def _short(err: Exception) -> str:
    text = str(err).splitlines()[0] if str(err) else type(err).__name__
    return text[:200].rstrip(".")


__all__ = [
    "Connection",
    "Limits",
    "TokenBucket",
    "parse_frame",
    "brackets_too_deep",
    "encode",
    "error_response",
    "readable_id",
]
