"""A fake Anthropic Messages API: real HTTP on 127.0.0.1, scripted answers, and the
refusals the real API gives, so that a client that would be refused there is refused here.

Written from the API's documentation, apart from the client (it shares no code with
tools.py or client.py): every request is checked, and the first problem is answered as
the API answers it (400 invalid_request_error, 401 authentication_error):

- x-api-key is the key the fake was given; anthropic-version is 2023-06-01;
- max_tokens and model are given; messages alternate, from the user;
- the computer tool's version is one the model takes, and anthropic-beta names its beta;
  the tool has no field its version lacks (enable_zoom is computer_20251124's); custom
  tools have unique names and an object input_schema (the tables: fake_tables.py);
- display_width_px x display_height_px is the size of the last screenshot sent, and no
  image is over 1568 pixels on its long side or about 1600 tokens (this fake's own rule:
  the API would shrink it, and the clicks would miss);
- images are base64 JPEG, PNG, GIF or WebP whose data is the media type they name, of at
  most 5 MB and 8000 pixels a side, 100 a request;
- every tool_use of an assistant message is answered by a tool_result in the next user
  message, once, and every tool_result answers a tool_use of the message before it; the
  tool_results come first in that message, before any text or image; is_error is a
  boolean, and a result's content is text, image, search_result, document or
  tool_reference blocks;
- every message has content, and no text block is empty;
- at most 4 blocks carry cache_control, each {type: ephemeral, ttl: 5m or 1h}.

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
cache_creation_input_tokens). A valid request that finds the script empty gets a 400;
so does one whose turn answers an action its computer tool lacks (zoom under
computer_20250124, or without enable_zoom) or with an input the action never has.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from roundhouse.models.anthropic.fake_tables import (
    COMPUTER_FIELDS,
    TOOLS,
    ZOOMING,
    action_problem,
)
from roundhouse.models.fake_http import (
    Answer,
    FakeServer,
    ImageProblem,
    Received,
    Refused,
    Scripted,
    decoded_image,
    describe_model,
    load_turns,
    parse_json,
    script_arguments,
)

VERSION = "2023-06-01"
TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
# This fake's own rule: over 1568 px on the long side, or about 1600 tokens (w*h/750, the
# vision documentation's estimate), the API shrinks the image, and the clicks miss.
LONG_SIDE = 1568
MAX_TOKENS_UNSHRUNK = 1600
# The API's image limits (vision documentation): 5 MB, 8000 px a side, at most 100 images
# a request. (Its 2000 px a side over 20 images is left out: LONG_SIDE refuses first.)
MAX_IMAGE_BYTES = 5 * 1024 * 1024
MAX_SIDE = 8000
MAX_IMAGES = 100
MEDIA_TYPES = {"image/jpeg": "JPEG", "image/png": "PNG", "image/gif": "GIF", "image/webp": "WEBP"}
RESULT_BLOCKS = frozenset({"text", "image", "search_result", "document", "tool_reference"})


@dataclass(frozen=True)
class Turn(Scripted):
    """One scripted answer."""

    actions: tuple[dict[str, Any], ...] = ()
    calls: tuple[dict[str, Any], ...] = ()  # custom tools' calls: {name, input}
    text: str = ""
    stop_reason: str | None = None  # default: tool_use with actions, else end_turn

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> Turn:
        return cls(
            actions=tuple(data.get("actions") or ()),
            calls=tuple(data.get("calls") or ()),
            text=str(data.get("text", "")),
            stop_reason=data.get("stop_reason"),
            **Scripted.read(data),
        )

    def render(self, model: str, serial: int) -> Answer:
        if self.status != 200:
            kind = {429: "rate_limit_error", 529: "overloaded_error"}.get(self.status, "api_error")
            error = {"type": "error", "error": {"type": kind, "message": f"scripted {self.status}"}}
            return Answer(self.status, error, dict(self.headers))
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
        return Answer(200, message, dict(self.headers))


def load_script(path: Path) -> list[Turn]:
    return load_turns(path, "turns", Turn.from_mapping)


# ------------------------------------------------------------------ the checks


def _refused(status: int, kind: str, message: str) -> Refused:
    """A refusal in the API's error body."""
    return Refused(status, message, {"type": "error", "error": {"type": kind, "message": message}})


