"""A fake Gemini API (generateContent with the computer_use tool): real HTTP on 127.0.0.1,
scripted function calls on the 0-999 grid, and the refusals the API gives, so that a
client the API would refuse is refused here.

Written from the Gemini API's documentation (computer use, function calling, thought
signatures), google-genai's types and Google's reference client (computer-use-preview),
apart from roundhouse's client: it shares no code with it. Every request to
POST /v1beta/models/{model}:generateContent is checked, and the first problem is answered
in Google's error body `{"error": {"code", "message", "status"}}`:

- no key (x-goog-api-key, or ?key=): 403 PERMISSION_DENIED; another key: 400
  INVALID_ARGUMENT "API key not valid"; a model this fake does not serve: 404 NOT_FOUND;
- the computer_use tool names an environment of the enum, and its
  excluded_predefined_functions only the model's predefined functions (the model's set:
  gemini-2.5-computer-use and the Gemini 3 previews have the legacy set, click_at ...;
  gemini-3.5 and later the new one, click ...);
- function declarations have unique names (none a predefined function left included),
  valid names, and an OBJECT parameters schema whose `required` are its properties;
- contents alternate user and model, from the user; every functionCall of a model turn is
  answered in the next user turn by a functionResponse of the same name (and id, when the
  call had one), no more and no fewer; a call whose args hold a safety_decision that
  requires confirmation is answered with `safety_acknowledgement: "true"` in its response;
- inline images are base64 of the type they declare (PNG, JPEG or WebP: the types a
  function response's parts take); a response to a predefined computer-use function
  in the request's last turn carries a screenshot (the reference client's is a PNG), in its
  parts or beside it (this fake's own rule: the API would take it, and the model would
  then act blind); older turns' screenshots may be gone, as the reference client keeps
  them in its last 3 turns only;
- Gemini 3 models: the first functionCall part of every model turn since the user's last
  message carries back the thoughtSignature this server gave it.

    with FakeGemini([Turn(calls=[Call("type_text_at", {"x": 500, "y": 300, "text": "hi"})]),
                     Turn(text="done")], key="test") as fake:
        ...  # the client's base URL: fake.base_url; its key: test

By hand: python -m roundhouse.models.gemini.fake --port 8769 --script turns.yaml

The script is YAML or JSON: a list of turns (or a mapping with `turns:`), each one of

    - calls: [{name: click_at, args: {x: 500, y: 300}}]   # functionCall parts, 0-999 grid
      text: "I click Save"                                # optional text before them
      ids: true                                           # give the calls ids
    - calls: [{name: type_text_at, args: {x: 10, y: 20, text: rm -rf,
               safety_decision: {decision: require_confirmation, explanation: "..."}}}]
    - text: "The file is saved."                          # a final answer
    - status: 429                                         # an HTTP error
      headers: {retry-after: "1"}

Each turn may give `usage:` (promptTokenCount, candidatesTokenCount, ...) and
`finish_reason:` (default STOP). A valid request that finds the script empty gets a 400.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from roundhouse.models.fake_http import (
    Answer,
    FakeServer,
    Received,
    Refused,
    Scripted,
    load_turns,
    parse_json,
    script_arguments,
)
from roundhouse.models.gemini.fake_checks import (
    Offered,
    check_contents,
    check_tools,
    error_body,
    invalid,
    refusal,
)
from roundhouse.models.gemini.fake_tables import GRID_ARGS, MODELS, PATH, Model


@dataclass(frozen=True)
class Call:
    """One scripted functionCall; x, y (and destination_x, destination_y) on 0-999."""

    name: str
    args: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in GRID_ARGS:
            value = self.args.get(name)
            if value is not None and not (isinstance(value, int) and 0 <= value <= 999):
                raise ValueError(f"{self.name}: {name}={value!r} is not on the 0-999 grid")


@dataclass(frozen=True)
class Turn(Scripted):
    """One scripted answer: function calls and/or text, or an HTTP error."""

    calls: tuple[Call, ...] = ()
    text: str = ""
    ids: bool = False
    finish_reason: str = "STOP"

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> Turn:
        known = {"calls", "text", "ids", "finish_reason", "status", "headers", "usage"}
        if unknown := set(data) - known:
            raise ValueError(f"unknown turn keys {sorted(unknown)} (known: {sorted(known)})")
        return cls(
            calls=tuple(
                Call(str(c["name"]), dict(c.get("args") or {})) for c in data.get("calls") or ()
            ),
            text=str(data.get("text", "")),
            ids=bool(data.get("ids", False)),
            finish_reason=str(data.get("finish_reason", "STOP")),
            **Scripted.read(data),
        )


def load_script(path: Path) -> list[Turn]:
    return load_turns(path, "turns", Turn.from_mapping)


# ------------------------------------------------------------------ the server


class FakeGemini(FakeServer[Turn]):
    """The Gemini API's generateContent, as far as a computer-use client uses it."""

    name = "fake Gemini"

    def __init__(
        self,
        turns: Iterable[Turn] = (),
        *,
        key: str = "test-key",
        models: Mapping[str, Model] | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        super().__init__(turns, key=key, host=host, port=port)
        self.models = dict(MODELS if models is None else models)
        self._signatures: set[str] = set()

    def answer(self, method: str, path: str, headers: dict[str, str], raw: bytes) -> Answer:
        body = parse_json(raw)
        with self._lock:  # the signatures given are read and written in one go
            try:
                model, offered = self._check(method, path, headers, body)
            except Refused as refused:
                self.record(Received(method, path, headers, body, str(refused)))
                return Answer(refused.status, refused.body)
            serial = self.record(Received(method, path, headers, body, None))
            turn = self.take()
            if turn is None:
                return Answer(
                    400,
                    error_body(400, f"fake Gemini: the script has no turn left (request {serial})"),
                )
            if turn.status != 200:
                return Answer(
                    turn.status, error_body(turn.status, f"scripted {turn.status}"), turn.headers
                )
            if strange := [c.name for c in turn.calls if c.name not in offered.names]:
                message = (
                    f"fake Gemini: the script calls {strange}, which this request does not offer"
                )
                return Answer(400, error_body(400, message))
            return Answer(200, self._render(turn, model, serial), turn.headers)

    def _check(
        self, method: str, path: str, headers: Mapping[str, str], body: Any
    ) -> tuple[str, Offered]:
        split = urlsplit(path)
        key = headers.get("x-goog-api-key") or "".join(parse_qs(split.query).get("key", [])[:1])
        if not key:
            raise refusal(
                403,
                "Method doesn't allow unregistered callers (callers without established "
                "identity). Please use API Key or other form of API consumer identity to call "
                "this API.",
            )
        if key != self.key:
            raise invalid("API key not valid. Please pass a valid API key.")
        matched = PATH.match(split.path)
        if method != "POST" or matched is None:
            raise refusal(404, f"fake Gemini: no method {method} {split.path}")
        model = matched["model"]
        if model not in self.models:
            raise refusal(
                404,
                f"models/{model} is not found for API version v1beta, or is not supported for "
                "generateContent.",
            )
        if not isinstance(body, dict):
            raise invalid("Invalid JSON payload received.")
        offered = check_tools(body.get("tools"), self.models[model])
        check_contents(
            body.get("contents"), self.models[model], offered.predefined, self._signatures
        )
        return model, offered

    def _render(self, turn: Turn, model: str, serial: int) -> dict[str, Any]:
        parts: list[dict[str, Any]] = [{"text": turn.text}] if turn.text else []
        for number, call in enumerate(turn.calls, 1):
            given: dict[str, Any] = {"name": call.name, "args": dict(call.args)}
            if turn.ids:
                given["id"] = f"fc-fake-{serial}-{number}"
            part: dict[str, Any] = {"functionCall": given}
            if number == 1 and self.models[model].signs:
                signature = base64.b64encode(f"fake-signature-{serial}".encode()).decode()
                self._signatures.add(signature)
                part["thoughtSignature"] = signature
            parts.append(part)
        usage = {"promptTokenCount": 1000, "candidatesTokenCount": 50, **turn.usage}
        usage.setdefault(
            "totalTokenCount", usage["promptTokenCount"] + usage["candidatesTokenCount"]
        )
        return {
            "candidates": [
                {
                    "content": {"role": "model", "parts": parts},
                    "finishReason": turn.finish_reason,
                    "index": 0,
                }
            ],
            "usageMetadata": usage,
            "modelVersion": model,
            "responseId": f"fake-response-{serial}",
        }


def _describe(received: Received) -> str:
    matched = PATH.match(urlsplit(received.path).path)
    return f"model={matched['model'] if matched else None} refused={received.refused}"


def main(argv: Sequence[str] | None = None) -> None:
    parser = script_arguments("A fake Gemini API with the computer_use tool.", 8769)
    args = parser.parse_args(argv)
    FakeGemini(load_script(args.script), key=args.key, port=args.port).serve_by_hand(_describe)


if __name__ == "__main__":
    main()
