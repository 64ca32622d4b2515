"""A fake OpenAI Responses API for computer use: real HTTP on 127.0.0.1, scripted answers,
and the refusals the real API gives, so that a client it would refuse is refused here.

Written from the API's documentation, apart from the client (it shares no code with
tools.py or client.py). Every request is checked, and the first problem is answered as
the API answers (401 invalid_api_key, 400 invalid_request_error):

- Authorization is "Bearer" and the key the fake was given;
- the computer_use_preview tool names display_width, display_height and an environment,
  the model takes it (computer-use-preview), and truncation is "auto";
- previous_response_id, when given, is a response this server gave;
- every computer_call of that response is answered by a computer_call_output with its
  call_id, none answers a call that was not made, and each acknowledges the call's
  pending_safety_checks (their ids), as the API requires before it goes on;
- the screenshot sent (the output's input_image, or the first message's) is a PNG data URL
  of the size declared as the display.

    with FakeOpenAIComputer([Turn(action={"type": "type", "text": "hi"}), Turn(text="done")],
                            key="test") as fake:
        ...  # OPENAI_BASE_URL=fake.base_url, OPENAI_API_KEY=test

By hand: python -m roundhouse.models.openai_computer.fake --port 8767 --script turns.yaml

The script is YAML or JSON: a list of turns (or a mapping with `turns:`), each one of

    - action: {type: click, x: 100, y: 200, button: left}     # one computer_call
      safety_checks: [{id: sc_1, code: malicious_instructions, message: "..."}]
      text: "I click Save"                                     # optional message beside
    - text: "The file is saved."                               # a final answer
    - refusal: "I can't help with that."                       # a refusal
    - status: 429                                              # an HTTP error
      headers: {retry-after: "0"}
"""

from __future__ import annotations

import argparse
import base64
import binascii
import json
import logging
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

ENVIRONMENTS = frozenset({"browser", "mac", "windows", "ubuntu", "linux"})
PREVIEW_MODELS = ("computer-use-preview",)
PNG_URL = "data:image/png;base64,"


@dataclass(frozen=True)
class Turn:
    action: Mapping[str, Any] | None = None
    safety_checks: tuple[Mapping[str, Any], ...] = ()
    text: str = ""
    refusal: str = ""
    status: int = 200
    headers: Mapping[str, str] = field(default_factory=dict)
    usage: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> Turn:
        return cls(
            action=data.get("action"),
            safety_checks=tuple(data.get("safety_checks") or ()),
            text=str(data.get("text", "")),
            refusal=str(data.get("refusal", "")),
            status=int(data.get("status", 200)),
            headers=dict(data.get("headers") or {}),
            usage=dict(data.get("usage") or {}),
        )


def load_script(path: Path) -> list[Turn]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if isinstance(data, Mapping):
        data = data.get("turns")
    if not isinstance(data, list) or not all(isinstance(entry, Mapping) for entry in data):
        raise ValueError(f"{path}: expected a list of turns (or a mapping with 'turns:')")
    return [Turn.from_mapping(entry) for entry in data]


class Refused(Exception):
    def __init__(self, status: int, kind: str, message: str, code: str | None = None) -> None:
        super().__init__(message)
        self.status, self.kind, self.code = status, kind, code


def _invalid(message: str) -> Refused:
    return Refused(400, "invalid_request_error", message)


@dataclass(frozen=True)
class _Given:
    """A response this server gave: its computer calls and their safety checks' ids."""

    calls: dict[str, frozenset[str]]


def check_request(
    headers: Mapping[str, str], body: Any, key: str, given: Mapping[str, _Given]
) -> None:
    if headers.get("authorization") != f"Bearer {key}":
        raise Refused(401, "invalid_request_error", "Incorrect API key provided", "invalid_api_key")
    if not isinstance(body, dict) or not isinstance(body.get("model"), str):
        raise _invalid("Missing required parameter: 'model'.")
    items = body.get("input")
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    if not isinstance(items, list) or not items:
        raise _invalid("Missing required parameter: 'input'.")
    display = _check_tool(body)
    previous = body.get("previous_response_id")
    made: dict[str, frozenset[str]] = {}
    if previous is not None:
        if previous not in given:
            raise _invalid(f"Previous response with id '{previous}' not found.")
        made = dict(given[previous].calls)
    sizes = _check_items(items, made)
    if display is not None:
        if not sizes:
            raise _invalid("the computer_use_preview tool is declared but no screenshot was sent")
        if sizes[-1] != display:
            raise _invalid(
                f"display_width x display_height is {display[0]}x{display[1]}, but the "
                f"screenshot sent is {sizes[-1][0]}x{sizes[-1][1]}"
            )


