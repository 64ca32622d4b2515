"""A fake Anthropic Messages API: real HTTP on 127.0.0.1, scripted answers, and the
refusals the real API gives, so that a client that would be refused there is refused here.

Written from the API's documentation, apart from the client (it shares no code with
tools.py or client.py): every request is checked, and the first problem is answered as
the API answers it (400 invalid_request_error, 401 authentication_error):

- x-api-key is the key the fake was given; anthropic-version is 2023-06-01;
- max_tokens and model are given; messages alternate, from the user;
- the computer tool's version is one the model takes, and anthropic-beta names its beta;
  custom tools have unique names and an object input_schema;
- display_width_px x display_height_px is the size of the last screenshot sent, and no
  image is over 1568 pixels on its long side;
- every tool_use of an assistant message is answered by a tool_result in the next user
  message, and every tool_result answers a tool_use of the message before it.

    with FakeAnthropic([Turn(actions=[{"action": "type", "text": "hi"}]), Turn(text="done")],
                       key="test") as fake:
        ...  # ANTHROPIC_BASE_URL=fake.base_url, ANTHROPIC_API_KEY=test

By hand: python -m roundhouse.models.anthropic.fake --port 8766 --script turns.yaml

The script is YAML or JSON: a list of turns (or a mapping with `turns:`), each one of

    - actions: [{action: left_click, coordinate: [100, 200]}]   # tool_use blocks
      text: "I click Save"                                       # optional text beside
    - text: "The file is saved."                                 # a final answer
    - status: 529                                                # an HTTP error
      headers: {retry-after: "0"}
    - text: "I cannot help with that."                           # a refusal
      stop_reason: refusal
    - calls: [{name: launch_application, input: {name: gedit}}]  # a custom tool's call

Each turn may give `usage:` (input_tokens, output_tokens, cache_read_input_tokens,
cache_creation_input_tokens). A valid request that finds the script empty gets a 400.
"""

from __future__ import annotations

import argparse
import base64
import binascii
import json
import logging
import re
import struct
import threading
import time
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Self

import yaml

log = logging.getLogger(__name__)

VERSION = "2023-06-01"
TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
LONG_SIDE = 1568
# Tool type → its beta header, and the models that take it (by name prefix), as the
# documentation's table of computer-use models lists them.
TOOLS: dict[str, tuple[str, tuple[str, ...]]] = {
    "computer_20251124": (
        "computer-use-2025-11-24",
        ("claude-opus-4-5", "claude-opus-4-6", "claude-opus-4-7", "claude-sonnet-4-6"),
    ),
    "computer_20250124": (
        "computer-use-2025-01-24",
        (
            "claude-sonnet-4-5",
            "claude-haiku-4-5",
            "claude-opus-4-1",
            "claude-opus-4-2025",
            "claude-sonnet-4-2025",
            "claude-3-7-sonnet",
        ),
    ),
    "computer_20241022": ("computer-use-2024-10-22", ("claude-3-5-sonnet",)),
}


@dataclass(frozen=True)
class Turn:
    """One scripted answer."""

    actions: tuple[dict[str, Any], ...] = ()
    calls: tuple[dict[str, Any], ...] = ()  # custom tools' calls: {name, input}
    text: str = ""
    stop_reason: str | None = None  # default: tool_use with actions, else end_turn
    status: int = 200
    headers: Mapping[str, str] = field(default_factory=dict)
    usage: Mapping[str, int] = field(default_factory=dict)

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> Turn:
        return cls(
            actions=tuple(data.get("actions") or ()),
            calls=tuple(data.get("calls") or ()),
            text=str(data.get("text", "")),
            stop_reason=data.get("stop_reason"),
            status=int(data.get("status", 200)),
            headers=dict(data.get("headers") or {}),
            usage=dict(data.get("usage") or {}),
        )

    def render(self, model: str, serial: int) -> tuple[int, dict[str, str], dict[str, Any]]:
        if self.status != 200:
            kind = {429: "rate_limit_error", 529: "overloaded_error"}.get(self.status, "api_error")
            error = {"type": "error", "error": {"type": kind, "message": f"scripted {self.status}"}}
            return self.status, dict(self.headers), error
        content: list[dict[str, Any]] = []
        if self.text:
            content.append({"type": "text", "text": self.text})
        uses = [("computer", action) for action in self.actions]
        uses += [(str(call["name"]), dict(call.get("input") or {})) for call in self.calls]
        for number, (name, given) in enumerate(uses, 1):
            use_id = f"toolu_fake_{serial}_{number}"
            content.append({"type": "tool_use", "id": use_id, "name": name, "input": given})
        stop = self.stop_reason or ("tool_use" if uses else "end_turn")
        usage = {"input_tokens": 1000, "output_tokens": 50, **self.usage}
        message = {
            "id": f"msg_fake_{serial}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": usage,
        }
        return 200, dict(self.headers), message


