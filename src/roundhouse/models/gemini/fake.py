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

import argparse
import base64
import binascii
import io
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from PIL import Image, UnidentifiedImageError

from roundhouse.models.fake_http import (
    Answer,
    FakeServer,
    Received,
    Refused,
    load_turns,
    parse_json,
)

# The predefined functions, as Google's reference client lists them per model generation.
LEGACY_FUNCTIONS = (
    "open_web_browser", "click_at", "hover_at", "type_text_at", "scroll_document",
    "scroll_at", "wait_5_seconds", "go_back", "go_forward", "search", "navigate",
    "key_combination", "drag_and_drop",
)  # fmt: skip
FUNCTIONS = (
    "click", "double_click", "triple_click", "middle_click", "right_click", "mouse_down",
    "mouse_up", "move", "type", "drag_and_drop", "wait", "press_key", "key_down", "key_up",
    "hotkey", "take_screenshot", "scroll", "go_back", "navigate", "go_forward",
)  # fmt: skip
ENVIRONMENTS = frozenset(
    {"ENVIRONMENT_UNSPECIFIED", "ENVIRONMENT_BROWSER", "ENVIRONMENT_MOBILE", "ENVIRONMENT_DESKTOP"}
)
SCHEMA_TYPES = frozenset({"STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT", "NULL"})
FUNCTION_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.:-]{0,127}$")
PATH = re.compile(r"^/v1beta/models/(?P<model>[^/:]+):generateContent$")
IMAGE_TYPES = {"image/png": "PNG", "image/jpeg": "JPEG", "image/webp": "WEBP"}
GRID_ARGS = ("x", "y", "destination_x", "destination_y")


@dataclass(frozen=True)
class Model:
    """What a served model offers: its predefined functions, whether it signs its calls."""

    functions: tuple[str, ...]
    signs: bool  # Gemini 3 and later: thought signatures, checked on the current turn


MODELS: dict[str, Model] = {
    "gemini-2.5-computer-use-preview-10-2025": Model(LEGACY_FUNCTIONS, signs=False),
    "gemini-3-flash-preview": Model(LEGACY_FUNCTIONS, signs=True),
    "gemini-3.1-pro-preview": Model(LEGACY_FUNCTIONS, signs=True),
    "gemini-3.5-flash": Model(FUNCTIONS, signs=True),
}


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
class Turn:
    """One scripted answer: function calls and/or text, or an HTTP error."""

    calls: tuple[Call, ...] = ()
    text: str = ""
    ids: bool = False
    finish_reason: str = "STOP"
    status: int = 200
    headers: Mapping[str, str] = field(default_factory=dict)
    usage: Mapping[str, int] = field(default_factory=dict)

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
            status=int(data.get("status", 200)),
            headers={str(k): str(v) for k, v in (data.get("headers") or {}).items()},
            usage={str(k): int(v) for k, v in (data.get("usage") or {}).items()},
        )


def load_script(path: Path) -> list[Turn]:
    return load_turns(path, "turns", Turn.from_mapping)


STATUSES = {
    400: "INVALID_ARGUMENT",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}


def _error(code: int, message: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "status": STATUSES.get(code, "UNKNOWN")}}


def _refused(code: int, message: str) -> Refused:
    return Refused(code, message, _error(code, message))


def _invalid(message: str) -> Refused:
    return _refused(400, message)


def _get(data: Mapping[str, Any], name: str) -> Any:
    """A field by its JSON name (camelCase), or by its proto name (snake_case): the API
    reads both."""
    if name in data:
        return data[name]
    return data.get(re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower())


# ------------------------------------------------------------------ the checks


@dataclass
class Offered:
    """What a request's tools let the model call."""

    predefined: set[str] = field(default_factory=set)
    declared: set[str] = field(default_factory=set)

    @property
    def names(self) -> set[str]:
        return self.predefined | self.declared


def check_tools(tools: Any, model: Model) -> Offered:
    offered = Offered()
    if tools is None:
        return offered
    if not isinstance(tools, list):
        raise _invalid("Invalid JSON payload received. 'tools' must be a list.")
    computer_uses = 0
    for number, tool in enumerate(tools):
        if not isinstance(tool, dict):
            raise _invalid(f"tools[{number}]: must be an object")
        computer = _get(tool, "computerUse")
        if computer is not None:
            computer_uses += 1
            offered.predefined = _check_computer_use(computer, model, number)
        declarations = _get(tool, "functionDeclarations")
        for index, declaration in enumerate(declarations or ()):
            name = _check_declaration(
                declaration, f"tools[{number}].function_declarations[{index}]"
            )
            if name in offered.declared:
                raise _invalid(f"Duplicate function declaration found: {name}")
            offered.declared.add(name)
    if computer_uses > 1:
        raise _invalid("At most one computer_use tool may be given.")
    if clash := offered.declared & offered.predefined:
        raise _invalid(
            f"Duplicate function declaration found: {', '.join(sorted(clash))} is a predefined "
            "computer use function: exclude it (excluded_predefined_functions) to declare your own"
        )
    return offered