def _check_tool(body: dict[str, Any]) -> tuple[int, int] | None:
    display = None
    for tool in body.get("tools") or []:
        if not isinstance(tool, dict) or tool.get("type") != "computer_use_preview":
            continue
        if not body["model"].startswith(PREVIEW_MODELS):
            raise _invalid(
                f"The model '{body['model']}' does not support the computer_use_preview tool."
            )
        width, height = tool.get("display_width"), tool.get("display_height")
        if not isinstance(width, int) or not isinstance(height, int) or width < 1 or height < 1:
            raise _invalid(
                "Missing required parameter: 'tools[0].display_width' / 'display_height'."
            )
        if tool.get("environment") not in ENVIRONMENTS:
            raise _invalid(
                f"Invalid value for 'tools[0].environment': {tool.get('environment')!r}."
            )
        if body.get("truncation") != "auto":
            raise _invalid("truncation must be 'auto' when the computer_use_preview tool is used.")
        display = (width, height)
    return display


def _check_items(items: list[Any], made: dict[str, frozenset[str]]) -> list[tuple[int, int]]:
    sizes: list[tuple[int, int]] = []
    answered: set[str] = set()
    for number, item in enumerate(items):
        if not isinstance(item, dict):
            raise _invalid(f"input[{number}]: must be an object")
        if item.get("type") == "computer_call":  # a call resent by a client that stores none
            checks = frozenset(str(c.get("id")) for c in item.get("pending_safety_checks") or [])
            made[str(item.get("call_id"))] = checks
        elif item.get("type") == "computer_call_output":
            call_id = str(item.get("call_id"))
            if call_id not in made:
                raise _invalid(
                    f"No tool call found for computer_call_output with call_id {call_id}."
                )
            acknowledged = {str(c.get("id")) for c in item.get("acknowledged_safety_checks") or []}
            missing = made[call_id] - acknowledged
            if missing:
                raise _invalid(
                    f"The safety checks {', '.join(sorted(missing))} of call {call_id} were not "
                    "acknowledged (acknowledged_safety_checks)."
                )
            answered.add(call_id)
            output = item.get("output") or {}
            if output.get("type") != "input_image":
                raise _invalid(f"input[{number}].output: must be an input_image")
            sizes.append(_png_size(output.get("image_url"), number))
        else:
            content = item.get("content")
            for part in content if isinstance(content, list) else ():
                if isinstance(part, dict) and part.get("type") == "input_image":
                    sizes.append(_png_size(part.get("image_url"), number))
    unanswered = set(made) - answered
    if unanswered:
        said = ", ".join(sorted(unanswered))
        raise _invalid(f"No tool output found for computer call {said}.")
    return sizes


def _png_size(url: Any, number: int) -> tuple[int, int]:
    if not isinstance(url, str) or not url.startswith(PNG_URL):
        raise _invalid(f"input[{number}]: this fake takes PNG data URLs only")
    try:
        head = base64.b64decode(url[len(PNG_URL) :][:64], validate=True)
    except (binascii.Error, ValueError):
        raise _invalid(f"input[{number}]: the image is not base64") from None
    if head[:8] != b"\x89PNG\r\n\x1a\n" or len(head) < 24:
        raise _invalid(f"input[{number}]: the image is not a PNG")
    width, height = struct.unpack(">II", head[16:24])
    return int(width), int(height)


