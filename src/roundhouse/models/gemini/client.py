"""`gemini:MODEL`: the Gemini API's generateContent with the computer_use tool, over plain
httpx (no google-genai, no vendor agent loop: the loop is roundhouse's, agents/computer.py).

Each call sends the step's screenshot, shrunk to fit 1440x900 (the screen Google's
reference client uses), as an inline PNG: with the request in a conversation's first turn,
else in the function response of each computer_use call the last answer made. Points come
on the 0-999 grid over it (models/computer/screen.py). roundhouse's own tools (not the
pixel ones, which computer_use is) are function declarations beside the tool. A call's
safety_decision came back as CONFIRM: the person said yes (or --yes did), and it is
acknowledged here (`safety_acknowledgement: "true"`); a no ended the round FAIL, named.
Only the newest `gemini.keep_screenshots` turns keep their screenshots, as the reference
client keeps three. The model's parts go back as given (Gemini 3's thought signatures).

The key: `gemini.api_key`, else GOOGLE_API_KEY, else GEMINI_API_KEY (google-genai's order),
sent in the x-goog-api-key header only. The endpoint: `gemini.base_url`, else
GOOGLE_GEMINI_BASE_URL (google-genai's) or GEMINI_BASE_URL, else Google's. RH_LOOPBACK_ONLY=1
refuses any other machine's; retries as models/computer/posting.py (429
RESOURCE_EXHAUSTED, 5xx, timeouts).
"""

from __future__ import annotations

import asyncio
import base64
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from roundhouse.config import GeminiSettings
from roundhouse.core.usage import Usage
from roundhouse.models.base import (
    Completion,
    ModelError,
    ModelRequest,
    doubts_the_last_answer,
    refuses_the_last_answer,
)
from roundhouse.models.computer.connection import Connected, Vendor, Wiring
from roundhouse.models.computer.images import png_at
from roundhouse.models.computer.observation import PIXEL_TOOLS, Outcome
from roundhouse.models.computer.screen import screen_map_for
from roundhouse.models.computer.transcript import LEFT_OUT
from roundhouse.models.gemini.tools import (
    Pending,
    UnknownModel,
    check_model,
    computer_tool,
    declaration,
    read_answer,
)

if TYPE_CHECKING:
    from typing_extensions import Unpack

DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com"


@dataclass
class _Conversation:
    key: str
    contents: list[dict[str, Any]] = field(default_factory=list)
    pending: tuple[Pending, ...] = ()


GEMINI = Vendor(
    "gemini",
    ("GOOGLE_GEMINI_BASE_URL", "GEMINI_BASE_URL"),
    DEFAULT_BASE_URL,
    ("GOOGLE_API_KEY", "GEMINI_API_KEY"),  # google-genai's order
    lambda key: {"x-goog-api-key": key},
    "Check GEMINI_API_KEY (or GOOGLE_API_KEY) or gemini.api_key in roundhouse.yaml.",
    missing_key="no API key for Gemini: set GEMINI_API_KEY (or GOOGLE_API_KEY) or "
    "gemini.api_key in roundhouse.yaml",
    usage_key="usageMetadata",
)


class GeminiModel(Connected[_Conversation]):
    """A LanguageModel for --agent computer over the Gemini API."""

    def __init__(
        self,
        model: str,
        settings: GeminiSettings,
        **wiring: Unpack[Wiring],
    ) -> None:
        self.model = model
        self.settings = settings
        try:
            check_model(model)
        except UnknownModel as error:
            raise ModelError(str(error)) from None
        self._connect(f"gemini:{model}", GEMINI, settings, tokens_of, **wiring)

    async def complete(self, request: ModelRequest) -> Completion:
        seen = self._computer(request)
        shot = seen.screenshot
        screen = screen_map_for(shot.region, shot.pixels, "gemini", grid=1000)
        chat = self._chat_for(seen, _Conversation)
        png = await asyncio.to_thread(png_at, shot.file, screen.sent)
        image = {"inlineData": {"mimeType": "image/png", "data": base64.b64encode(png).decode()}}
        turn = user_turn(request, chat, seen.outcomes, image)
        custom = [t for t in request.tools if t.name not in PIXEL_TOOLS]
        tools: list[dict[str, Any]] = [computer_tool(self.settings.environment)]
        if custom:
            tools.append(
                {
                    "functionDeclarations": [
                        declaration(t.name, t.description, t.parameters) for t in custom
                    ]
                }
            )
        system = "\n\n".join(m.text for m in request.messages if m.role == "system")
        contents = newest_images([*chat.contents, turn], self.settings.keep_screenshots)
        body: dict[str, Any] = {"contents": contents, "tools": tools}
        if system:
            body["systemInstruction"] = {"parts": [{"text": system}]}
        path = f"/v1beta/models/{self.model}:generateContent"
        answered, attempts = await self._poster.post(path, body, request)
        names = frozenset(t.name for t in custom)
        answer, chat.pending, parts = read_answer(answered, screen, names)
        # Kept as sent: a screenshot never sent again is not held in memory either. An
        # empty answer (a blocked prompt) keeps no turn: user and model must alternate.
        chat.contents = [*contents, {"role": "model", "parts": parts}] if parts else contents[:-1]
        return Completion(
            text=json.dumps(answer, ensure_ascii=False),
            usage=attempts.usage,
            model=self.model,
            extra={
                "finish_reason": ((answered.get("candidates") or [{}])[0] or {}).get(
                    "finishReason"
                ),
                "attempts": attempts.retries + 1,
                "retried": attempts.statuses,
                "display": list(screen.sent),
                "image_files": [str(shot.file)],
                "image_scales": [screen.sent[0] / shot.pixels[0]],
            },
        )