def load_script(path: Path) -> list[Turn]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))  # YAML reads JSON too
    if isinstance(data, Mapping):
        data = data.get("turns")
    if not isinstance(data, list) or not all(isinstance(entry, Mapping) for entry in data):
        raise ValueError(f"{path}: expected a list of turns (or a mapping with 'turns:')")
    return [Turn.from_mapping(entry) for entry in data]


# ------------------------------------------------------------------ the checks


class Refused(Exception):
    def __init__(self, status: int, kind: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.kind = kind


def _invalid(message: str) -> Refused:
    return Refused(400, "invalid_request_error", message)


def check_request(headers: Mapping[str, str], body: Any, key: str) -> None:
    """Refused with the first problem the API would answer this request with."""
    if headers.get("x-api-key") != key:
        raise Refused(401, "authentication_error", "invalid x-api-key")
    if headers.get("anthropic-version") != VERSION:
        raise _invalid(
            f"anthropic-version: expected {VERSION}, got {headers.get('anthropic-version')!r}"
        )
    if not isinstance(body, dict):
        raise _invalid("the body is not a JSON object")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise _invalid("model: field required")
    if not isinstance(body.get("max_tokens"), int) or body["max_tokens"] < 1:
        raise _invalid("max_tokens: field required")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise _invalid("messages: at least one message is required")
    display = _check_tool(body.get("tools"), model, headers.get("anthropic-beta", ""))
    sizes = _check_messages(messages)
    if display is not None:
        if not sizes:
            raise _invalid("the computer tool is declared but no screenshot was sent")
        if sizes[-1] != display:
            raise _invalid(
                f"display_width_px x display_height_px is {display[0]}x{display[1]}, but the "
                f"last screenshot sent is {sizes[-1][0]}x{sizes[-1][1]}"
            )


def _check_tool(tools: Any, model: str, beta: str) -> tuple[int, int] | None:
    if tools is None:
        return None
    if not isinstance(tools, list):
        raise _invalid("tools: must be a list")
    display = None
    names: set[str] = set()
    for number, tool in enumerate(tools):
        if not isinstance(tool, dict):
            raise _invalid(f"tools.{number}: must be an object")
        name = tool.get("name")
        if not isinstance(name, str) or not TOOL_NAME.fullmatch(name):
            raise _invalid(f"tools.{number}.name: must match {TOOL_NAME.pattern}")
        if name in names:
            raise _invalid(f"tools: tool names must be unique ({name!r} twice)")
        names.add(name)
        kind = tool.get("type")
        if kind in (None, "custom"):
            schema = tool.get("input_schema")
            if not isinstance(schema, dict) or schema.get("type") != "object":
                raise _invalid(f"tools.{number}.input_schema: a JSON schema of type object")
            continue
        if not isinstance(kind, str) or not kind.startswith("computer_"):
            raise _invalid(f"tools.{number}: this fake knows custom and computer tools only")
        if kind not in TOOLS:
            raise _invalid(f"tools: unknown tool type {kind!r}")
        needed, models = TOOLS[kind]
        if not model.startswith(models):
            raise _invalid(f"the model {model} does not support the tool type {kind}")
        betas = [part.strip() for part in beta.split(",")]
        if needed not in betas:
            raise _invalid(f"the tool type {kind} needs the beta header {needed} (got {beta!r})")
        if name != "computer":
            raise _invalid("the computer tool must be named 'computer'")
        width, height = tool.get("display_width_px"), tool.get("display_height_px")
        if not isinstance(width, int) or not isinstance(height, int) or width < 1 or height < 1:
            raise _invalid("display_width_px and display_height_px must be positive integers")
        display = (width, height)
    return display


def _check_messages(messages: list[Any]) -> list[tuple[int, int]]:
    """The sizes of the images sent, in order; refused where roles or tool ids go wrong."""
    sizes: list[tuple[int, int]] = []
    asked: set[str] = set()  # the tool_use ids of the assistant message before
    for number, message in enumerate(messages):
        role = message.get("role") if isinstance(message, dict) else None
        if role != ("user" if number % 2 == 0 else "assistant"):
            raise _invalid(f"messages.{number}: roles must alternate, from the user")
        content = message["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if not isinstance(blocks, list):
            raise _invalid(f"messages.{number}.content: must be a string or a list")
        if role == "assistant":
            asked = {b["id"] for b in blocks if isinstance(b, dict) and b.get("type") == "tool_use"}
            continue
        answered = set()
        for block in blocks:
            if block.get("type") == "tool_result":
                use_id = block.get("tool_use_id")
                if use_id not in asked:
                    raise _invalid(
                        f"messages.{number}: unexpected tool_use_id {use_id!r} in tool_result "
                        "blocks: each tool_result must answer a tool_use of the message before"
                    )
                answered.add(use_id)
                inner = block.get("content")
                for part in inner if isinstance(inner, list) else ():
                    sizes += _image_size(part, number)
            sizes += _image_size(block, number)
        missing = asked - answered
        if missing:
            raise _invalid(
                f"messages.{number}: tool_use ids were found without tool_result blocks "
                f"immediately after: {', '.join(sorted(missing))}"
            )
        asked = set()
    if messages and messages[-1].get("role") != "user":
        raise _invalid("the last message must be the user's")
    return sizes


def _image_size(block: Any, number: int) -> list[tuple[int, int]]:
    if not isinstance(block, dict) or block.get("type") != "image":
        return []
    source = block.get("source") or {}
    if source.get("type") != "base64" or source.get("media_type") != "image/png":
        raise _invalid(f"messages.{number}: this fake takes base64 PNG images only")
    try:
        head = base64.b64decode(source.get("data", "")[:64], validate=True)
    except (binascii.Error, ValueError):
        raise _invalid(f"messages.{number}: the image data is not base64") from None
    if head[:8] != b"\x89PNG\r\n\x1a\n" or len(head) < 24:
        raise _invalid(f"messages.{number}: the image is not a PNG")
    width, height = struct.unpack(">II", head[16:24])
    if max(width, height) > LONG_SIDE:
        raise _invalid(
            f"messages.{number}: an image of {width}x{height} is over {LONG_SIDE} pixels "
            "on its long side (the API would shrink it, and the clicks would miss)"
        )
    return [(width, height)]


# ------------------------------------------------------------------ the server


@dataclass(frozen=True)
class Received:
    headers: dict[str, str]  # names in lower case
    body: Any
    refused: str | None  # why it was refused, or None


class FakeAnthropic:
    """The server; a context manager that starts it on a free port and stops it."""

    def __init__(
        self,
        turns: Iterable[Turn] = (),
        *,
        key: str = "test-key",
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.key = key
        self._turns: deque[Turn] = deque(turns)
        self._lock = threading.Lock()
        self.received: list[Received] = []
        self._server = ThreadingHTTPServer((host, port), _handler_for(self))
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def remaining(self) -> int:
        with self._lock:
            return len(self._turns)

    @property
    def refusals(self) -> list[str]:
        return [r.refused for r in self.received if r.refused is not None]

    def start(self) -> Self:
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def answer(
        self, path: str, headers: dict[str, str], raw: bytes
    ) -> tuple[int, dict[str, str], Any]:
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            body = None
        try:
            if path != "/v1/messages":
                raise Refused(404, "not_found_error", f"unknown path {path}")
            check_request(headers, body, self.key)
        except Refused as refused:
            with self._lock:
                self.received.append(Received(headers, body, str(refused)))
            log.info("fake Anthropic refused a request: %s", refused)
            error = {"type": "error", "error": {"type": refused.kind, "message": str(refused)}}
            return refused.status, {}, error
        with self._lock:
            self.received.append(Received(headers, body, None))
            turn = self._turns.popleft() if self._turns else None
            serial = len(self.received)
        if turn is None:
            message = f"fake Anthropic: the script has no turn left (request {serial})"
            return (
                400,
                {},
                {"type": "error", "error": {"type": "invalid_request_error", "message": message}},
            )
        return turn.render(str(body.get("model")), serial)


def _handler_for(fake: FakeAnthropic) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True

        def do_POST(self) -> None:  # noqa: N802 (the name http.server calls)
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            headers = {name.lower(): value for name, value in self.headers.items()}
            status, extra, payload = fake.answer(self.path, headers, raw)
            data = json.dumps(payload).encode()
            try:
                self.send_response(status)
                for name, value in {"Content-Type": "application/json", **extra}.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                log.debug("fake Anthropic: the client closed the connection before the answer")

        def log_message(self, format: str, *args: Any) -> None:
            log.debug("fake Anthropic: " + format, *args)

    return Handler


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="A fake Anthropic Messages API.")
    parser.add_argument("--port", type=int, default=8766)
    parser.add_argument("--key", default="test-key")
    parser.add_argument("--script", type=Path, required=True, help="YAML or JSON list of turns")
    args = parser.parse_args(argv)
    fake = FakeAnthropic(load_script(args.script), key=args.key, port=args.port).start()
    print(f"fake Anthropic on {fake.base_url} with {fake.remaining} turns", flush=True)
    seen = 0
    try:
        while True:
            time.sleep(0.2)
            for received in fake.received[seen:]:
                print(f"model={received.body and received.body.get('model')} "
                      f"refused={received.refused} left={fake.remaining}", flush=True)  # fmt: skip
            seen = len(fake.received)
    except KeyboardInterrupt:
        pass  # Ctrl-C is how this server is meant to stop
    finally:
        fake.stop()


if __name__ == "__main__":
    main()
