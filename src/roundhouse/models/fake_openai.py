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
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from roundhouse.models.fake_http import Answer, FakeServer, Received, load_turns, parse_json

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

    def render(self, request_model: str, serial: int) -> Answer:
        """Status, headers and body as the real API would send them, late, cut or endless
        as the reply says."""
        delivery: Literal["whole", "cut", "endless"] = (
            "endless" if self.endless else "cut" if self.cut else "whole"
        )
        headers = {"Content-Type": "application/json", **self.headers}
        if self.body is not None:
            return Answer(self.status, None, headers, self.body.encode(), self.delay, delivery)
        if self.status != 200:
            error = {"message": self.message, "type": _error_type(self.status), "code": None}
            return Answer(self.status, {"error": error}, headers, None, self.delay, delivery)
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
        return Answer(200, payload, headers, None, self.delay, delivery)


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
    return load_turns(path, "replies", Reply.from_mapping)


class FakeOpenAI(FakeServer[Reply]):
    """The server; a context manager that starts it on a free port and stops it."""

    name = "fake OpenAI server"
    url_suffix = "/v1"
    methods = frozenset({"POST"})
    unit = "replies"

    def __init__(self, replies: Iterable[Reply] = (), host: str = "127.0.0.1", port: int = 0):
        super().__init__(replies, host=host, port=port)

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received, in order (a body that was not JSON as {})."""
        with self._lock:
            received = list(self.received)
        return [
            RecordedRequest(r.path, r.headers, r.body if isinstance(r.body, dict) else {})
            for r in received
        ]

    def answer(self, method: str, path: str, headers: dict[str, str], raw: bytes) -> Answer:
        body = parse_json(raw)
        with self._lock:  # the request's number and its reply go together
            if urlsplit(path).path not in PATHS:
                self.record(Received(method, path, headers, body, None))
                return _refusal(404, f"fake server: unknown path {path}")
            serial = self.record(Received(method, path, headers, body, None))
            reply = self.take()
        if reply is None:
            return _refusal(400, f"fake server: the script has no reply left (request {serial})")
        model = body.get("model", "") if isinstance(body, dict) else ""
        return reply.render(str(model), serial)


def _refusal(status: int, message: str) -> Answer:
    error = {"error": {"message": message, "type": "invalid_request_error"}}
    return Answer(status, error, {"Content-Type": "application/json"})


def _describe(received: Received) -> str:
    body = received.body if isinstance(received.body, dict) else {}
    return f"{received.path} model={body.get('model')}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="A fake OpenAI-compatible server.")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--script", type=Path, required=True, help="YAML list of replies")
    args = parser.parse_args(argv)
    FakeOpenAI(load_script(args.script), port=args.port).serve_by_hand(_describe)


if __name__ == "__main__":
    main()
