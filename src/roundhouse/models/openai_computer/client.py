"""`openai-computer:MODEL`: OpenAI's Responses API with its computer tool, over plain httpx
(no vendor agent loop: the loop is roundhouse's, agents/computer.py). The tool follows the
model (tools.py `uses_ga`; `openai.computer_tool` overrides): computer_use_preview for
computer-use-preview, the GA `computer` for gpt-5.4 and later, whose calls may carry
several actions (each call answered once, after all of them).

Each call sends the step's screenshot, shrunk to a short side of at most 768 pixels
(models/computer/screen.py), declared as the display; after the first, as the
computer_call_output of each call the last response gave, chained to it by
previous_response_id (the API keeps the conversation). A call's pending_safety_checks
came back as CONFIRM: the person said yes (or --yes did), and they are acknowledged here;
a no ended the round before it got here. The endpoint and key are the `openai` settings'
(else OPENAI_BASE_URL, OPENAI_API_KEY); RH_LOOPBACK_ONLY=1 refuses any other machine's;
retries as models/computer/posting.py.
"""

from __future__ import annotations

import asyncio
import base64
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from roundhouse.config import OpenAISettings
from roundhouse.core.usage import Usage
from roundhouse.models.base import Completion, ModelRequest, refuses_the_last_answer
from roundhouse.models.computer.connection import Connected, Vendor, Wiring
from roundhouse.models.computer.images import png_at
from roundhouse.models.computer.observation import Outcome
from roundhouse.models.computer.screen import screen_map_for
from roundhouse.models.openai_computer.tools import (
    PendingCall,
    computer_tool,
    read_answer,
    uses_ga,
)

if TYPE_CHECKING:
    from typing_extensions import Unpack

DEFAULT_BASE_URL = "https://api.openai.com/v1"


@dataclass
class _Conversation:
    key: str
    previous: str | None = None  # the last response's id
    pending: tuple[PendingCall, ...] = ()


OPENAI = Vendor(
    "openai",
    ("OPENAI_BASE_URL",),
    DEFAULT_BASE_URL,
    ("OPENAI_API_KEY",),
    lambda key: {"authorization": f"Bearer {key}"},
    "Check OPENAI_API_KEY or openai.api_key in roundhouse.yaml.",
    missing_key="no API key for OpenAI: set OPENAI_API_KEY or openai.api_key in roundhouse.yaml",
)


class OpenAIComputerModel(Connected[_Conversation]):
    """A LanguageModel for --agent computer over OpenAI's Responses API."""

    def __init__(
        self,
        model: str,
        settings: OpenAISettings,
        **wiring: Unpack[Wiring],
    ) -> None:
        self.model = model
        self.ga = uses_ga(model, settings.computer_tool)
        self._connect(f"openai-computer:{model}", OPENAI, settings, tokens_of, **wiring)

    async def complete(self, request: ModelRequest) -> Completion:
        seen = self._computer(request)
        shot = seen.screenshot
        screen = screen_map_for(shot.region, shot.pixels, "openai")
        chat = self._chat_for(seen, _Conversation)
        png = await asyncio.to_thread(png_at, shot.file, screen.sent)
        image = "data:image/png;base64," + base64.b64encode(png).decode("ascii")
        body: dict[str, Any] = {
            "model": self.model,
            "tools": [computer_tool(screen, self.ga)],
            "input": next_input(request, chat, seen.outcomes, image),
            "truncation": "auto",
            "instructions": "\n\n".join(m.text for m in request.messages if m.role == "system"),
        }
        if self.ga:  # the chain lives on the server: previous_response_id needs it stored
            body["store"] = True
        if chat.previous is not None:
            body["previous_response_id"] = chat.previous
        answered, attempts = await self._poster.post("/responses", body, request)
        chat.previous = str(answered.get("id") or "") or None
        answer, chat.pending = read_answer(answered, screen)
        return Completion(
            text=json.dumps(answer, ensure_ascii=False),
            usage=attempts.usage,
            model=str(answered.get("model") or self.model),
            extra={
                "response_id": chat.previous,
                "attempts": attempts.retries + 1,
                "retried": attempts.statuses,
                "display": list(screen.sent),
                "tool": "computer" if self.ga else "computer_use_preview",
                "image_files": [str(shot.file)],
                "image_scales": [screen.sent[0] / shot.pixels[0]],
            },
        )


def tokens_of(usage: Any) -> Usage:
    """input_tokens holds the cached ones (input_tokens_details.cached_tokens), as ours do."""
    if not isinstance(usage, dict):
        return Usage()
    cached = int((usage.get("input_tokens_details") or {}).get("cached_tokens") or 0)
    return Usage(
        0, int(usage.get("input_tokens") or 0), int(usage.get("output_tokens") or 0),
        cache_read_tokens=cached,
    )  # fmt: skip


def next_input(
    request: ModelRequest, chat: _Conversation, outcomes: tuple[Outcome, ...], image: str
) -> list[dict[str, Any]]:
    """What this request adds: the request and the screen (a conversation's first), or the
    screen as each call's output, and a line for what failed or was refused."""
    if chat.previous is None or not chat.pending:
        text = "\n\n".join(m.text for m in request.messages if m.role == "user") or "Go on."
        content = [
            {"type": "input_text", "text": text},
            {"type": "input_image", "image_url": image},
        ]
        return [{"role": "user", "content": content}]
    refused = request.messages[-1].text if refuses_the_last_answer(request) else None
    items: list[dict[str, Any]] = []
    notes: list[str] = []
    for pending in chat.pending:
        item: dict[str, Any] = {
            "type": "computer_call_output",
            "call_id": pending.call_id,
            "output": {"type": "computer_screenshot", "image_url": image},
        }
        said = [outcomes[i] for i in pending.indices if i < len(outcomes)]
        # The person was asked before the call's first action: a yes to it is the ack.
        if pending.checks and refused is None and said and not said[0].declined:
            item["acknowledged_safety_checks"] = list(pending.checks)
        items.append(item)
        if refused is not None:
            notes.append(pending.why or f"Nothing was done: {refused}")
        else:
            notes += [f"{o.function} failed: {o.text}" for o in said if not o.ok]
    if notes:
        items.append(
            {"role": "user", "content": [{"type": "input_text", "text": "\n".join(notes)}]}
        )
    return items
