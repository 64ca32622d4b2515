"""A fake OpenAI Responses API for computer use: real HTTP on 127.0.0.1, scripted answers,
and the refusals the real API gives, so that a client it would refuse is refused here.

Written from the API's documentation, apart from the client (it shares no code with
tools.py or client.py). Every request is checked, and the first problem is answered as
the API answers (401 invalid_api_key, 400 invalid_request_error):

- Authorization is "Bearer" and the key the fake was given;
- the computer_use_preview tool names display_width, display_height and an environment,
  the model takes it (computer-use-preview; "Tool 'computer_use_preview' is not supported
  with gpt-5.4"), and truncation is "auto"; the GA `computer` tool (no display size) is
  taken by gpt-5.4 and later only;
- previous_response_id, when given, is a response this server gave and stored (a response
  made with store=false cannot be chained to), and the input does not send again an item
  that response chain already holds ("Duplicate item found with id ...");
- every computer_call of that response is answered by a computer_call_output with its
  call_id, none answers a call that was not made, and each acknowledges the call's
  pending_safety_checks (their ids), as the API requires before it goes on;
- a computer_call_output's output is a `computer_screenshot` (openai-python's
  ResponseComputerToolCallOutputScreenshotParam), not an input_image;
- items sent again by hand keep their pairs: a computer_call this server gave after a
  reasoning item comes right after that reasoning item, and a reasoning item right
  before the item it was given with;
- message parts are the role's kinds (input_text, input_image, input_file for the user;
  output_text, refusal for the assistant);
- the screenshot sent (the call output's, or the first message's input_image) is a PNG,
  JPEG or WebP data URL whose data is what it says, and, with the preview tool, of the
  size declared as the display.

Each computer_call goes out after a reasoning item, as the real models' do.

    with FakeOpenAIComputer([Turn(action={"type": "type", "text": "hi"}), Turn(text="done")],
                            key="test") as fake:
        ...  # OPENAI_BASE_URL=fake.base_url, OPENAI_API_KEY=test

By hand: python -m roundhouse.models.openai_computer.fake --port 8767 --script turns.yaml

The script is YAML or JSON: a list of turns (or a mapping with `turns:`), each one of

    - action: {type: click, x: 100, y: 200, button: left}     # one computer_call
      safety_checks: [{id: sc_1, code: malicious_instructions, message: "..."}]
    - actions: [{type: click, x: 1, y: 2, button: left}, {type: type, text: hi}]
                                                               # the GA tool's batched call
      text: "I click Save"                                     # optional message beside
    - text: "The file is saved."                               # a final answer
    - refusal: "I can't help with that."                       # a refusal
    - status: 429                                              # an HTTP error
      headers: {retry-after: "0"}
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from roundhouse.models import fake_http
from roundhouse.models.fake_http import (
    Answer,
    FakeServer,
    ImageProblem,
    Refused,
    Scripted,
    data_url_image,
    describe_model,
    load_turns,
    parse_json,
    script_arguments,
)

ENVIRONMENTS = frozenset({"browser", "mac", "windows", "ubuntu", "linux"})
PREVIEW_MODELS = ("computer-use-preview",)
# The GA `computer` tool came with gpt-5.4 (2026-03); the models after it take it too.
GA_MODEL = re.compile(r"^gpt-(5\.([4-9]|\d\d)|[6-9])")
IMAGE_TYPES = {"image/png": "PNG", "image/jpeg": "JPEG", "image/webp": "WEBP"}
PART_KINDS = {
    "user": {"input_text", "input_image", "input_file"},
    "system": {"input_text", "input_image", "input_file"},
    "developer": {"input_text", "input_image", "input_file"},
    "assistant": {"output_text", "refusal"},
}


@dataclass(frozen=True)
class Turn(Scripted):
    action: Mapping[str, Any] | None = None  # the preview tool's one action
    actions: tuple[Mapping[str, Any], ...] = ()  # the GA tool's batched actions
    safety_checks: tuple[Mapping[str, Any], ...] = ()
    text: str = ""
    refusal: str = ""

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> Turn:
        return cls(
            action=data.get("action"),
            actions=tuple(data.get("actions") or ()),
            safety_checks=tuple(data.get("safety_checks") or ()),
            text=str(data.get("text", "")),
            refusal=str(data.get("refusal", "")),
            **Scripted.read(data),
        )


def load_script(path: Path) -> list[Turn]:
    return load_turns(path, "turns", Turn.from_mapping)


def _refused(
    status: int, kind: str, message: str, code: str | None = None, param: str | None = None
) -> Refused:
    """A refusal in the API's error body."""
    error = {"message": message, "type": kind, "param": param, "code": code}
    return Refused(status, message, {"error": error})