def _invalid(message: str) -> Refused:
    return _refused(400, "invalid_request_error", message)


@dataclass(frozen=True)
class Declared:
    """The computer tool a request declared: its version, and whether it may zoom."""

    kind: str
    zoom: bool = False


def check_request(headers: Mapping[str, str], body: Any, key: str | None) -> Declared | None:
    """Refused with the first problem the API would answer this request with; else the
    computer tool it declared (None: none)."""
    if headers.get("x-api-key") != key:
        raise _refused(401, "authentication_error", "invalid x-api-key")
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
    _check_system(body.get("system"))
    declared = _check_tool(body.get("tools"), model, headers.get("anthropic-beta", ""))
    sizes = _check_messages(messages)
    _check_cache_control(body)
    if declared is not None:
        tool, display = declared
        if not sizes:
            raise _invalid("the computer tool is declared but no screenshot was sent")
        if sizes[-1] != display:
            raise _invalid(
                f"display_width_px x display_height_px is {display[0]}x{display[1]}, but the "
                f"last screenshot sent is {sizes[-1][0]}x{sizes[-1][1]}"
            )
        return tool
    return None


def _check_system(system: Any) -> None:
    if system is None or isinstance(system, str):
        return
    if not isinstance(system, list) or not all(
        isinstance(block, dict) and block.get("type") == "text" for block in system
    ):
        raise _invalid("system: a string or a list of text blocks")
    for block in system:
        _check_text(block, "system")


def _check_tool(tools: Any, model: str, beta: str) -> tuple[Declared, tuple[int, int]] | None:
    """The computer tool declared, and its display's size; refused where a tool is wrong."""
    if tools is None:
        return None
    if not isinstance(tools, list):
        raise _invalid("tools: must be a list")
    declared = None
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
        known = COMPUTER_FIELDS | ({"enable_zoom"} if kind == ZOOMING else set())
        if extra := sorted(set(tool) - known):
            raise _invalid(f"tools.{number}.{kind}.{extra[0]}: Extra inputs are not permitted")
        if not isinstance(tool.get("enable_zoom", False), bool):
            raise _invalid(f"tools.{number}.enable_zoom: Input should be a valid boolean")
        width, height = tool.get("display_width_px"), tool.get("display_height_px")
        if not isinstance(width, int) or not isinstance(height, int) or width < 1 or height < 1:
            raise _invalid("display_width_px and display_height_px must be positive integers")
        declared = (Declared(kind, tool.get("enable_zoom") is True), (width, height))
    return declared


def _check_messages(messages: list[Any]) -> list[tuple[int, int]]:
    """The sizes of the images sent, in order; refused where roles, content, tool ids or
    images go wrong."""
    images: list[tuple[tuple[int, int], int]] = []  # each image's size and bytes
    asked: set[str] = set()  # the tool_use ids of the assistant message before
    for number, message in enumerate(messages):
        role = message.get("role") if isinstance(message, dict) else None
        if role != ("user" if number % 2 == 0 else "assistant"):
            raise _invalid(f"messages.{number}: roles must alternate, from the user")
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if not isinstance(blocks, list):
            raise _invalid(f"messages.{number}.content: must be a string or a list")
        last_assistant = role == "assistant" and number == len(messages) - 1
        if not blocks or (content == "" and not last_assistant):
            raise _invalid(
                f"messages.{number}: all messages must have non-empty content except for the "
                "optional final assistant message"
            )
        for index, block in enumerate(blocks):
            if not isinstance(block, dict):
                raise _invalid(f"messages.{number}.content.{index}: must be an object")
            if block.get("type") == "text" and not (last_assistant and content == ""):
                _check_text(block, f"messages.{number}.content.{index}")
            images += _image_size(block, number)
        if role == "assistant":
            asked = {b["id"] for b in blocks if b.get("type") == "tool_use"}
            continue
        images += _check_results(blocks, asked, number)
        asked = set()
    if messages and messages[-1].get("role") != "user":
        raise _invalid("the last message must be the user's")
    _check_image_count(images)
    return [size for size, _ in images]


