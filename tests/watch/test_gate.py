"""The watch page's gate, without a desktop: the URL token on every request and WebSocket,
and the bearer token off loopback (a still screen in memory stands in for the desktop)."""

from __future__ import annotations

import base64

import pytest
from PIL import Image
from starlette.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from roundhouse.watch.frames import FrameSource
from roundhouse.watch.gate import new_token
from roundhouse.watch.server import Watched, make_app, page_url


class StillScreen:
    size = (64, 40)

    def desktop(self) -> Image.Image:
        return Image.new("RGB", self.size, (200, 30, 30))


def watched() -> Watched:
    return Watched(FrameSource(StillScreen()))  # type: ignore[arg-type]


def test_every_request_needs_the_url_token() -> None:
    token = new_token()
    client = TestClient(make_app(watched(), token))
    assert client.get("/").status_code == 403
    assert client.get("/?t=wrong").status_code == 403
    assert client.get("/frame.jpg").status_code == 403
    assert client.post("/stop").status_code == 403
    page = client.get(f"/?t={token}")
    assert page.status_code == 200 and 'id="screen"' in page.text
    frame = client.get(f"/frame.jpg?t={token}")
    assert frame.status_code == 200 and frame.content[:2] == b"\xff\xd8"  # a JPEG
    with pytest.raises(WebSocketDisconnect), client.websocket_connect("/frames") as socket:
        socket.receive_bytes()
    with client.websocket_connect(f"/frames?t={token}") as socket:
        assert socket.receive_bytes()[:2] == b"\xff\xd8"


def test_off_loopback_a_bearer_token_too() -> None:
    token, bearer = new_token(), "s3cret"
    client = TestClient(make_app(watched(), token, bearer=bearer))
    assert client.get(f"/?t={token}").status_code == 401
    basic = base64.b64encode(b"person:s3cret").decode()
    asked = client.get(f"/?t={token}", headers={"Authorization": f"Basic {basic}"})
    assert asked.status_code == 200
    assert client.get("/", headers={"Authorization": "Bearer s3cret"}).status_code == 403


def test_the_url_names_loopback_and_the_token() -> None:
    assert page_url("127.0.0.1", 8080, "abc") == "http://127.0.0.1:8080/?t=abc"
    assert page_url("::1", 8080, "abc") == "http://[::1]:8080/?t=abc"
