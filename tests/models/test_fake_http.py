"""The skeleton every fake server is built on: its script, its record, the methods it
serves, and the transport faults an answer asks for (their clients' side is tested in
test_openai_client.py)."""

from __future__ import annotations

import socket
import time
from typing import Any

import httpx
import pytest

from roundhouse.models.fake_http import Answer, FakeServer, Received, Refused, parse_json


class Echo(FakeServer[str]):
    """Answers each POST with the next word of its script; refuses a body without `ok`."""

    name = "fake echo"
    methods = frozenset({"POST"})

    def answer(self, method: str, path: str, headers: dict[str, str], raw: bytes) -> Answer:
        body: Any = parse_json(raw)
        if not isinstance(body, dict) or not body.get("ok"):
            refused = Refused(400, "no ok", {"error": "no ok"})
            self.record(Received(method, path, headers, body, str(refused)))
            return Answer(refused.status, refused.body)
        self.record(Received(method, path, headers, body, None))
        word = self.take()
        if word == "late":
            return Answer(200, {"word": word}, delay=0.3)
        if word == "cut":
            return Answer(200, {"word": word * 100}, delivery="cut")
        return Answer(200 if word else 400, {"word": word}, {"x-left": str(self.remaining)})


def test_answers_follow_the_script_and_every_request_is_recorded() -> None:
    with Echo(["one", "two"]) as echo:
        first = httpx.post(f"{echo.base_url}/any", json={"ok": True})
        bad = httpx.post(f"{echo.base_url}/any", content=b"not json")
        echo.push("three")
        second = httpx.post(f"{echo.base_url}/any", json={"ok": True}, headers={"k": "v"})
    assert first.json() == {"word": "one"} and first.headers["x-left"] == "1"
    assert first.headers["content-type"] == "application/json"
    assert bad.status_code == 400 and second.json() == {"word": "two"}
    assert echo.remaining == 1 and echo.refusals == ["no ok"]
    assert [(r.method, r.path, r.body) for r in echo.received] == [
        ("POST", "/any", {"ok": True}),
        ("POST", "/any", None),
        ("POST", "/any", {"ok": True}),
    ]
    assert echo.received[-1].headers["k"] == "v"


def test_a_method_it_does_not_serve_is_501_and_not_recorded() -> None:
    with Echo() as echo:
        response = httpx.get(f"{echo.base_url}/any")
    assert response.status_code == 501 and echo.received == []


def test_a_late_answer_waits_and_a_cut_one_breaks_the_connection() -> None:
    with Echo(["late", "cut"]) as echo:
        started = time.monotonic()
        assert httpx.post(echo.base_url, json={"ok": True}).json() == {"word": "late"}
        assert time.monotonic() - started >= 0.3
        with pytest.raises(httpx.HTTPError):
            httpx.post(echo.base_url, json={"ok": True})


def test_stopping_frees_the_port() -> None:
    echo = Echo().start()
    port = echo.port
    echo.stop()
    with socket.socket() as again:
        again.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        again.bind(("127.0.0.1", port))