def _check_computer_use(computer: Any, model: Model, number: int) -> set[str]:
    where = f"tools[{number}].computer_use"
    if not isinstance(computer, dict):
        raise _invalid(f"{where}: must be an object")
    environment = _get(computer, "environment")
    if environment is None:
        raise _invalid(f"{where}.environment: required")
    if environment not in ENVIRONMENTS:
        raise _invalid(
            f"Invalid value at '{where}.environment' (type.googleapis.com/google.ai."
            f'generativelanguage.v1beta.Tool.ComputerUse.Environment), "{environment}"'
        )
    excluded = _get(computer, "excludedPredefinedFunctions") or []
    if not isinstance(excluded, list) or not all(isinstance(name, str) for name in excluded):
        raise _invalid(f"{where}.excluded_predefined_functions: a list of names")
    if unknown := [name for name in excluded if name not in model.functions]:
        raise _invalid(
            f"{where}.excluded_predefined_functions: {', '.join(unknown)} is not a predefined "
            f"function of this model (they are: {', '.join(model.functions)})"
        )
    return set(model.functions) - set(excluded)


def _check_declaration(declaration: Any, where: str) -> str:
    if not isinstance(declaration, dict):
        raise _invalid(f"{where}: must be an object")
    name = declaration.get("name")
    if not isinstance(name, str) or not FUNCTION_NAME.fullmatch(name):
        raise _invalid(
            f"{where}.name: {name!r}: must start with a letter or an underscore and contain only "
            "a-z, A-Z, 0-9, underscores, dots, colons and dashes, at most 128"
        )
    parameters = _get(declaration, "parameters")
    schema = _get(declaration, "parametersJsonSchema")
    if parameters is not None and schema is not None:
        raise _invalid(f"{where}: parameters and parameters_json_schema are mutually exclusive")
    if parameters is not None:
        _check_schema(parameters, f"{where}.parameters", top=True)
    if schema is not None and (not isinstance(schema, dict) or schema.get("type") != "object"):
        raise _invalid(f"{where}.parameters_json_schema: must describe an object")
    return name


def _check_schema(schema: Any, where: str, top: bool = False) -> None:
    if not isinstance(schema, dict):
        raise _invalid(f"{where}: must be a schema object")
    kind = str(schema.get("type", "")).upper()
    if kind not in SCHEMA_TYPES:
        raise _invalid(f"{where}.type: {schema.get('type')!r} is not a schema type")
    if top and kind != "OBJECT":
        raise _invalid(f"{where}.type: the parameters of a function must be an OBJECT")
    properties = schema.get("properties") or {}
    if not isinstance(properties, dict):
        raise _invalid(f"{where}.properties: must be a mapping")
    for name, inner in properties.items():
        _check_schema(inner, f"{where}.properties[{name}]")
    required = schema.get("required") or []
    if missing := [name for name in required if name not in properties]:
        raise _invalid(f"{where}.required: {', '.join(map(str, missing))} is not a property")
    if kind == "ARRAY":
        if "items" not in schema:
            raise _invalid(f"{where}.items: missing field (an ARRAY needs items)")
        _check_schema(schema["items"], f"{where}.items")


@dataclass(frozen=True)
class _Asked:
    """A functionCall of a model turn, waiting for its response."""

    name: str
    id: str | None
    confirm: bool  # its safety_decision requires confirmation


