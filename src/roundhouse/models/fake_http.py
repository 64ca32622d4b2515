"""What every fake model server shares: real HTTP on 127.0.0.1, a script of turns taken in
order, every request recorded (with why it was refused), a context manager, the key it
demands, the loop a fake runs by hand (`python -m roundhouse.models.X.fake --port N
--script FILE`, script_arguments), and the decoding of a base64 image a request sends
(decoded_image: each fake words what is wrong with it as its API does).

A fake fills in one method, `answer(method, path, headers, raw)`, and returns an `Answer`;
this module does the sockets, the JSON and the bookkeeping, and the transport's faults an
answer may ask for (late, cut off mid-body, never ending). Keys stay in memory: the
recorded headers are never logged or printed.
"""

from __future__ import annotations

import argparse
import base64
import binascii
import io
import json
import logging
import re
import socket
import struct
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Generic, Literal, Self, TypeVar
from urllib.parse import urlsplit

from PIL import Image, UnidentifiedImageError

from roundhouse.config import ConfigError, read_yaml

log = logging.getLogger(__name__)

T = TypeVar("T")


@dataclass(frozen=True)
class Answer:
    """What a fake sends back: a status, a JSON body (or `raw` bytes, sent as they are),
    extra headers; and how it goes out: after `delay` seconds, whole, "cut" (half the
    body, then a connection reset) or "endless" (the headers, then a byte now and then)."""

    status: int
    body: Any = None
    headers: Mapping[str, str] = field(default_factory=dict)
    raw: bytes | None = None
    delay: float = 0.0
    delivery: Literal["whole", "cut", "endless"] = "whole"

    def payload(self) -> bytes:
        return self.raw if self.raw is not None else json.dumps(self.body).encode()


@dataclass(frozen=True)
class Scripted:
    """What every scripted turn may say beside its answer: an HTTP error status instead
    (with its headers: retry-after), and the usage the answer reports."""

    status: int = 200
    headers: Mapping[str, str] = field(default_factory=dict)
    usage: Mapping[str, Any] = field(default_factory=dict)

    @staticmethod
    def read(data: Mapping[str, Any]) -> dict[str, Any]:
        """These fields of a script's turn, as the turn's constructor takes them."""
        return {
            "status": int(data.get("status", 200)),
            "headers": {str(k): str(v) for k, v in (data.get("headers") or {}).items()},
            "usage": dict(data.get("usage") or {}),
        }


@dataclass(frozen=True)
class Received:
    """One request as the fake saw it."""

    method: str
    path: str
    headers: dict[str, str]  # names in lower case; in memory only, never logged
    body: Any  # the parsed JSON, or None when the body was not JSON
    refused: str | None  # why it was refused, or None


class Refused(Exception):
    """A request the vendor would refuse: the status and the body it would answer."""

    def __init__(self, status: int, message: str, body: Any) -> None:
        super().__init__(message)
        self.status = status
        self.body = body


def parse_json(raw: bytes) -> Any:
    """The request's JSON, or None when it is not JSON."""
    try:
        return json.loads(raw or b"{}")
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None


def load_turns(path: Path, key: str, read: Callable[[Mapping[str, Any]], T]) -> list[T]:
    """A YAML or JSON script: a list of turns, or a mapping with the list under `key`."""
    try:
        data = read_yaml(path, f"{path}: the script")  # YAML reads JSON too
    except ConfigError as error:
        raise ValueError(str(error)) from None
    if isinstance(data, Mapping):
        data = data.get(key)
    if not isinstance(data, list) or not all(isinstance(entry, Mapping) for entry in data):
        raise ValueError(f"{path}: expected a list of turns (or a mapping with '{key}:')")
    return [read(entry) for entry in data]