def _invalid(message: str, param: str | None = None) -> Refused:
    return _refused(400, "invalid_request_error", message, param=param)


@dataclass(frozen=True)
class _Given:
    """A response this server gave: its computer calls and their safety checks' ids, the
    ids of its output items, what must come before or after each when sent again, whether
    it was stored, and the response it was chained to."""

    calls: dict[str, frozenset[str]]
    items: frozenset[str] = frozenset()
    before: Mapping[str, str] = field(default_factory=dict)  # call item id → reasoning id
    stored: bool = True
    previous: str | None = None


def check_request(
    headers: Mapping[str, str], body: Any, key: str | None, given: Mapping[str, _Given]
) -> None:
    if headers.get("authorization") != f"Bearer {key}":
        raise _refused(
            401, "invalid_request_error", "Incorrect API key provided", "invalid_api_key"
        )
    if not isinstance(body, dict) or not isinstance(body.get("model"), str):
        raise _invalid("Missing required parameter: 'model'.", "model")
    items = body.get("input")
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    if not isinstance(items, list) or not items:
        raise _invalid("Missing required parameter: 'input'.", "input")
    display = _check_tools(body)
    previous = body.get("previous_response_id")
    made: dict[str, frozenset[str]] = {}
    if previous is not None:
        if previous not in given or not given[previous].stored:
            raise _invalid(
                f"Previous response with id '{previous}' not found.", "previous_response_id"
            )
        made = dict(given[previous].calls)
        _check_no_duplicates(items, previous, given)
    _check_pairs(items, given)
    sizes = _check_items(items, made)
    if display is not None:
        if not sizes:
            raise _invalid("the computer_use_preview tool is declared but no screenshot was sent")
        if sizes[-1] != display:
            raise _invalid(
                f"display_width x display_height is {display[0]}x{display[1]}, but the "
                f"screenshot sent is {sizes[-1][0]}x{sizes[-1][1]}"
            )


def _check_tools(body: dict[str, Any]) -> tuple[int, int] | None:
    """The preview tool's declared display, if it is declared; Refused where a computer
    tool does not fit the model."""
    display = None
    model = body["model"]
    for number, tool in enumerate(body.get("tools") or []):
        if not isinstance(tool, dict):
            raise _invalid(f"tools[{number}]: must be an object", "tools")
        if tool.get("type") == "computer":
            if not GA_MODEL.match(model):
                raise _invalid(f"Tool 'computer' is not supported with {model}.", "tools")
            continue
        if tool.get("type") != "computer_use_preview":
            continue
        if not model.startswith(PREVIEW_MODELS):
            raise _invalid(f"Tool 'computer_use_preview' is not supported with {model}.", "tools")
        width, height = tool.get("display_width"), tool.get("display_height")
        if not isinstance(width, int) or not isinstance(height, int) or width < 1 or height < 1:
            raise _invalid(
                f"Missing required parameter: 'tools[{number}].display_width' / 'display_height'."
            )
        if tool.get("environment") not in ENVIRONMENTS:
            raise _invalid(
                f"Invalid value for 'tools[{number}].environment': {tool.get('environment')!r}."
            )
        if body.get("truncation") != "auto":
            raise _invalid("truncation must be 'auto' when the computer_use_preview tool is used.")
        display = (width, height)
    return display


def _check_no_duplicates(items: list[Any], previous: str, given: Mapping[str, _Given]) -> None:
    """The stored chain already holds its items: sending one again is a duplicate."""
    held: set[str] = set()
    chained: str | None = previous
    while chained is not None and chained in given:
        held |= given[chained].items
        chained = given[chained].previous
    for item in items:
        if isinstance(item, dict) and item.get("id") in held:
            raise _invalid(f"Duplicate item found with id {item['id']}.", "input")


