"""Who may connect: whoever holds the host's token, and never a web page.

The token reaches the host through the environment (`EMPO2_HOST_TOKEN`), never the command line
(where `ps` shows it to every user), and reaches the host again on the WebSocket upgrade as
`Authorization: Bearer <token>`: the `ws` npm client and Python's `websockets` send it with a
`headers` option, while a browser's WebSocket API cannot set it at all. It is compared with
`hmac.compare_digest`, so the time a refusal takes says nothing about how much of a guess was
right. A request carrying an `Origin` header comes from a browser (a native client sends none):
it is refused with 403 whatever its token, so no web page, not even one served from localhost
or reached through DNS rebinding, can drive a local trainer.
"""

from __future__ import annotations

import hmac
import http
import logging

log = logging.getLogger("empo2.server.auth")

TOKEN_ENV = "EMPO2_HOST_TOKEN"
MIN_TOKEN_LENGTH = 16


class Gate:
    """The `process_request` hook of the WebSocket server: refuses before the upgrade."""

    def __init__(self, token: str | None):
        self._token = token.encode("utf-8") if token is not None else None

    def __call__(self, connection, request):
        headers = request.headers
        if headers.get_all("Origin"):
            log.warning("refused a connection that carries a browser Origin header")
            return connection.respond(http.HTTPStatus.FORBIDDEN, "Browser origins may not connect to an EMPO2 host.\n")
        if self._token is None:
            return None
        if not self._accepts(headers.get_all("Authorization")):
            log.warning("refused a connection without the right token")
            response = connection.respond(
                http.HTTPStatus.UNAUTHORIZED, "Missing or wrong token (Authorization: Bearer <token>).\n"
            )
            response.headers["WWW-Authenticate"] = 'Bearer realm="empo2-host"'
            return response
        return None

    def _accepts(self, values: list[str]) -> bool:
        if len(values) != 1:
            return False
        scheme, _, credential = values[0].strip().partition(" ")
        if scheme.lower() != "bearer":
            return False
        given = credential.strip().encode("utf-8", "surrogateescape")
        return hmac.compare_digest(given, self._token)


def check_token(token: str | None, insecure_no_token: bool) -> str | None:
    """The token to require, or a one-sentence ValueError saying what is wrong."""
    if token is None or token == "":
        if insecure_no_token:
            return None
        raise ValueError(
            f"set {TOKEN_ENV} to a random token of at least {MIN_TOKEN_LENGTH} "
            f"characters (or pass --insecure-no-token for a local experiment)"
        )
    if len(token) < MIN_TOKEN_LENGTH:
        raise ValueError(f"{TOKEN_ENV} must be at least {MIN_TOKEN_LENGTH} characters long")
    return token


__all__ = ["Gate", "TOKEN_ENV", "check_token"]
