"""A fake vLLM (OpenAI-compatible) server for the open computer-use models: real HTTP on
127.0.0.1, scripted answers in the model's own grammar, and the refusals vLLM gives, so
that a client vLLM would refuse is refused here.

Written from vLLM's OpenAI-compatible server and the model authors' published processors
(Qwen's smart_resize in qwen-vl-utils, UI-TARS's README, OpenCUA's), apart from the
clients: it shares no code with them. Every request is checked; the first problem is
answered as vLLM answers it:

- with a key configured (`vllm serve --api-key`), every /v1 path needs
  `Authorization: Bearer KEY`, else 401 `{"error": "Unauthorized"}` (vLLM's middleware);
- a model that is not served: 404 NotFoundError, "The model `X` does not exist.";
- messages that are not a list of {role, content}, a text part without text, a
  max_tokens under 1, more images than `--limit-mm-per-prompt` allows ("At most N
  image(s) may be provided in one prompt."), an image_url that is not a base64 data URL
  of a PNG or JPEG: 400 in vLLM's body `{"error": {"message", "type", "param", "code"}}`,
  of type "Bad Request" where the request's schema refuses it, BadRequestError where the
  serving code does.

Two limits are this fake's, stricter than vLLM: a role other than system, developer,
user, assistant and tool (vLLM's types take any role string, and the chat template renders
it as given), and a part other than text and image_url (vLLM takes audio, video and
embeddings too, which no client of these families sends) are refused.

One check is this fake's own, not vLLM's: vLLM resizes any image itself, but UI-TARS-1.5,
Qwen2.5-VL and OpenCUA (its qwen25 coordinates) answer in absolute pixels of the image
their processor made, so a client that sends an image the processor would resize reads
their points on the wrong grid. An image whose sides are not multiples of the family's
factor, or whose pixels are outside [min_pixels, max_pixels], or whose aspect is over 200,
is answered 400 naming the size smart_resize would give. Qwen3-VL answers on a 0-999 grid
of whatever it saw, so for it the check holds the client to issue 45's rule (the image
sent is the image the model sees, resized by factor 32) rather than saving a point.
Streaming is not faked (400 says so).

    with FakeLocal([Turn(text="Thought: type it\\nAction: type(content='native hello')")],
                   models={"ui-tars-1.5-7b": "uitars"}, key="test") as fake:
        ...  # base_url=fake.base_url (it ends in /v1), api_key=test

By hand: python -m roundhouse.models.local.fake --port 8768 --script turns.yaml
              [--model ui-tars-1.5-7b=uitars] [--key KEY] [--max-images N]

The script is YAML or JSON: a list of turns (or a mapping with `turns:`), each one of

    - text: "Thought: ...\\nAction: click(start_box='(100,200)')"   # the model's raw text
      usage: {prompt_tokens: 1500, completion_tokens: 40}           # optional
    - text: "Thought: half an an"                                   # a truncated answer
      finish_reason: length
    - status: 429                                                   # an HTTP error
      headers: {retry-after: "1"}
    - status: 500

A valid request that finds the script empty gets a 400 saying so.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from roundhouse.models.fake_http import (
    Answer,
    FakeServer,
    ImageProblem,
    Received,
    Refused,
    Scripted,
    data_url_image,
    describe_model,
    load_turns,
    parse_json,
    script_arguments,
)

ROLES = frozenset({"system", "developer", "user", "assistant", "tool"})
FORMATS = {"image/png": "PNG", "image/jpeg": "JPEG", "image/jpg": "JPEG"}


@dataclass(frozen=True)
class Vision:
    """The image a family's processor takes unchanged: Qwen's smart_resize is the identity
    on it (both sides multiples of `factor`, pixels within the bounds, aspect <= 200)."""

    label: str
    factor: int
    min_pixels: int
    max_pixels: int
    max_ratio: int = 200

    def resized(self, width: int, height: int) -> tuple[int, int]:
        """smart_resize's answer, as (width, height), written from its published steps."""
        f = self.factor
        w, h = max(f, round(width / f) * f), max(f, round(height / f) * f)
        if w * h > self.max_pixels:
            beta = math.sqrt(width * height / self.max_pixels)
            w, h = math.floor(width / beta / f) * f, math.floor(height / beta / f) * f
        elif w * h < self.min_pixels:
            beta = math.sqrt(self.min_pixels / (width * height))
            w, h = math.ceil(width * beta / f) * f, math.ceil(height * beta / f) * f
        return w, h

    def problem(self, width: int, height: int) -> str | None:
        """Why the processor would not take this image as it is, or None."""
        if max(width, height) / min(width, height) > self.max_ratio:
            return f"its aspect ratio is over {self.max_ratio}"
        if width % self.factor or height % self.factor:
            return f"its sides are not multiples of {self.factor}"
        if not self.min_pixels <= width * height <= self.max_pixels:
            return f"its {width * height} pixels are outside [{self.min_pixels}, {self.max_pixels}]"
        return None


