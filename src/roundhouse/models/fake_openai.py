"""A fake OpenAI-compatible server: real HTTP on 127.0.0.1, scripted answers.

Tests (and the acceptance step, by hand) point the real client at it, so every path of
the client is proven over a socket: completions with usage, HTTP errors with their
headers, malformed bodies, truncated answers and answers slower than the client waits.
Every request received is recorded, so a test can check what the client sent.

    with FakeOpenAI([Reply.completion('{"status": "FINISH"}')]) as server:
        settings = OpenAISettings(base_url=server.base_url, api_key="test")

By hand: python -m roundhouse.models.fake_openai --port 8765 --script answers.yaml

The script is YAML: a list of replies (or a mapping with `replies:`); each reply is one of

    - text: '{"status": "FINISH"}'           # a completion (usage optional)
      usage: {prompt_tokens: 120, completion_tokens: 30}
    - text: 'half an ans'                     # a truncated answer
      finish_reason: length
    - status: 429                             # an HTTP error, with headers and body
      headers: {Retry-After: "2"}
      message: slow down
    - malformed: true                         # a 200 whose body is not JSON
    - delay: 30                               # seconds to wait before answering
      text: late
    - cut: true                               # half the body, then a connection reset
    - endless: true                           # headers, then a body that never ends
    - text: '{"observation": "...", "thought": "..."}'   # a native tool call beside it
      tool_calls: [{name: run_shell, arguments: {command: df -h}}]

A request that finds the script empty gets a 400 saying so (never retried by a client).
"""

from __future__ import annotations

import argparse
import json
import logging
import socket
import struct
import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Self
from urllib.parse import urlsplit

import yaml

log = logging.getLogger(__name__)

PATHS = frozenset({"/v1/chat/completions", "/chat/completions"})
MALFORMED_BODY = '{"id": "chatcmpl-broken", "choices": [ {"index": 0, "mess'