class FakeOpenAIComputer:
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
        self._given: dict[str, _Given] = {}
        self._lock = threading.Lock()
        self.received: list[tuple[dict[str, str], Any, str | None]] = []  # headers, body, refusal
        self._server = ThreadingHTTPServer((host, port), _handler_for(self))
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    @property
    def remaining(self) -> int:
        with self._lock:
            return len(self._turns)

    @property
    def refusals(self) -> list[str]:
        return [why for _, _, why in self.received if why is not None]

    def push(self, *turns: Turn) -> None:
        with self._lock:
            self._turns.extend(turns)

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
        with self._lock:
            try:
                if path != "/v1/responses":
                    raise Refused(404, "invalid_request_error", f"Invalid URL (POST {path})")
                check_request(headers, body, self.key, self._given)
            except Refused as refused:
                self.received.append((headers, body, str(refused)))
                log.info("fake OpenAI computer refused a request: %s", refused)
                error = {"message": str(refused), "type": refused.kind, "code": refused.code}
                return refused.status, {}, {"error": error}
            self.received.append((headers, body, None))
            turn = self._turns.popleft() if self._turns else None
            serial = len(self.received)
            if turn is None:
                message = f"fake OpenAI computer: the script has no turn left (request {serial})"
                return 400, {}, {"error": {"message": message, "type": "invalid_request_error"}}
            if turn.status != 200:
                kind = "rate_limit_exceeded" if turn.status == 429 else "server_error"
                error = {"message": f"scripted {turn.status}", "type": kind, "code": None}
                return turn.status, dict(turn.headers), {"error": error}
            response = _render(turn, str(body.get("model")), serial)
            calls = {
                item["call_id"]: frozenset(str(c.get("id")) for c in item["pending_safety_checks"])
                for item in response["output"]
                if item["type"] == "computer_call"
            }
            self._given[response["id"]] = _Given(calls)
            return 200, dict(turn.headers), response


def _render(turn: Turn, model: str, serial: int) -> dict[str, Any]:
    output: list[dict[str, Any]] = []
    content = []
    if turn.text:
        content.append({"type": "output_text", "text": turn.text, "annotations": []})
    if turn.refusal:
        content.append({"type": "refusal", "refusal": turn.refusal})
    if content:
        output.append(
            {
                "type": "message",
                "id": f"msg_fake_{serial}",
                "role": "assistant",
                "status": "completed",
                "content": content,
            }  # fmt: skip
        )
    if turn.action is not None:
        output.append(
            {
                "type": "computer_call",
                "id": f"cu_fake_{serial}",
                "call_id": f"call_fake_{serial}",
                "action": dict(turn.action),
                "pending_safety_checks": [dict(c) for c in turn.safety_checks],
                "status": "completed",
            }  # fmt: skip
        )
    usage = {
        "input_tokens": 1000,
        "output_tokens": 50,
        "input_tokens_details": {"cached_tokens": 0},
    }
    return {
        "id": f"resp_fake_{serial}",
        "object": "response",
        "status": "completed",
        "model": model,
        "output": output,
        "usage": {**usage, **turn.usage},
    }


def _handler_for(fake: FakeOpenAIComputer) -> type[BaseHTTPRequestHandler]:
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
                log.debug("fake OpenAI computer: the client left before the answer")

        def log_message(self, format: str, *args: Any) -> None:
            log.debug("fake OpenAI computer: " + format, *args)

    return Handler


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="A fake OpenAI Responses API for computer use.")
    parser.add_argument("--port", type=int, default=8767)
    parser.add_argument("--key", default="test-key")
    parser.add_argument("--script", type=Path, required=True, help="YAML or JSON list of turns")
    args = parser.parse_args(argv)
    fake = FakeOpenAIComputer(load_script(args.script), key=args.key, port=args.port).start()
    print(f"fake OpenAI computer on {fake.base_url} with {fake.remaining} turns", flush=True)
    seen = 0
    try:
        while True:
            time.sleep(0.2)
            for _, body, refused in fake.received[seen:]:
                model = body.get("model") if isinstance(body, dict) else None
                print(f"model={model} refused={refused} left={fake.remaining}", flush=True)
            seen = len(fake.received)
    except KeyboardInterrupt:
        pass  # Ctrl-C is how this server is meant to stop
    finally:
        fake.stop()


if __name__ == "__main__":
    main()
