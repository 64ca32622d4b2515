"""The watch page without a desktop: the URL token on every request and WebSocket, the
bearer token off loopback (a still screen in memory stands in for the desktop), the input
the page may send, and the feed a late page is shown."""

from __future__ import annotations

import asyncio
import base64

import pytest
from PIL import Image
from starlette.testclient import TestClient
from starlette.websockets import WebSocketDisconnect
from typer.testing import CliRunner

from roundhouse.cli import watch as _watch  # noqa: F401  (registers `watch`)
from roundhouse.cli.app import app
from roundhouse.endpoints import MCP_TOKEN_ENV
from roundhouse.watch.control import PageClick, parse_input
from roundhouse.watch.feed import Feed
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


def test_watch_refuses_to_bind_off_loopback_without_a_bearer_token(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(MCP_TOKEN_ENV, raising=False)
    done = CliRunner().invoke(app, ["watch", "virtual", "--host", "0.0.0.0"])
    assert done.exit_code == 1
    assert "refusing to serve on 0.0.0.0 without a token" in done.output


def test_the_page_sends_only_input_it_can_have_sent() -> None:
    assert parse_input({"type": "click", "x": 10, "y": 20}) == PageClick(type="click", x=10, y=20)
    assert parse_input({"type": "keys", "keys": "ctrl+s"}) is not None
    for odd in ({"type": "run_shell", "command": "rm -rf /"}, {"type": "click", "x": "a"}, [1]):
        assert parse_input(odd) is None


async def test_a_page_opened_late_is_shown_the_run_from_its_start() -> None:
    feed = Feed()
    feed.add({"kind": "step", "step": 1})
    feed.add({"kind": "step", "step": 2})
    following = feed.follow()
    assert [await anext(following), await anext(following)] == [
        {"kind": "step", "step": 1},
        {"kind": "step", "step": 2},
    ]
    waiting = asyncio.ensure_future(anext(following))
    await asyncio.sleep(0)
    assert not waiting.done()
    feed.add({"kind": "round", "state": "FINISH"})
    assert await asyncio.wait_for(waiting, 1) == {"kind": "round", "state": "FINISH"}
    await following.aclose()