@dataclass(frozen=True)
class Reply:
    """One scripted answer: a completion, an HTTP error, a malformed body, or a late answer."""

    text: str = ""
    prompt_tokens: int = 10
    completion_tokens: int = 5
    finish_reason: str = "stop"
    status: int = 200
    message: str = ""  # the error message of an error reply
    headers: Mapping[str, str] = field(default_factory=dict)
    body: str | None = None  # sent verbatim instead of the usual JSON
    delay: float = 0.0  # seconds before answering
    model: str | None = None  # default: the model the request named
    cut: bool = False  # send half the body, then reset the connection
    endless: bool = False  # send the headers, then a byte now and then, never the end
    # Native tool calls: (function name, arguments as the JSON text the API sends).
    tool_calls: tuple[tuple[str, str], ...] = ()

    @classmethod
    def completion(
        cls, text: str, prompt_tokens: int = 10, completion_tokens: int = 5, **kwargs: Any
    ) -> Reply:
        return cls(
            text=text, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens, **kwargs
        )

    @classmethod
    def error(
        cls, status: int, message: str = "", headers: Mapping[str, str] | None = None
    ) -> Reply:
        return cls(status=status, message=message or f"fake error {status}", headers=headers or {})

    @classmethod
    def tool_call(cls, name: str, arguments: Mapping[str, Any] | str, text: str = "") -> Reply:
        encoded = arguments if isinstance(arguments, str) else json.dumps(arguments)
        return cls(text=text, tool_calls=((name, encoded),), finish_reason="tool_calls")

    @classmethod
    def malformed(cls) -> Reply:
        return cls(body=MALFORMED_BODY)

    @classmethod
    def truncated(cls, text: str, prompt_tokens: int = 10, completion_tokens: int = 5) -> Reply:
        return cls.completion(text, prompt_tokens, completion_tokens, finish_reason="length")

    @classmethod
    def slow(cls, delay: float, text: str = "too late") -> Reply:
        return cls(text=text, delay=delay)

    @classmethod
    def reset_mid_body(cls, text: str = "never whole") -> Reply:
        return cls(text=text, cut=True)

    @classmethod
    def never_ending(cls) -> Reply:
        return cls(endless=True)

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> Reply:
        """One entry of a YAML script (see the module docstring)."""
        known = {"text", "usage", "finish_reason", "status", "message", "headers", "body"}
        known |= {"delay", "model", "malformed", "cut", "endless", "tool_calls"}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown reply keys {sorted(unknown)} (known: {sorted(known)})")
        if data.get("malformed"):
            return cls.malformed()
        calls = data.get("tool_calls") or []
        if not isinstance(calls, list) or not all(
            isinstance(call, Mapping) and "name" in call for call in calls
        ):
            raise ValueError("tool_calls: a list of {name: ..., arguments: {...}}")
        usage = data.get("usage") or {}
        return cls(
            text=str(data.get("text", "")),
            prompt_tokens=int(usage.get("prompt_tokens", 10)),
            completion_tokens=int(usage.get("completion_tokens", 5)),
            finish_reason=str(data.get("finish_reason", "stop")),
            status=int(data.get("status", 200)),
            message=str(data.get("message", "")),
            headers={str(k): str(v) for k, v in (data.get("headers") or {}).items()},
            body=None if data.get("body") is None else str(data["body"]),
            delay=float(data.get("delay", 0.0)),
            model=None if data.get("model") is None else str(data["model"]),
            cut=bool(data.get("cut", False)),
            endless=bool(data.get("endless", False)),
            tool_calls=tuple(
                (
                    str(call["name"]),
                    arguments
                    if isinstance(arguments := call.get("arguments", {}), str)
                    else json.dumps(arguments),
                )
                for call in calls
            ),
        )

    def _message(self, serial: int) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": self.text or None}
        if self.tool_calls:
            message["tool_calls"] = [
                _tool_call(serial, index, name, arguments)
                for index, (name, arguments) in enumerate(self.tool_calls)
            ]
        else:
            message["content"] = self.text
        return message

    def render(self, request_model: str, serial: int) -> tuple[int, dict[str, str], bytes]:
        """Status, headers and body as the real API would send them."""
        headers = {"Content-Type": "application/json", **self.headers}
        if self.body is not None:
            return self.status, headers, self.body.encode()
        if self.status != 200:
            error = {"message": self.message, "type": _error_type(self.status), "code": None}
            return self.status, headers, json.dumps({"error": error}).encode()
        payload = {
            "id": f"chatcmpl-fake{serial}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": self.model or request_model,
            "choices": [
                {
                    "index": 0,
                    "message": self._message(serial),
                    "finish_reason": self.finish_reason,
                }
            ],
            "usage": {
                "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens,
                "total_tokens": self.prompt_tokens + self.completion_tokens,
            },
        }
        return 200, headers, json.dumps(payload).encode()


def _tool_call(serial: int, index: int, name: str, arguments: str) -> dict[str, Any]:
    return {
        "id": f"call_fake{serial}_{index}",
        "type": "function",
        "function": {"name": name, "arguments": arguments},
    }


def _error_type(status: int) -> str:
    return {
        400: "invalid_request_error",
        401: "invalid_request_error",
        404: "invalid_request_error",
        429: "rate_limit_exceeded",
    }.get(status, "server_error")


@dataclass(frozen=True)
class RecordedRequest:
    path: str
    headers: dict[str, str]  # names in lower case
    body: dict[str, Any]  # the JSON the client sent ({} when it was not JSON)

    def image_urls(self) -> list[str]:
        """The image_url parts of every message, in order."""
        urls = []
        for message in self.body.get("messages", []):
            content = message.get("content")
            if isinstance(content, list):
                urls += [
                    part["image_url"]["url"] for part in content if part.get("type") == "image_url"
                ]
        return urls


def load_script(path: Path) -> list[Reply]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if isinstance(data, Mapping):
        data = data.get("replies")
    if not isinstance(data, list) or not all(isinstance(entry, Mapping) for entry in data):
        raise ValueError(f"{path}: expected a list of replies (or a mapping with 'replies:')")
    return [Reply.from_mapping(entry) for entry in data]


