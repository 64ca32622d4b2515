"""`anthropic:MODEL`: the Messages API with the computer tool, over plain httpx.

The loop is roundhouse's (agents/computer.py): each call sends the step's screenshot, shrunk
to at most 1568 pixels on the long side and about 1.15 megapixels (models/computer/
screen.py), as the result of the tool_use blocks the last answer gave, and declares that
size as the display. The answer's actions come back as roundhouse's JSON answer, their
points mapped onto the desktop (tools.py). roundhouse's own tools the agent offers (an
application by name, a window's controls by number, a field's text, the shell) go beside
the computer tool as custom tools, their calls as they are. The transcript of a round is
kept here, one per conversation (ComputerObservation.conversation).

As the vendor's client: ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL (settings first), headers
x-api-key, anthropic-version and anthropic-beta (the tool version's). As openai_client.py:
RH_LOOPBACK_ONLY=1 refuses an endpoint off this machine; every attempt is counted and a
retry asks the session's limits first; 429, 529 (overloaded), 5xx, timeouts and refused
connections are retried with backoff (Retry-After honoured) and, retries spent, end as a
ModelError naming them. The key is sent in a header and never logged.
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from roundhouse.config import AnthropicSettings
from roundhouse.core.usage import Usage
from roundhouse.devices.contract import ToolName
from roundhouse.models.anthropic.tools import (
    Pending,
    UnknownModel,
    computer_tool,
    custom_tool,
    read_answer,
    tool_version,
)
from roundhouse.models.base import (
    Completion,
    ModelError,
    ModelRequest,
    refuses_the_last_answer,
)
from roundhouse.models.computer import transcript
from roundhouse.models.computer.connection import Connected, Vendor, Wiring
from roundhouse.models.computer.images import png_at, png_of_part
from roundhouse.models.computer.observation import FINE_TOOLS, Outcome, Screenshot
from roundhouse.models.computer.screen import ScreenMap, screen_map_for

if TYPE_CHECKING:
    from typing_extensions import Unpack

DEFAULT_BASE_URL = "https://api.anthropic.com"
API_VERSION = "2023-06-01"
CACHED = {"type": "ephemeral"}


@dataclass
class _Conversation:
    key: str
    messages: list[dict[str, Any]] = field(default_factory=list)
    pending: tuple[Pending, ...] = ()


ANTHROPIC = Vendor(
    "anthropic",
    ("ANTHROPIC_BASE_URL",),
    DEFAULT_BASE_URL,
    ("ANTHROPIC_API_KEY",),
    lambda key: {"x-api-key": key, "anthropic-version": API_VERSION},
    "Check ANTHROPIC_API_KEY or anthropic.api_key in roundhouse.yaml.",
    missing_key="no API key for Anthropic: set ANTHROPIC_API_KEY or anthropic.api_key "
    "in roundhouse.yaml",
)


class AnthropicModel(Connected[_Conversation]):
    """A LanguageModel for --agent computer over Anthropic's Messages API."""

    def __init__(
        self,
        model: str,
        settings: AnthropicSettings,
        **wiring: Unpack[Wiring],
    ) -> None:
        self.model = model
        self.settings = settings
        try:
            self.version = tool_version(model)
        except UnknownModel as error:
            raise ModelError(str(error)) from None
        beta = {"anthropic-beta": self.version.beta}  # the tool version's
        vendor = replace(ANTHROPIC, headers=lambda key: {**ANTHROPIC.headers(key), **beta})
        self._connect(f"anthropic:{model}", vendor, settings, tokens_of, **wiring)

    async def complete(self, request: ModelRequest) -> Completion:
        seen = self._computer(request)
        customs = [t for t in request.tools if t.name not in FINE_TOOLS]  # the tool's own
        shot = seen.screenshot
        screen = screen_map_for(shot.region, shot.pixels, "anthropic")
        chat = self._chat_for(seen, _Conversation)
        image = await asyncio.to_thread(image_block, shot, screen)
        zooms = await asyncio.to_thread(zoom_blocks, shot, screen, chat.pending)
        turn = user_turn(request, chat, seen.outcomes, image, Shown(screen, zooms))
        body = {
            "model": self.model,
            "max_tokens": self.settings.max_tokens,
            "system": [{"type": "text", "text": system_text(request), "cache_control": CACHED}],
            "tools": [
                computer_tool(self.version, screen),
                *(custom_tool(t.name, t.description, t.parameters) for t in customs),
            ],
            "messages": outgoing([*chat.messages, turn], self.settings.keep_screenshots),
        }
        answered, attempts = await self._poster.post("/v1/messages", body, request)
        content = answered.get("content")
        if not isinstance(content, list):
            raise ModelError(f"{self.base_url}: the answer has no content list", attempts.usage)
        # Kept as sent: a screenshot never sent again is not held in memory either.
        kept = [*chat.messages, turn, {"role": "assistant", "content": content}]
        chat.messages = newest_images(kept, self.settings.keep_screenshots)
        custom = frozenset(tool.name for tool in customs)
        answer, chat.pending = read_answer(
            content, answered.get("stop_reason"), screen, custom, self.version
        )
        return Completion(
            text=json.dumps(answer, ensure_ascii=False),
            usage=attempts.usage,
            model=self.model,
            extra={
                "stop_reason": answered.get("stop_reason"),
                "attempts": attempts.retries + 1,
                "retried": attempts.statuses,
                "tool_version": self.version.type,
                "display": list(screen.sent),
                "image_files": [str(shot.file)],
                "image_scales": [screen.sent[0] / shot.pixels[0]],
            },
        )


