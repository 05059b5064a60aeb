"""A small synchronous client of the host, for scripts, benchmarks and tests.

    with HostClient(url, token) as host:
        host.initialize("my-script")
        run = host.request("run.start", {"preset": "builtin-smoke"})["run"]
        host.wait_for(lambda m: m["method"] == "run/state" and m["params"]["run"]["state"] == "finished")

A background thread reads every frame: responses complete their pending request (matched by id),
notifications go to a list that `wait_for` searches. `observe` sees every message in both
directions (the tests validate each one against the schema there).
"""

from __future__ import annotations

import itertools
import json
import threading
import time

from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from ..server.transport.protocol import protocol_version


class HostError(Exception):
    """A JSON-RPC error response: `code`, `message`, `data` as the host sent them."""

    def __init__(self, error: dict):
        super().__init__(f"{error.get('code')}: {error.get('message')}")
        self.code = error.get("code")
        self.message = error.get("message")
        self.data = error.get("data")


class HostClient:
    def __init__(
        self,
        url: str,
        token: str | None,
        *,
        origin: str | None = None,
        observe=None,
        open_timeout: float = 10,
        max_size: int | None = 64 << 20,
        max_queue: int | None = 16,
    ):
        headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
        self.observe = observe or (lambda direction, message, method: None)
        self.ws = connect(
            url,
            additional_headers=headers,
            origin=origin,
            open_timeout=open_timeout,
            max_size=max_size,
            max_queue=max_queue,
            compression=None,
            legacy=True,
        )
        self._ids = itertools.count(1)
        self._pending: dict[object, dict] = {}
        self._methods: dict[object, str] = {}
        self._lock = threading.Condition()
        self.notifications: list[dict] = []
        self.closed: Exception | None = None
        self._reader = threading.Thread(target=self._read, name="empo2-client-reader", daemon=True)
        self._reader.start()

    # -- sending -------------------------------------------------------------------------------------

    def request(self, method: str, params: dict | None = None, timeout: float = 60):
        """The result, or HostError for an error response."""
        rid = self.send(method, params)
        response = self.response(rid, timeout)
        if "error" in response:
            raise HostError(response["error"])
        return response["result"]

    def send(self, method: str, params: dict | None = None, rid=None):
        """Sends a request without waiting; returns its id."""
        rid = next(self._ids) if rid is None else rid
        message = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            message["params"] = params
        with self._lock:
            self._methods[rid] = method
        self.observe("client→host", message, method)
        self.ws.send(json.dumps(message))
        return rid

    def send_raw(self, data) -> None:
        """A frame as is (text or bytes): for tests of bad input."""
        if isinstance(data, str):
            try:
                message = json.loads(data)
                if isinstance(message, dict) and "id" in message and isinstance(message.get("method"), str):
                    with self._lock:
                        self._methods[json.dumps(message["id"])] = message["method"]
            except (ValueError, TypeError, RecursionError):
                pass
        self.ws.send(data)

    def response(self, rid, timeout: float = 60) -> dict:
        deadline = time.monotonic() + timeout
        with self._lock:
            while rid not in self._pending:
                if self.closed is not None:
                    raise ConnectionError(f"the connection closed ({self.closed})")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"no response to request {rid!r}")
                self._lock.wait(left)
            return self._pending.pop(rid)

    def initialize(self, name: str = "python-client", capabilities: dict | None = None) -> dict:
        return self.request(
            "initialize",
            {"protocolVersion": protocol_version(), "clientInfo": {"name": name}, "capabilities": capabilities or {}},
        )

    # -- notifications -------------------------------------------------------------------------------

    def wait_for(self, predicate, timeout: float = 120, start: int = 0) -> dict:
        """The first notification (from index `start`) for which predicate is true."""
        deadline = time.monotonic() + timeout
        index = start
        with self._lock:
            while True:
                while index < len(self.notifications):
                    message = self.notifications[index]
                    index += 1
                    if predicate(message):
                        return message
                if self.closed is not None:
                    raise ConnectionError(f"the connection closed ({self.closed})")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError("no matching notification")
                self._lock.wait(left)

    # -- reading ---------------------------------------------------------------------------------------

    def _read(self) -> None:
        try:
            for frame in self.ws:
                message = json.loads(frame)
                with self._lock:
                    if isinstance(message, dict) and "id" in message:
                        key = message["id"]
                        method = self._methods.pop(key, None) or self._methods.pop(json.dumps(key), None)
                        self._pending[key] = message
                    else:
                        method = message.get("method") if isinstance(message, dict) else None
                        self.notifications.append(message)
                    self._lock.notify_all()
                self.observe("host→client", message, method)
        except ConnectionClosed as err:
            self._set_closed(err)
        except Exception as err:  # noqa: BLE001 - surfaced to waiting callers
            self._set_closed(err)
        else:
            self._set_closed(ConnectionError("closed"))

    def _set_closed(self, err: Exception) -> None:
        with self._lock:
            self.closed = err
            self._lock.notify_all()

    def close(self) -> None:
        try:
            self.ws.close()
        finally:
            self._reader.join(5)

    def __enter__(self) -> HostClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


__all__ = ["HostClient", "HostError"]