def _check_results(
    blocks: list[dict[str, Any]], asked: set[str], number: int
) -> list[tuple[tuple[int, int], int]]:
    """The images of a user message's tool results; refused where a tool_result answers no
    tool_use, answers one twice, comes after other blocks, or is malformed."""
    images: list[tuple[tuple[int, int], int]] = []
    answered: set[str] = set()
    others = False  # a block that is not a tool_result came first
    for index, block in enumerate(blocks):
        where = f"messages.{number}.content.{index}"
        if block.get("type") != "tool_result":
            others = True
            continue
        use_id = block.get("tool_use_id")
        if use_id not in asked:
            raise _invalid(
                f"messages.{number}: unexpected tool_use_id {use_id!r} in tool_result "
                "blocks: each tool_result must answer a tool_use of the message before"
            )
        if use_id in answered:
            raise _invalid(
                f"messages.{number}: each tool_use must have a single result. Found multiple "
                f"`tool_result` blocks with id: {use_id}"
            )
        if others:
            raise _invalid(
                f"messages.{number}: tool_result blocks must come first in the content, before "
                f"any text or image ({where} comes after one): the tool_use ids were found "
                "without tool_result blocks immediately after"
            )
        answered.add(use_id)
        if "is_error" in block and not isinstance(block["is_error"], bool):
            raise _invalid(f"{where}.is_error: Input should be a valid boolean")
        inner = block.get("content")
        if inner is None or isinstance(inner, str):
            continue
        if not isinstance(inner, list):
            raise _invalid(f"{where}.content: a string or a list of blocks")
        for place, part in enumerate(inner):
            if not isinstance(part, dict) or part.get("type") not in RESULT_BLOCKS:
                kind = part.get("type") if isinstance(part, dict) else None
                raise _invalid(
                    f"{where}.content.{place}: Input tag {kind!r} found using 'type' does not "
                    f"match any of the expected tags: {', '.join(sorted(RESULT_BLOCKS))}"
                )
            if part["type"] == "text":
                _check_text(part, f"{where}.content.{place}")
            images += _image_size(part, number)
    if missing := asked - answered:
        raise _invalid(
            f"messages.{number}: tool_use ids were found without tool_result blocks "
            f"immediately after: {', '.join(sorted(missing))}"
        )
    return images


def _check_text(block: dict[str, Any], where: str) -> None:
    text = block.get("text")
    if not isinstance(text, str):
        raise _invalid(f"{where}.text: Field required")
    if not text:
        raise _invalid(f"{where}: text content blocks must be non-empty")


def _check_cache_control(body: dict[str, Any]) -> None:
    """At most 4 breakpoints, each an ephemeral one with a known ttl."""
    marks = [block["cache_control"] for block in _blocks(body) if block.get("cache_control")]
    for mark in marks:
        if not isinstance(mark, dict) or mark.get("type") != "ephemeral":
            raise _invalid(f"cache_control: type must be 'ephemeral', got {mark!r}")
        if mark.get("ttl", "5m") not in ("5m", "1h"):
            raise _invalid(f"cache_control.ttl: must be '5m' or '1h', got {mark.get('ttl')!r}")
    if len(marks) > 4:
        raise _invalid(
            f"A maximum of 4 blocks with cache_control may be provided. Found {len(marks)}."
        )


def _blocks(body: dict[str, Any]) -> list[dict[str, Any]]:
    """Every block that may carry cache_control: the system's, the tools, the messages'
    and the tool results' own."""
    found: list[Any] = []
    if isinstance(body.get("system"), list):
        found += body["system"]
    found += body.get("tools") or []
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else ():
            found.append(block)
            inner = block.get("content") if isinstance(block, dict) else None
            found += inner if isinstance(inner, list) else []
    return [block for block in found if isinstance(block, dict)]