# Per family, from the authors' published constants: UI-TARS's README (factor 28, min
# 100*28*28, max 16384*28*28; the brief's default for Qwen2.5-VL too), qwen-vl-utils for
# Qwen3-VL (patch 16 x merge 2 = 32; 4 to 16384 tokens of 32*32), OpenCUA's (28, 3136,
# 12845056). Each is configurable: a server may be started with other mm_processor_kwargs.
FAMILIES: dict[str, Vision] = {
    "uitars": Vision("UI-TARS-1.5", 28, 100 * 28 * 28, 16384 * 28 * 28),
    "qwen2.5-vl": Vision("Qwen2.5-VL", 28, 100 * 28 * 28, 16384 * 28 * 28),
    "qwen3-vl": Vision("Qwen3-VL", 32, 4 * 32 * 32, 16384 * 32 * 32),
    "opencua": Vision("OpenCUA", 28, 3136, 12845056),
}
MODELS: dict[str, str] = {
    "ui-tars-1.5-7b": "uitars",
    "qwen2.5-vl-7b-instruct": "qwen2.5-vl",
    "qwen3-vl-8b-instruct": "qwen3-vl",
    "opencua-7b": "opencua",
}


@dataclass(frozen=True)
class Turn(Scripted):
    """One scripted answer: the model's raw text, or an HTTP error."""

    text: str = ""
    finish_reason: str = "stop"

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> Turn:
        known = {"text", "finish_reason", "status", "headers", "usage"}
        if unknown := set(data) - known:
            raise ValueError(f"unknown turn keys {sorted(unknown)} (known: {sorted(known)})")
        return cls(
            text=str(data.get("text", "")),
            finish_reason=str(data.get("finish_reason", "stop")),
            **Scripted.read(data),
        )

    def render(self, model: str, serial: int) -> Answer:
        if self.status != 200:
            kind = {429: "RateLimitError", 503: "ServiceUnavailableError"}.get(
                self.status, "InternalServerError"
            )
            return Answer(self.status, _error(f"scripted {self.status}", kind, self.status),
                          self.headers)  # fmt: skip
        prompt = self.usage.get("prompt_tokens", 1000)
        completion = self.usage.get("completion_tokens", 50)
        body = {
            "id": f"chatcmpl-fake{serial}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": self.text, "tool_calls": []},
                    "logprobs": None,
                    "finish_reason": self.finish_reason,
                }
            ],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            },
        }
        return Answer(200, body, self.headers)


def load_script(path: Path) -> list[Turn]:
    return load_turns(path, "turns", Turn.from_mapping)


