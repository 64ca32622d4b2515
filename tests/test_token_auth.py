"""The one token gate of `serve --http` (MCP) and `serve --osworld` (endpoints.TokenAuth):
a request passes with the token as a bearer token or as Basic auth's password, and gets a
401 otherwise; a server off loopback needs a token at all."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from roundhouse.endpoints import MCP_TOKEN_ENV, TokenAuth, token_problem

TOKEN = "s3cret"


async def _ask(headers: dict[bytes, bytes], scope_type: str = "http") -> list[dict[str, Any]]:
    sent: list[dict[str, Any]] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b""}

    async def send(message: Any) -> None:
        sent.append(dict(message))

    scope = {"type": scope_type, "headers": list(headers.items())}
    await TokenAuth(app, TOKEN)(scope, receive, send)
    return sent


def _basic(user: str, password: str) -> bytes:
    return b"Basic " + base64.b64encode(f"{user}:{password}".encode())


@pytest.mark.parametrize(
    ("header", "status"),
    [
        (b"Bearer s3cret", 200),
        (_basic("roundhouse", TOKEN), 200),
        (None, 401),
        (b"Bearer wrong", 401),
        (b"Bearer", 401),
        (_basic("roundhouse", "wrong"), 401),
        (b"Basic not-base64!", 401),
        (b"s3cret", 401),
    ],
)
async def test_a_request_passes_only_with_the_token(header: bytes | None, status: int) -> None:
    sent = await _ask({b"authorization": header} if header is not None else {})
    assert sent[0]["status"] == status
    if status == 401:
        assert sent[1]["body"] == b"missing or wrong token"
        assert (b"www-authenticate", b'Bearer, Basic realm="roundhouse"') in sent[0]["headers"]


async def test_lifespan_messages_are_not_gated() -> None:
    assert (await _ask({}, scope_type="lifespan"))[0]["status"] == 200


def test_off_loopback_a_token_is_required() -> None:
    assert token_problem("127.0.0.1", None) is None and token_problem("::1", None) is None
    assert token_problem("0.0.0.0", TOKEN) is None
    problem = token_problem("0.0.0.0", None)
    assert problem is not None and MCP_TOKEN_ENV in problem and "0.0.0.0" in problem
    with pytest.raises(ValueError, match="needs a token"):
        TokenAuth(lambda *_: None, "")  # type: ignore[arg-type, return-value]