# ------------------------------------------------------------------ pure parts


def tokens_of(usage: Any) -> Usage:
    """The answer's tokens. Anthropic's input_tokens leaves out the cached ones; ours (as
    genai-prices counts) holds them, and says how many were read from the cache or written."""
    if not isinstance(usage, dict):
        return Usage()
    read = int(usage.get("cache_read_input_tokens") or 0)
    written = int(usage.get("cache_creation_input_tokens") or 0)
    fresh = int(usage.get("input_tokens") or 0)
    output = int(usage.get("output_tokens") or 0)
    return Usage(
        0, fresh + read + written, output, cache_read_tokens=read, cache_write_tokens=written
    )


def system_text(request: ModelRequest) -> str:
    return "\n\n".join(m.text for m in request.messages if m.role == "system")


def image_block(shot: Screenshot, screen: ScreenMap) -> dict[str, Any]:
    """The screenshot at the size the display is declared, as a base64 PNG block."""
    return _png_block(png_at(shot.file, screen.sent))


def zoom_blocks(
    shot: Screenshot, screen: ScreenMap, pending: tuple[Pending, ...]
) -> dict[str, dict[str, Any]]:
    """Each zoom's answer, by its tool_use id: its region of the screenshot, enlarged to
    the display's size (as Anthropic's reference tool answers a zoom)."""
    return {
        one.id: _png_block(png_of_part(shot.file, one.zoom, screen.sent))
        for one in pending
        if one.zoom is not None
    }


def _png_block(png: bytes) -> dict[str, Any]:
    data = base64.b64encode(png).decode("ascii")
    return {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}}


@dataclass(frozen=True)
class Shown:
    """What the results of the last answer show: the screen's map (a cursor_position is
    said in the display's pixels) and each zoom's image, by its tool_use id."""

    screen: ScreenMap
    zooms: Mapping[str, dict[str, Any]] = field(default_factory=dict)


def user_turn(
    request: ModelRequest,
    chat: _Conversation,
    outcomes: tuple[Outcome, ...],
    image: dict[str, Any],
    shown: Shown,
) -> dict[str, Any]:
    """The next user message: the request and the screen (a conversation's first), or a
    tool_result for each tool_use of the last answer, the screen in the last. When the
    last answer was refused, each says why instead, and the screen is not sent again."""
    if not chat.messages or not chat.pending:
        text = "\n\n".join(m.text for m in request.messages if m.role == "user") or "Go on."
        return {"role": "user", "content": [{"type": "text", "text": text}, image]}
    refused = request.messages[-1].text if refuses_the_last_answer(request) else None
    results = []
    for number, pending in enumerate(chat.pending, 1):
        result: dict[str, Any] = {"type": "tool_result", "tool_use_id": pending.id}
        if refused is not None:
            why = pending.why or f"not run: {refused}"
            result |= {"is_error": True, "content": [{"type": "text", "text": why}]}
        else:
            said = outcome_text(pending, outcomes, shown.screen)
            blocks: list[dict[str, Any]] = [{"type": "text", "text": said}]
            if pending.id in shown.zooms:
                blocks.append(shown.zooms[pending.id])
            result["content"] = [*blocks, image] if number == len(chat.pending) else blocks
        results.append(result)
    return {"role": "user", "content": results}


def outcome_text(pending: Pending, outcomes: tuple[Outcome, ...], screen: ScreenMap) -> str:
    if pending.index is None:
        return "the zoomed region" if pending.zoom is not None else "the screen now"
    if pending.index >= len(outcomes):
        return "not run"
    outcome = outcomes[pending.index]
    if not outcome.ok:
        return f"failed: {outcome.text}"
    if outcome.function == ToolName.POINTER_POSITION and isinstance(outcome.output, dict):
        return cursor_text(outcome.output, screen)
    return outcome.text


def cursor_text(point: dict[str, Any], screen: ScreenMap) -> str:
    """Where the pointer is, in the display's pixels, as the reference tool says it
    ("X=512,Y=384"): the desktop's point mapped back onto the image sent."""
    x, y = screen.to_model(float(point["x"]), float(point["y"]))
    width, height = screen.sent
    column = min(max(round(x), 0), width - 1)
    row = min(max(round(y), 0), height - 1)
    return f"X={column},Y={row}"


def outgoing(messages: list[dict[str, Any]], keep: int) -> list[dict[str, Any]]:
    """The messages as sent: only the newest `keep` screenshots (newest_images), and the
    newest message marked as the end of the cached prefix."""
    sent = newest_images(messages, keep)
    last = sent[-1]["content"]
    if isinstance(last, list) and last:
        last[-1] = {**last[-1], "cache_control": CACHED}
    return sent


def newest_images(messages: list[dict[str, Any]], keep: int) -> list[dict[str, Any]]:
    """The messages with only their newest `keep` screenshots (transcript.py)."""
    return transcript.newest_images(messages, keep, lambda block: block.get("type") == "image")