class FakeOpenAI:
    """The server; a context manager that starts it on a free port and stops it."""

    def __init__(self, replies: Iterable[Reply] = (), host: str = "127.0.0.1", port: int = 0):
        self._replies: deque[Reply] = deque(replies)
        self._lock = threading.Lock()
        self._stopping = threading.Event()  # wakes slow replies when the server stops
        self.requests: list[RecordedRequest] = []
        self._server = ThreadingHTTPServer((host, port), _handler_for(self))
        # Daemon threads: a slow reply the client gave up on must not hold the test.
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def push(self, *replies: Reply) -> None:
        with self._lock:
            self._replies.extend(replies)

    @property
    def remaining(self) -> int:
        with self._lock:
            return len(self._replies)

    def start(self) -> Self:
        # A short poll interval: stopping waits for at most one poll.
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def _record(self, recorded: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(recorded)

    def _next(self, recorded: RecordedRequest) -> tuple[Reply | None, int]:
        with self._lock:
            self.requests.append(recorded)
            reply = self._replies.popleft() if self._replies else None
            return reply, len(self.requests)

    def _wait(self, seconds: float) -> None:
        self._stopping.wait(seconds)


def _handler_for(fake: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, like the real API
        # Headers and body go out in two writes: without this, Nagle's algorithm and the
        # client's delayed ACK add 40 ms to every answer.
        disable_nagle_algorithm = True

        def do_POST(self) -> None:  # noqa: N802 (the name http.server calls)
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            try:
                body = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                body = {}
            headers = {name.lower(): value for name, value in self.headers.items()}
            recorded = RecordedRequest(self.path, headers, body)
            if urlsplit(self.path).path not in PATHS:
                fake._record(recorded)
                message = f"fake server: unknown path {self.path}"
                error = json.dumps({"error": {"message": message, "type": "invalid_request_error"}})
                self._send(404, {"Content-Type": "application/json"}, error.encode())
                return
            reply, serial = fake._next(recorded)
            if reply is None:
                message = f"fake server: the script has no reply left (request {serial})"
                error = json.dumps({"error": {"message": message, "type": "invalid_request_error"}})
                self._send(400, {"Content-Type": "application/json"}, error.encode())
                return
            if reply.delay:
                fake._wait(reply.delay)
            status, headers, payload = reply.render(str(body.get("model", "")), serial)
            if reply.endless:
                self._trickle(headers)
            elif reply.cut:
                self._cut(status, headers, payload)
            else:
                self._send(status, headers, payload)

        def _cut(self, status: int, headers: Mapping[str, str], payload: bytes) -> None:
            """Promise the whole body, send half, then reset the connection (RST, not FIN):
            what a proxy or a crashing server does to a client mid-answer."""
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload[: len(payload) // 2])
            self.wfile.flush()
            linger = struct.pack("ii", 1, 0)  # on, 0 s: close() sends a reset
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, linger)
            self.close_connection = True
            self.connection.close()

        def _trickle(self, headers: Mapping[str, str]) -> None:
            """A body that never ends: one space every 0.2 s (JSON allows leading blanks),
            until the client hangs up or the server stops."""
            try:
                self.send_response(200)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(1 << 30))
                self.end_headers()
                while not fake._stopping.is_set():
                    self.wfile.write(b" ")
                    self.wfile.flush()
                    fake._wait(0.2)
            except (BrokenPipeError, ConnectionResetError):
                log.debug("fake server: the client stopped waiting for the endless body")
            self.close_connection = True

        def _send(self, status: int, headers: Mapping[str, str], payload: bytes) -> None:
            try:
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                # The client gave up (its timeout passed): exactly what a slow reply tests.
                log.debug("fake server: the client closed the connection before the answer")

        def log_message(self, format: str, *args: Any) -> None:
            log.debug("fake server: " + format, *args)

    return Handler


def _iter_lines(server: FakeOpenAI) -> Iterator[str]:
    seen = 0
    while True:
        time.sleep(0.2)
        for request in server.requests[seen:]:
            yield f"{request.path} model={request.body.get('model')} left={server.remaining}"
        seen = len(server.requests)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="A fake OpenAI-compatible server.")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--script", type=Path, required=True, help="YAML list of replies")
    args = parser.parse_args(argv)
    server = FakeOpenAI(load_script(args.script), port=args.port).start()
    print(f"fake OpenAI server on {server.base_url} with {server.remaining} replies", flush=True)
    try:
        for line in _iter_lines(server):
            print(line, flush=True)
    except KeyboardInterrupt:
        pass  # Ctrl-C is how this server is meant to stop
    finally:
        server.stop()


if __name__ == "__main__":
    main()