class FakeServer(Generic[T]):
    """The server; a context manager that starts it on a free port and stops it.

    A subclass gives `name` and `answer`; `take` hands it the next turn of its script."""

    name = "fake server"
    url_suffix = ""  # what the vendor's base URL ends with, e.g. "/v1"
    methods = frozenset({"GET", "POST"})  # others get 501, unrecorded, as http.server's
    unit = "turns"  # what the banner of serve_by_hand counts

    def __init__(
        self,
        turns: Iterable[T] = (),
        *,
        key: str | None = "test-key",
        host: str = "127.0.0.1",
        port: int = 0,
    ):
        self.key = key  # what the API demands (None: any, or none)
        self._turns: deque[T] = deque(turns)
        self._lock = threading.RLock()
        self._stopping = threading.Event()
        self.received: list[Received] = []
        self._server = ThreadingHTTPServer((host, port), _handler_for(self))
        # Daemon threads: a request the client gave up on must not hold the test.
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    # -- what a subclass fills in

    def answer(self, method: str, path: str, headers: dict[str, str], raw: bytes) -> Answer:
        raise NotImplementedError

    # -- the script and the record

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}{self.url_suffix}"

    @property
    def remaining(self) -> int:
        with self._lock:
            return len(self._turns)

    @property
    def refusals(self) -> list[str]:
        with self._lock:
            return [r.refused for r in self.received if r.refused is not None]

    def push(self, *turns: T) -> None:
        with self._lock:
            self._turns.extend(turns)

    def record(self, received: Received) -> int:
        """Keep a request; its number, from 1."""
        with self._lock:
            self.received.append(received)
            if received.refused is not None:
                log.info("%s refused a request: %s", self.name, received.refused)
            return len(self.received)

    def take(self) -> T | None:
        """The next turn of the script, or None when it is spent."""
        with self._lock:
            return self._turns.popleft() if self._turns else None

    def wait(self, seconds: float) -> None:
        """Sleep, but wake when the server stops."""
        self._stopping.wait(seconds)

    @property
    def stopping(self) -> bool:
        return self._stopping.is_set()

    # -- life

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

    def serve_by_hand(self, describe: Callable[[Received], str]) -> None:
        """Run until Ctrl-C, printing a line per request (`describe` says what, and the
        turns left follow; never a key)."""
        self.start()
        print(f"{self.name} on {self.base_url} with {self.remaining} {self.unit}", flush=True)
        seen = 0
        try:
            while True:
                time.sleep(0.2)
                with self._lock:
                    fresh = self.received[seen:]
                for received in fresh:
                    print(f"{describe(received)} left={self.remaining}", flush=True)
                seen += len(fresh)
        except KeyboardInterrupt:
            pass  # Ctrl-C is how this server is meant to stop
        finally:
            self.stop()