def _check_pairs(items: list[Any], given: Mapping[str, _Given]) -> None:
    """Items sent again by hand keep the reasoning item each was given after."""
    before: dict[str, str] = {}
    for response in given.values():
        before.update(response.before)
    after = {reasoning: item for item, reasoning in before.items()}
    ids = [item.get("id") if isinstance(item, dict) else None for item in items]
    for number, item_id in enumerate(ids):
        if item_id in before and (number == 0 or ids[number - 1] != before[item_id]):
            kind = items[number].get("type")
            raise _invalid(
                f"Item '{item_id}' of type '{kind}' was provided without its required "
                f"'reasoning' item: '{before[item_id]}'.",
                "input",
            )
        if item_id in after and (number + 1 == len(ids) or ids[number + 1] != after[item_id]):
            raise _invalid(
                f"Item '{item_id}' of type 'reasoning' was provided without its required "
                "following item.",
                "input",
            )


def _check_items(items: list[Any], made: dict[str, frozenset[str]]) -> list[tuple[int, int]]:
    sizes: list[tuple[int, int]] = []
    answered: set[str] = set()
    for number, item in enumerate(items):
        if not isinstance(item, dict):
            raise _invalid(f"input[{number}]: must be an object")
        kind = item.get("type")
        if kind == "computer_call":  # a call resent by a client that stores none
            checks = frozenset(str(c.get("id")) for c in item.get("pending_safety_checks") or [])
            made[str(item.get("call_id"))] = checks
        elif kind == "computer_call_output":
            answered.add(_check_output(item, number, made))
            sizes.append(_image_size(item["output"].get("image_url"), number))
        elif kind in (None, "message"):
            sizes += _check_message(item, number)
    unanswered = set(made) - answered
    if unanswered:
        said = ", ".join(sorted(unanswered))
        raise _invalid(f"No tool output found for computer call {said}.")
    return sizes


def _check_output(item: dict[str, Any], number: int, made: dict[str, frozenset[str]]) -> str:
    """The call_id a computer_call_output answers; Refused where it is not a valid answer."""
    call_id = item.get("call_id")
    if not isinstance(call_id, str) or not call_id:
        raise _invalid(f"Missing required parameter: 'input[{number}].call_id'.")
    if call_id not in made:
        raise _invalid(f"No tool call found for computer_call_output with call_id {call_id}.")
    acknowledged = item.get("acknowledged_safety_checks") or []
    if not isinstance(acknowledged, list) or not all(
        isinstance(c, dict) and isinstance(c.get("id"), str) for c in acknowledged
    ):
        raise _invalid(
            f"Missing required parameter: 'input[{number}].acknowledged_safety_checks[].id'."
        )
    missing = made[call_id] - {c["id"] for c in acknowledged}
    if missing:
        raise _invalid(
            f"The safety checks {', '.join(sorted(missing))} of call {call_id} were not "
            "acknowledged (acknowledged_safety_checks)."
        )
    output = item.get("output")
    kind = output.get("type") if isinstance(output, dict) else None
    if kind != "computer_screenshot":
        raise _invalid(
            f"Invalid value: {kind!r}. Supported values are: 'computer_screenshot'.",
            f"input[{number}].output.type",
        )
    return call_id


def _check_message(item: dict[str, Any], number: int) -> list[tuple[int, int]]:
    role = item.get("role")
    if role not in PART_KINDS:
        raise _invalid(
            f"Invalid value: {role!r}. Supported values are: 'user', 'assistant', 'system', "
            "and 'developer'.",
            f"input[{number}].role",
        )
    content = item.get("content")
    if isinstance(content, str):
        return []
    if not isinstance(content, list):
        raise _invalid(f"input[{number}].content: a string or a list of parts")
    sizes = []
    for index, part in enumerate(content):
        kind = part.get("type") if isinstance(part, dict) else None
        if kind not in PART_KINDS[role]:
            raise _invalid(
                f"Invalid value: {kind!r}. Supported values for the {role} role are: "
                f"{', '.join(sorted(PART_KINDS[role]))}.",
                f"input[{number}].content[{index}]",
            )
        if kind == "input_image":
            sizes.append(_image_size(part.get("image_url"), number))
    return sizes