def check_contents(
    contents: Any, model: Model, predefined: Iterable[str], signatures: set[str]
) -> None:
    """Refused where the turns, the call/response pairs, the images or the signatures go
    wrong."""
    if not isinstance(contents, list) or not contents:
        raise _invalid("* GenerateContentRequest.contents: contents is not specified")
    predefined = set(predefined)
    asked: list[_Asked] = []
    last_role = None
    current = _current_turn_start(contents)
    for number, content in enumerate(contents):
        where = f"contents[{number}]"
        if not isinstance(content, dict):
            raise _invalid(f"{where}: must be an object")
        role = content.get("role") or "user"
        if role not in ("user", "model"):
            raise _invalid(f"Please use a valid role: user, model. ({where}.role = {role!r})")
        if role == last_role or (last_role is None and role != "user"):
            raise _invalid(
                "Please ensure that multiturn requests alternate between user and model."
            )
        last_role = role
        parts = content.get("parts")
        if not isinstance(parts, list) or not parts:
            raise _invalid(
                f"* GenerateContentRequest.{where}.parts: contents.parts must not be empty."
            )
        for index, part in enumerate(parts):
            _check_part(part, f"{where}.parts[{index}]", role)
        if role == "model":
            asked = _calls_of(parts)
            if model.signs and number >= current:
                _check_signature(parts, number, signatures)
        else:
            latest = number == len(contents) - 1
            _check_answers(parts, asked, predefined if latest else set(), where)
            asked = []
    if asked:
        raise _invalid(
            "Please ensure that function response turn comes immediately after a function call "
            f"turn: {', '.join(call.name for call in asked)} of the last model turn is unanswered."
        )


def _current_turn_start(contents: list[Any]) -> int:
    """Where the current turn starts: at the user's last message that is not function
    responses (thought signatures are checked from there on)."""
    start = 0
    for number, content in enumerate(contents):
        if not isinstance(content, dict) or (content.get("role") or "user") != "user":
            continue
        parts = content.get("parts") or []
        if not any(isinstance(p, dict) and _get(p, "functionResponse") for p in parts):
            start = number
    return start


DATA_FIELDS = ("text", "inlineData", "functionCall", "functionResponse", "fileData")


def _check_part(part: Any, where: str, role: str) -> None:
    if not isinstance(part, dict):
        raise _invalid(f"{where}: must be an object")
    kinds = [name for name in DATA_FIELDS if _get(part, name) is not None]
    if len(kinds) != 1:
        raise _invalid(
            f"{where}: a part holds exactly one of {', '.join(DATA_FIELDS)}, not {kinds}"
        )
    kind = kinds[0]
    if kind == "functionCall" and role != "model":
        raise _invalid(f"{where}: a functionCall is the model's, not in a {role} turn")
    if kind == "functionResponse" and role != "user":
        raise _invalid(f"{where}: a functionResponse is the user's, not in a {role} turn")
    if kind == "inlineData":
        _check_image(_get(part, "inlineData"), f"{where}.inline_data")
    if kind == "functionResponse":
        answer = _get(part, "functionResponse")
        if not isinstance(answer, dict) or not isinstance(answer.get("name"), str):
            raise _invalid(f"{where}.function_response.name: required")
        if not isinstance(answer.get("response"), dict):
            raise _invalid(f"{where}.function_response.response: required, a JSON object")
        for index, inner in enumerate(answer.get("parts") or ()):
            blob = _get(inner, "inlineData") if isinstance(inner, dict) else None
            if blob is None:
                raise _invalid(f"{where}.function_response.parts[{index}]: inline_data only")
            _check_image(blob, f"{where}.function_response.parts[{index}].inline_data")


def _check_image(blob: Any, where: str) -> str:
    """The image's type (PNG, JPEG, WEBP); Refused unless the data is base64 of it."""
    if not isinstance(blob, dict):
        raise _invalid(f"{where}: must be an object")
    mime = _get(blob, "mimeType")
    if mime not in IMAGE_TYPES:
        raise _invalid(f"{where}.mime_type: {mime!r} is not image/png, image/jpeg or image/webp")
    try:
        data = base64.b64decode(blob.get("data") or "", validate=True)
        with Image.open(io.BytesIO(data)) as image:
            image.verify()
            found = image.format
    except (binascii.Error, ValueError):
        raise _invalid(f"{where}.data: Invalid value, not base64") from None
    except (UnidentifiedImageError, OSError, SyntaxError):
        raise _invalid(f"{where}: Unable to process input image") from None
    if found != IMAGE_TYPES[mime]:
        raise _invalid(f"{where}: the data is {found}, but mime_type says {mime}")
    return str(found)


def _calls_of(parts: list[Any]) -> list[_Asked]:
    asked = []
    for part in parts:
        call = _get(part, "functionCall")
        if call is None:
            continue
        args = call.get("args") or {}
        safety = _get(args, "safetyDecision") if isinstance(args, dict) else None
        confirm = isinstance(safety, dict) and safety.get("decision") == "require_confirmation"
        asked.append(_Asked(str(call.get("name")), call.get("id"), confirm))
    return asked