def script_arguments(
    description: str, port: int, key: str | None = "test-key"
) -> argparse.ArgumentParser:
    """The command line of a fake run by hand: --port, --key and --script (YAML or JSON)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--port", type=int, default=port)
    parser.add_argument("--key", default=key, help="the key the server demands")
    parser.add_argument("--script", type=Path, required=True, help="YAML or JSON list of turns")
    return parser


def describe_model(received: Received) -> str:
    """A request as a fake run by hand prints it: the model asked for, and any refusal."""
    body = received.body if isinstance(received.body, dict) else {}
    return f"model={body.get('model')} refused={received.refused}"


# A data URL of base64 data (OpenAI's and vLLM's image_url): its media type and its data.
DATA_URL = re.compile(r"^data:(?P<media>[\w.+-]+/[\w.+-]+);base64,(?P<data>.*)$", re.DOTALL)


class ImageProblem(ValueError):
    """What is wrong with an image a request sent: `kind` is "url" (no data URL), "media"
    (of a type the API takes none of), "base64" (the data is not), "unreadable" (no
    image), or "mismatch" (an image of another format than it says)."""

    def __init__(
        self,
        kind: Literal["url", "media", "base64", "unreadable", "mismatch"],
        found: str = "",
    ):
        super().__init__(kind)
        self.kind = kind
        self.found = found  # the media type given, or the format the data holds
        self.media = ""  # the media type the data URL says (data_url_image)


def data_url_image(url: Any, formats: Mapping[str, str]) -> tuple[str, tuple[int, int]]:
    """The media type and the size of a data URL's image (one of `formats`); ImageProblem
    where it is not one."""
    matched = DATA_URL.match(url) if isinstance(url, str) else None
    if matched is None:
        raise ImageProblem("url")
    media = matched["media"].lower()
    if media not in formats:
        raise ImageProblem("media", media)
    try:
        return media, decoded_image(matched["data"], media, formats)[0]
    except ImageProblem as problem:
        problem.media = media
        raise


def decoded_image(data: Any, media: str, formats: Mapping[str, str]) -> tuple[tuple[int, int], int]:
    """The size and the byte length of base64 `data` said to be of `media` (one of
    `formats`, media type -> PIL format); ImageProblem where it is not that."""
    try:
        raw = base64.b64decode(data if isinstance(data, str | bytes) else "", validate=True)
    except (binascii.Error, ValueError):
        raise ImageProblem("base64") from None
    try:
        with Image.open(io.BytesIO(raw)) as image:
            image.verify()
            found, (width, height) = image.format, image.size
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError):
        raise ImageProblem("unreadable") from None
    if found != formats[media]:
        raise ImageProblem("mismatch", str(found))
    return (int(width), int(height)), len(raw)


def _handler_for(fake: FakeServer[Any]) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, like the real APIs
        # Headers and body go out in two writes: without this, Nagle's algorithm and the
        # client's delayed ACK add 40 ms to every answer.
        disable_nagle_algorithm = True

        def _serve(self) -> None:
            if self.command not in fake.methods:
                self.send_error(501, f"Unsupported method ({self.command!r})")
                return
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            headers = {name.lower(): value for name, value in self.headers.items()}
            answer = fake.answer(self.command, self.path, headers, raw)
            if answer.delay:
                fake.wait(answer.delay)
            if answer.delivery == "endless":
                self._trickle(answer)
            elif answer.delivery == "cut":
                self._cut(answer)
            else:
                self._send(answer)

        do_GET = do_POST = _serve  # noqa: N815 (the names http.server calls)

        def _head(self, answer: Answer, length: int) -> None:
            self.send_response(answer.status)
            for name, value in {"Content-Type": "application/json", **answer.headers}.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(length))
            self.end_headers()

        def _send(self, answer: Answer) -> None:
            payload = answer.payload()
            try:
                self._head(answer, len(payload))
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                # The client gave up (its timeout passed): what a slow answer tests.
                log.debug("%s: the client closed the connection before the answer", fake.name)

        def _cut(self, answer: Answer) -> None:
            """Promise the whole body, send half, then reset the connection (RST, not FIN):
            what a proxy or a crashing server does to a client mid-answer."""
            payload = answer.payload()
            self._head(answer, len(payload))
            self.wfile.write(payload[: len(payload) // 2])
            self.wfile.flush()
            linger = struct.pack("ii", 1, 0)  # on, 0 s: close() sends a reset
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, linger)
            self.close_connection = True
            self.connection.close()

        def _trickle(self, answer: Answer) -> None:
            """A body that never ends: one space every 0.2 s (JSON allows leading blanks),
            until the client hangs up or the server stops."""
            try:
                self._head(answer, 1 << 30)
                while not fake.stopping:
                    self.wfile.write(b" ")
                    self.wfile.flush()
                    fake.wait(0.2)
            except (BrokenPipeError, ConnectionResetError):
                log.debug("%s: the client stopped waiting for the endless body", fake.name)
            self.close_connection = True

        def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
            # The path without its query: a key may ride in it (Gemini's ?key=).
            log.debug("%s: %s %s %s", fake.name, self.command, urlsplit(self.path).path, code)

        def log_message(self, format: str, *args: Any) -> None:
            log.debug(f"{fake.name}: " + format, *args)

    return Handler
