"""The watch page's gate: every request carries the page's token in its URL (`?t=TOKEN`).

The token is random (`new_token`), printed in the URL the person opens, and the page's
script carries it on in its own requests (its WebSockets too, which a browser cannot give
an Authorization header). A request without it is answered 403 (a WebSocket is closed
before it opens). Off loopback `watch` is wrapped in endpoints.TokenAuth as well, as
`serve --http` is: the browser then asks for the token as the password of HTTP Basic auth.
"""

from __future__ import annotations

import hmac
import secrets
from urllib.parse import parse_qs

from roundhouse.endpoints import ASGIApp, Receive, Scope, Send

TOKEN_PARAMETER = "t"


def new_token() -> str:
    return secrets.token_urlsafe(24)


class UrlToken:
    """ASGI middleware: HTTP requests and WebSockets without `?t=TOKEN` are refused."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        if not token:
            raise ValueError("UrlToken needs a token")
        self.app = app
        self._token = token.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket") and not self.allowed(scope):
            if scope["type"] == "websocket":
                await receive()  # websocket.connect
                await send({"type": "websocket.close", "code": 1008})
                return
            await send(
                {
                    "type": "http.response.start",
                    "status": 403,
                    "headers": [(b"content-type", b"text/plain; charset=utf-8")],
                }
            )
            await send({"type": "http.response.body", "body": b"this page needs its token"})
            return
        await self.app(scope, receive, send)

    def allowed(self, scope: Scope) -> bool:
        query = parse_qs(bytes(scope.get("query_string") or b"").decode("latin-1"))
        given = query.get(TOKEN_PARAMETER, [""])[0].encode()
        return hmac.compare_digest(given, self._token)