def _image_size(url: Any, number: int) -> tuple[int, int]:
    """A data URL's image size; Refused unless it is base64 of a PNG, JPEG or WebP that is
    what the URL says."""
    try:
        return data_url_image(url, IMAGE_TYPES)[1]
    except ImageProblem as problem:
        said = {
            "url": "this fake takes image data URLs only",
            "media": f"the image type {problem.found} is not PNG, JPEG or WebP",
            "base64": "the image is not base64",
            "unreadable": "the image data is not a valid image",
            "mismatch": f"the image is {problem.found}, but its data URL says {problem.media}",
        }
        raise _invalid(f"input[{number}]: {said[problem.kind]}") from None


@dataclass(frozen=True)
class Received(fake_http.Received):
    """A request as the skeleton records it (.headers, .body, .refused), which also reads
    as this fake's record was before it: (headers, body, refused), so that tests written
    against that, e.g. `received[-1][1]`, keep working."""

    def __getitem__(self, index: int) -> Any:
        return (self.headers, self.body, self.refused)[index]


class FakeOpenAIComputer(FakeServer[Turn]):
    """The server; a context manager that starts it on a free port and stops it."""

    name = "fake OpenAI computer"
    url_suffix = "/v1"
    methods = frozenset({"POST"})

    def __init__(self, turns: Iterable[Turn] = (), **where: Any) -> None:
        super().__init__(turns, **where)  # key, host, port
        self._given: dict[str, _Given] = {}

    def answer(self, method: str, path: str, headers: dict[str, str], raw: bytes) -> Answer:
        body = parse_json(raw)
        with self._lock:  # the responses given are read and written in one go
            try:
                if path != "/v1/responses":
                    raise _refused(404, "invalid_request_error", f"Invalid URL (POST {path})")
                check_request(headers, body, self.key, self._given)
            except Refused as refused:
                self.record(Received(method, path, headers, body, str(refused)))
                return Answer(refused.status, refused.body)
            serial = self.record(Received(method, path, headers, body, None))
            turn = self.take()
            if turn is None:
                message = f"fake OpenAI computer: the script has no turn left (request {serial})"
                return Answer(400, {"error": {"message": message, "type": "invalid_request_error"}})
            if turn.status != 200:
                kind = "rate_limit_exceeded" if turn.status == 429 else "server_error"
                error = {"message": f"scripted {turn.status}", "type": kind, "code": None}
                return Answer(turn.status, {"error": error}, dict(turn.headers))
            response = _render(turn, str(body.get("model")), serial)
            self._given[response["id"]] = _given(response, body)
            return Answer(200, response, dict(turn.headers))


def _given(response: dict[str, Any], body: dict[str, Any]) -> _Given:
    """What a response holds for the requests after it."""
    output = response["output"]
    calls = {
        item["call_id"]: frozenset(str(c.get("id")) for c in item["pending_safety_checks"])
        for item in output
        if item["type"] == "computer_call"
    }
    before = {
        item["id"]: output[number - 1]["id"]
        for number, item in enumerate(output)
        if number and output[number - 1]["type"] == "reasoning"
    }
    return _Given(
        calls,
        items=frozenset(item["id"] for item in output),
        before=before,
        stored=body.get("store", True) is not False,
        previous=body.get("previous_response_id"),
    )


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
    if turn.action is not None or turn.actions:
        # The real models reason before they act; a client that sends items again by hand
        # must send this reasoning item with its call.
        output.append({"type": "reasoning", "id": f"rs_fake_{serial}", "summary": []})
        call: dict[str, Any] = {
            "type": "computer_call",
            "id": f"cu_fake_{serial}",
            "call_id": f"call_fake_{serial}",
            "pending_safety_checks": [dict(c) for c in turn.safety_checks],
            "status": "completed",
        }
        if turn.action is not None:
            call["action"] = dict(turn.action)
        if turn.actions:
            call["actions"] = [dict(action) for action in turn.actions]
        output.append(call)
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


def main(argv: list[str] | None = None) -> None:
    parser = script_arguments("A fake OpenAI Responses API for computer use.", 8767)
    args = parser.parse_args(argv)
    fake = FakeOpenAIComputer(load_script(args.script), key=args.key, port=args.port)
    fake.serve_by_hand(describe_model)


if __name__ == "__main__":
    main()
