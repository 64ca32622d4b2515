"""Which addresses stay on this machine, and the token a server bound elsewhere requires.
Light on purpose: the CLI needs it at start-up, before (or without) loading the MCP or
OpenAI SDKs; the token gate is plain ASGI, for `serve --http` (MCP) and `serve --osworld`
alike."""

from __future__ import annotations

import base64
import binascii
import hmac
import ipaddress
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import urlsplit

MCP_TOKEN_ENV = "RH_MCP_TOKEN"  # the token of `roundhouse serve` off loopback
# "1": the model clients refuse any endpoint that is not on this machine (the tests set it)
LOOPBACK_ENV = "RH_LOOPBACK_ONLY"

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def is_loopback_host(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name: it may resolve to anything


def is_loopback_url(url: str) -> bool:
    return is_loopback_host(urlsplit(url).hostname or "")


def token_problem(host: str, token: str | None) -> str | None:
    """Why a server must not listen on `host` with this token (None: it may): off loopback,
    every request has to carry a token."""
    if token or is_loopback_host(host):
        return None
    return (
        f"refusing to serve on {host} without a token: set {MCP_TOKEN_ENV} (clients then "
        "send 'Authorization: Bearer <token>'), or bind 127.0.0.1"
    )


class TokenAuth:
    """ASGI middleware: an HTTP request must carry the token, as `Authorization: Bearer
    TOKEN`, or as the password of HTTP Basic auth (what `requests` sends from a ~/.netrc:
    OSWorld's controllers set no header of their own). Anything else is answered 401."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        if not token:
            raise ValueError("TokenAuth needs a token")
        self.app = app
        self._token = token.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not self.allowed(dict(scope.get("headers") or [])):
            await send(
                {
                    "type": "http.response.start",
                    "status": 401,
                    "headers": [
                        (b"content-type", b"text/plain; charset=utf-8"),
                        (b"www-authenticate", b'Bearer, Basic realm="roundhouse"'),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": b"missing or wrong token"})
            return
        await self.app(scope, receive, send)

    def allowed(self, headers: dict[bytes, bytes]) -> bool:
        scheme, _, value = headers.get(b"authorization", b"").partition(b" ")
        if scheme.lower() == b"bearer":
            return hmac.compare_digest(value.strip(), self._token)
        if scheme.lower() == b"basic":
            try:
                _user, _, password = base64.b64decode(value.strip(), validate=True).partition(b":")
            except (binascii.Error, ValueError):
                return False
            return hmac.compare_digest(password, self._token)
        return False