def _image_size(block: dict[str, Any], number: int) -> list[tuple[tuple[int, int], int]]:
    """The image's size and its bytes, or nothing if the block is no image; refused where
    the API refuses the image."""
    if block.get("type") != "image":
        return []
    source = block.get("source") or {}
    media = source.get("media_type")
    if source.get("type") != "base64":
        raise _invalid(f"messages.{number}: this fake takes base64 image sources only")
    if media not in MEDIA_TYPES:
        raise _invalid(
            f"messages.{number}: image.source.media_type: Input should be "
            f"{', '.join(sorted(MEDIA_TYPES))} (got {media!r})"
        )
    try:
        (width, height), length = decoded_image(source.get("data", ""), media, MEDIA_TYPES)
    except ImageProblem as problem:
        said = {
            "base64": "the image data is not base64",
            "unreadable": "Could not process image",
            "mismatch": f"Image does not match the provided media type {media}",
        }
        raise _invalid(f"messages.{number}: {said[problem.kind]}") from None
    if length > MAX_IMAGE_BYTES:
        raise _invalid(
            f"messages.{number}: image exceeds 5 MB maximum: {length} bytes > "
            f"{MAX_IMAGE_BYTES} bytes"
        )
    if max(width, height) > MAX_SIDE:
        raise _invalid(
            f"messages.{number}: image dimensions exceed max allowed size: {MAX_SIDE} pixels"
        )
    if max(width, height) > LONG_SIDE:
        raise _invalid(
            f"messages.{number}: an image of {width}x{height} is over {LONG_SIDE} pixels "
            "on its long side (the API would shrink it, and the clicks would miss)"
        )
    if width * height / 750 > MAX_TOKENS_UNSHRUNK:
        raise _invalid(
            f"messages.{number}: an image of {width}x{height} is about "
            f"{width * height // 750} tokens, over {MAX_TOKENS_UNSHRUNK} (the API would shrink "
            "it, and the clicks would miss)"
        )
    return [((width, height), length)]


def _check_image_count(images: list[tuple[tuple[int, int], int]]) -> None:
    if len(images) > MAX_IMAGES:
        raise _invalid(f"Too many images: {len(images)} > {MAX_IMAGES} images per request")


# ------------------------------------------------------------------ the server


class FakeAnthropic(FakeServer[Turn]):
    """The server; a context manager that starts it on a free port and stops it."""

    name = "fake Anthropic"
    methods = frozenset({"POST"})

    def answer(self, method: str, path: str, headers: dict[str, str], raw: bytes) -> Answer:
        body = parse_json(raw)
        try:
            if path != "/v1/messages":
                raise _refused(404, "not_found_error", f"unknown path {path}")
            declared = check_request(headers, body, self.key)
        except Refused as refused:
            self.record(Received(method, path, headers, body, str(refused)))
            return Answer(refused.status, refused.body)
        with self._lock:  # the request's number and its turn go together
            serial = self.record(Received(method, path, headers, body, None))
            turn = self.take()
        if turn is None:
            return _script_error(f"the script has no turn left (request {serial})")
        if problem := _turn_problem(turn, declared):
            return _script_error(f"the script answers what the API never would: {problem}")
        return turn.render(str(body.get("model")), serial)


def _turn_problem(turn: Turn, declared: Declared | None) -> str | None:
    """Why the API would never give this answer to the request (an action its computer
    tool lacks, or an input that action never has), or None."""
    if turn.actions and declared is None:
        return "computer actions, but the request declared no computer tool"
    for action in turn.actions:
        assert declared is not None
        if problem := action_problem(action, declared.kind, declared.zoom):
            return problem
    return None


def _script_error(message: str) -> Answer:
    """A 400 that says the script, not the client, went wrong."""
    error = {"type": "invalid_request_error", "message": f"fake Anthropic: {message}"}
    return Answer(400, {"type": "error", "error": error})


def main(argv: list[str] | None = None) -> None:
    args = script_arguments("A fake Anthropic Messages API.", 8766).parse_args(argv)
    FakeAnthropic(load_script(args.script), key=args.key, port=args.port).serve_by_hand(
        describe_model
    )


if __name__ == "__main__":
    main()