# ------------------------------------------------------------------ pure parts


def tokens_of(usage: Any) -> Usage:
    """usageMetadata: the prompt's tokens (the cached among them), and the answer's with its
    thoughts, which are billed as output."""
    if not isinstance(usage, dict):
        return Usage()
    output = int(usage.get("candidatesTokenCount") or 0) + int(usage.get("thoughtsTokenCount") or 0)
    return Usage(
        0,
        int(usage.get("promptTokenCount") or 0),
        output,
        cache_read_tokens=int(usage.get("cachedContentTokenCount") or 0),
    )


def user_turn(
    request: ModelRequest,
    chat: _Conversation,
    outcomes: tuple[Outcome, ...],
    image: dict[str, Any],
) -> dict[str, Any]:
    """The next user turn: the request and the screen (a conversation's first, or after a
    final answer), or a functionResponse for each call of the last answer, in its order and
    with its id, the screen in each computer_use one. When the last answer was refused,
    each says why instead."""
    if not chat.contents or not chat.pending:
        text = "\n\n".join(m.text for m in request.messages if m.role == "user") or "Go on."
        return {"role": "user", "parts": [{"text": text}, image]}
    refused = request.messages[-1].text if refuses_the_last_answer(request) else None
    parts: list[dict[str, Any]] = []
    for pending in chat.pending:
        response: dict[str, Any] = {}
        if refused is not None:
            response["error"] = pending.why or f"not run: {refused}"
        else:
            said = [outcomes[i] for i in pending.indices if i < len(outcomes)]
            failed = [o for o in said if not o.ok]
            if failed:
                response["error"] = "; ".join(f"{o.function}: {o.text}" for o in failed)
            else:
                response["output"] = "; ".join(o.text for o in said) or "done"
            ran = len(said) == len(pending.indices) and not any(o.declined for o in said)
            if pending.confirm is not None and ran:
                response["safety_acknowledgement"] = "true"
        answer: dict[str, Any] = {"name": pending.name, "response": response}
        if pending.id:
            answer["id"] = pending.id
        if pending.predefined:
            answer["parts"] = [image]
        parts.append({"functionResponse": answer})
    if not any(p.predefined for p in chat.pending):
        parts.append(image)  # the screen, beside the answers of roundhouse's tools
    if doubts_the_last_answer(request):
        parts.append({"text": request.messages[-1].text})
    return {"role": "user", "parts": parts}


def newest_images(contents: list[dict[str, Any]], keep: int) -> list[dict[str, Any]]:
    """The contents with screenshots in their newest `keep` user turns only: an older
    turn's function responses lose theirs, and an image beside them becomes a line that
    says it was left out (new lists: `contents` is not changed)."""
    sent: list[dict[str, Any]] = []
    users = 0
    for content in reversed(contents):
        if content.get("role") == "user" and any(_has_image(p) for p in content["parts"]):
            users += 1
        if content.get("role") != "user" or users <= keep:
            sent.append(content)
            continue
        parts = []
        for part in content["parts"]:
            if "inlineData" in part:
                part = {"text": LEFT_OUT}
            elif "functionResponse" in part and "parts" in part["functionResponse"]:
                answer = {k: v for k, v in part["functionResponse"].items() if k != "parts"}
                part = {"functionResponse": answer}
            parts.append(part)
        sent.append({**content, "parts": parts})
    sent.reverse()
    return sent


def _has_image(part: dict[str, Any]) -> bool:
    answer = part.get("functionResponse")
    return "inlineData" in part or (isinstance(answer, dict) and bool(answer.get("parts")))