def _error(message: str, kind: str, code: int, param: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


def _bad(message: str, param: str | None = None) -> Refused:
    """A request the serving code refuses (vLLM's create_error_response: BadRequestError)."""
    return Refused(400, message, _error(message, "BadRequestError", 400, param))


def _malformed(message: str, param: str | None = None) -> Refused:
    """A body the request's schema refuses (vLLM's validation handler: "Bad Request")."""
    return Refused(400, message, _error(message, "Bad Request", 400, param))


# ------------------------------------------------------------------ the checks


def check_chat(body: Any, served: Mapping[str, Vision], max_images: int | None) -> str:
    """The served model the request names (vLLM takes the first one when none is named);
    Refused with the first problem vLLM, or the model's processor, would have, in vLLM's
    order: the request's schema, the model, then what serving it finds."""
    if not isinstance(body, dict):
        raise _malformed("the body is not a JSON object")
    urls = _image_urls(body.get("messages"))
    model = body.get("model")
    if model is None:
        model = next(iter(served))
    if not isinstance(model, str) or model not in served:
        message = f"The model `{model}` does not exist."
        raise Refused(404, message, _error(message, "NotFoundError", 404, "model"))
    if body.get("stream"):
        raise _bad("this fake does not stream: send stream=false", "stream")
    for name in ("max_tokens", "max_completion_tokens"):
        given = body.get(name)
        if given is not None and (not isinstance(given, int) or given < 1):
            raise _bad(f"{name} must be at least 1, got {given!r}.", name)
    if max_images is not None and len(urls) > max_images:
        raise _bad(f"At most {max_images} image(s) may be provided in one prompt.")
    vision = served[model]
    for number, url in enumerate(urls, 1):
        width, height = _image_size(url, number)
        why = vision.problem(width, height)
        if why is not None:
            want = "x".join(map(str, vision.resized(width, height)))
            raise _bad(
                f"image {number} is {width}x{height}, which {vision.label}'s processor would "
                f"resize ({why}; smart_resize gives {want}), so the coordinates it answers "
                f"would be on another image than the one sent: send it resized to {want}"
            )
    return model


def _image_urls(messages: Any) -> list[str]:
    """The image_url of every part, in order; Refused where a message is malformed."""
    if not isinstance(messages, list) or not messages:
        raise _malformed("messages: a non-empty list of messages is required", "messages")
    urls: list[str] = []
    for number, message in enumerate(messages):
        where = f"messages[{number}]"
        if not isinstance(message, dict):
            raise _malformed(f"{where}: must be an object", "messages")
        role = message.get("role")
        if role not in ROLES:
            raise _malformed(f"{where}.role: {role!r} is not one of {sorted(ROLES)}", "messages")
        content = message.get("content")
        if content is None and role == "assistant" and message.get("tool_calls"):
            continue
        if isinstance(content, str):
            continue
        if not isinstance(content, list):
            raise _malformed(f"{where}.content: must be a string or a list of parts", "messages")
        for index, part in enumerate(content):
            urls += _part_url(part, f"{where}.content[{index}]")
    return urls


def _part_url(part: Any, where: str) -> list[str]:
    kind = part.get("type") if isinstance(part, dict) else None
    if kind == "text":
        if not isinstance(part.get("text"), str):
            raise _malformed(f"{where}.text: a string is required", "messages")
        return []
    if kind == "image_url":
        inner = part.get("image_url")
        url = inner.get("url") if isinstance(inner, dict) else None
        if not isinstance(url, str):
            raise _malformed(f"{where}.image_url.url: a string is required", "messages")
        return [url]
    raise _malformed(f"{where}: this fake takes text and image_url parts, not {kind!r}", "messages")


def _image_size(url: str, number: int) -> tuple[int, int]:
    """The (width, height) of a data URL's PNG or JPEG; Refused if it is not one."""
    if urlsplit(url).scheme in ("http", "https", "file"):
        raise _bad(f"image {number}: this fake fetches nothing: send a base64 data URL")
    try:
        return data_url_image(url, FORMATS)[1]
    except ImageProblem as problem:
        said = {
            "url": "not a data URL of the form data:<type>;base64,<data>",
            "media": f"the media type {problem.found} is not image/png or image/jpeg",
            "base64": "the data is not base64",
            "unreadable": "cannot identify the image",
            "mismatch": f"the data is {problem.found}, but the data URL says {problem.media}",
        }
        raise _bad(f"image {number}: {said[problem.kind]}") from None


# ------------------------------------------------------------------ the server


class FakeLocal(FakeServer[Turn]):
    """vLLM's OpenAI-compatible server, as far as the computer-use clients use it."""

    name = "fake vLLM"
    url_suffix = "/v1"

    def __init__(
        self,
        turns: Iterable[Turn] = (),
        *,
        models: Mapping[str, str | Vision] | None = None,
        key: str | None = None,
        max_images: int | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        super().__init__(turns, key=key, host=host, port=port)
        chosen = MODELS if models is None else models
        if not chosen:
            raise ValueError("a fake vLLM serves at least one model")
        self.models: dict[str, Vision] = {
            name: family if isinstance(family, Vision) else FAMILIES[family]
            for name, family in chosen.items()
        }
        self.max_images = max_images

    def answer(self, method: str, path: str, headers: dict[str, str], raw: bytes) -> Answer:
        body = parse_json(raw) if method == "POST" else None
        try:
            model = self._check(method, urlsplit(path).path, headers, body)
        except Refused as refused:
            self.record(Received(method, path, headers, body, str(refused)))
            return Answer(refused.status, refused.body)
        serial = self.record(Received(method, path, headers, body, None))
        if model is None:
            return Answer(200, self._model_list())
        turn = self.take()
        if turn is None:
            message = f"fake vLLM: the script has no turn left (request {serial})"
            return Answer(400, _error(message, "BadRequestError", 400))
        return turn.render(model, serial)

    def _check(self, method: str, path: str, headers: Mapping[str, str], body: Any) -> str | None:
        """The model a chat completion is for (None for the model list); Refused else."""
        if self.key is not None and path.startswith("/v1"):
            scheme, _, token = (headers.get("authorization") or "").partition(" ")
            if scheme.lower() != "bearer" or token != self.key:
                raise Refused(401, "Unauthorized", {"error": "Unauthorized"})
        routes = {"/v1/models": "GET", "/v1/chat/completions": "POST"}
        if path not in routes:
            raise Refused(404, f"no route {path}", {"detail": "Not Found"})
        if method != routes[path]:
            raise Refused(405, f"{method} {path}", {"detail": "Method Not Allowed"})
        if path == "/v1/models":
            return None
        return check_chat(body, self.models, self.max_images)

    def _model_list(self) -> dict[str, Any]:
        created = int(time.time())
        cards = [
            {"id": name, "object": "model", "created": created, "owned_by": "vllm", "root": name}
            for name in self.models
        ]
        return {"object": "list", "data": cards}

    def image_sizes(self, number: int = -1) -> list[tuple[int, int]]:
        """The sizes of the images a received request sent (the last by default)."""
        body = self.received[number].body
        messages = body.get("messages") if isinstance(body, dict) else None
        return [_image_size(url, n) for n, url in enumerate(_image_urls(messages), 1)]


def _describe(received: Received) -> str:
    return f"{received.method} {received.path} {describe_model(received)}"


def main(argv: list[str] | None = None) -> None:
    parser = script_arguments("A fake vLLM server for computer-use models.", 8768, key=None)
    parser.add_argument(
        "--model",
        action="append",
        metavar="NAME=FAMILY",
        help=f"a served model and its family ({', '.join(FAMILIES)}); default: {MODELS}",
    )
    parser.add_argument("--max-images", type=int, default=None, help="--limit-mm-per-prompt")
    args = parser.parse_args(argv)
    models = None
    if args.model:
        models = dict(entry.split("=", 1) for entry in args.model)
        if unknown := set(models.values()) - set(FAMILIES):
            parser.error(f"unknown families {sorted(unknown)}; known: {sorted(FAMILIES)}")
    fake = FakeLocal(
        load_script(args.script),
        models=models,
        key=args.key,
        max_images=args.max_images,
        port=args.port,
    )
    fake.serve_by_hand(_describe)


if __name__ == "__main__":
    main()