def _check_signature(parts: list[Any], number: int, signatures: set[str]) -> None:
    for position, part in enumerate(parts):
        call = _get(part, "functionCall")
        if call is None:
            continue
        signature = _get(part, "thoughtSignature")
        if signature is None:
            raise _invalid(
                "Function call is missing a thought_signature in functionCall parts. This is "
                "required for tools to work correctly. Additional data, function call "
                f"`{call.get('name')}`, position {position + 1} of contents[{number}]."
            )
        if signature not in signatures:
            raise _invalid(f"Corrupted thought signature (contents[{number}].parts[{position}]).")
        return  # only the first call of a turn carries one


def _check_answers(parts: list[Any], asked: list[_Asked], predefined: set[str], where: str) -> None:
    answers = [_get(p, "functionResponse") for p in parts if _get(p, "functionResponse")]
    if answers and not asked:
        raise _invalid(
            "Please ensure that function response turn comes immediately after a function "
            "call turn."
        )
    if len(answers) != len(asked):
        raise _invalid(
            "Please ensure that the number of function response parts is equal to the number of "
            f"function call parts of the function call turn ({where}: {len(answers)} for "
            f"{len(asked)})."
        )
    beside = any(_get(p, "inlineData") for p in parts)
    for index, (call, answer) in enumerate(zip(asked, _paired(asked, answers, where), strict=True)):
        if answer["name"] != call.name:
            raise _invalid(
                f"{where}: the function response {answer['name']!r} answers the call "
                f"{call.name!r}: names must match"
            )
        if call.confirm and answer["response"].get("safety_acknowledgement") != "true":
            raise _invalid(
                f"{where}: the call {call.name} required confirmation (safety_decision), and its "
                'function response does not carry safety_acknowledgement: "true"'
            )
        if call.name in predefined and not answer.get("parts") and not beside:
            raise _invalid(
                f"{where}: the response to {call.name} (call {index + 1}) carries no screenshot: "
                "a predefined computer use function is answered with the screen as an inline image"
            )


def _paired(asked: list[_Asked], answers: list[Any], where: str) -> list[Any]:
    """The responses in the order of the calls: by id where the calls have ids, else as
    given."""
    if not any(call.id for call in asked):
        return answers
    by_id = {answer.get("id"): answer for answer in answers}
    paired = []
    for call in asked:
        if call.id not in by_id:
            raise _invalid(f"{where}: no function response has the id {call.id!r} of {call.name}")
        paired.append(by_id[call.id])
    return paired


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
        super().__init__(turns, host=host, port=port)
        self.key = key
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
                    400, _error(400, f"fake Gemini: the script has no turn left (request {serial})")
                )
            if turn.status != 200:
                return Answer(
                    turn.status, _error(turn.status, f"scripted {turn.status}"), turn.headers
                )
            if strange := [c.name for c in turn.calls if c.name not in offered.names]:
                message = (
                    f"fake Gemini: the script calls {strange}, which this request does not offer"
                )
                return Answer(400, _error(400, message))
            return Answer(200, self._render(turn, model, serial), turn.headers)

    def _check(
        self, method: str, path: str, headers: Mapping[str, str], body: Any
    ) -> tuple[str, Offered]:
        split = urlsplit(path)
        key = headers.get("x-goog-api-key") or "".join(parse_qs(split.query).get("key", [])[:1])
        if not key:
            raise _refused(
                403,
                "Method doesn't allow unregistered callers (callers without established "
                "identity). Please use API Key or other form of API consumer identity to call "
                "this API.",
            )
        if key != self.key:
            raise _invalid("API key not valid. Please pass a valid API key.")
        matched = PATH.match(split.path)
        if method != "POST" or matched is None:
            raise _refused(404, f"fake Gemini: no method {method} {split.path}")
        model = matched["model"]
        if model not in self.models:
            raise _refused(
                404,
                f"models/{model} is not found for API version v1beta, or is not supported for "
                "generateContent.",
            )
        if not isinstance(body, dict):
            raise _invalid("Invalid JSON payload received.")
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
    parser = argparse.ArgumentParser(description="A fake Gemini API with the computer_use tool.")
    parser.add_argument("--port", type=int, default=8769)
    parser.add_argument("--key", default="test-key")
    parser.add_argument("--script", type=Path, required=True, help="YAML or JSON list of turns")
    args = parser.parse_args(argv)
    FakeGemini(load_script(args.script), key=args.key, port=args.port).serve_by_hand(_describe)


if __name__ == "__main__":
    main()
