"""`uitars:MODEL`, `qwen-vl:MODEL`, `opencua:MODEL`: an open computer-use model on an
OpenAI-compatible chat-completions server (vLLM, Ollama, LM Studio), over plain httpx.

The loop is roundhouse's (agents/computer.py). Each call sends the step's screenshot as an
image_url data URL, at the size the family's grammar wants (family.py: smart-resized so
that the server's own resize leaves it be, or as taken), with the family's prompt as its
authors publish it. The answer's text is read by the family's grammar, never run
(uitars.py, qwen.py, opencua.py), its points mapped onto the desktop (models/computer/
screen.py), and comes back as roundhouse's JSON answer. An answer outside the grammar is
refused: the agent sends it back, and the model is told what broke and how to answer;
after the agent's retries the round ends naming it.

The endpoint and key are the `openai` settings' (else OPENAI_BASE_URL, OPENAI_API_KEY; a
placeholder key where none is set, as a local server wants none); RH_LOOPBACK_ONLY=1
refuses any other machine's; retries as models/computer/posting.py. The transcript of a
round is kept here, with the newest `local.keep_screenshots` screenshots in it.
"""

from __future__ import annotations

import asyncio
import base64
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from roundhouse.config import LocalSettings, OpenAISettings
from roundhouse.core.usage import Usage
from roundhouse.models.base import (
    Completion,
    ModelError,
    ModelRequest,
    doubts_the_last_answer,
    refuses_the_last_answer,
)
from roundhouse.models.computer import transcript
from roundhouse.models.computer.connection import Connected, Vendor, Wiring
from roundhouse.models.computer.images import png_at
from roundhouse.models.computer.observation import PIXEL_TOOLS, Outcome
from roundhouse.models.computer.screen import screen_map_for
from roundhouse.models.local.actions import GrammarError, Parsed, Pointer, Points
from roundhouse.models.local.family import Grammar, grammar_for

if TYPE_CHECKING:
    from typing_extensions import Unpack


PLACEHOLDER_KEY = "EMPTY"  # a local server takes any key; the SDKs insist on one
UNSUPPORTED = "computer_unsupported"  # no tool has this name: the answer is refused


@dataclass
class _Conversation:
    key: str
    messages: list[dict[str, Any]] = field(default_factory=list)
    pointer: Pointer = field(default_factory=Pointer)
    broken: str | None = None  # why the last answer broke the grammar


# A server of one's own (vLLM, SGLang, LM Studio): no default endpoint, and any key.
LOCAL = Vendor(
    "openai",
    ("OPENAI_BASE_URL",),
    None,
    ("OPENAI_API_KEY",),
    lambda key: {"authorization": f"Bearer {key}"},
    "Check OPENAI_API_KEY or openai.api_key in roundhouse.yaml.",
    missing_url="{name} runs on a server of your own: set openai.base_url "
    "(ROUNDHOUSE_OPENAI__BASE_URL) or OPENAI_BASE_URL, e.g. http://localhost:8000/v1",
    placeholder_key=PLACEHOLDER_KEY,
)


class LocalModel(Connected[_Conversation]):
    """A LanguageModel for --agent computer over an open model's chat completions."""

    def __init__(
        self,
        kind: str,
        model: str,
        settings: OpenAISettings,
        local: LocalSettings,
        **wiring: Unpack[Wiring],
    ) -> None:
        self.model = model
        self.local = local
        try:
            self.grammar: Grammar = grammar_for(kind, model, local)
        except ValueError as error:
            raise ModelError(str(error)) from None
        self._connect(f"{kind}:{model}", LOCAL, settings, tokens_of, **wiring)

    async def complete(self, request: ModelRequest) -> Completion:
        seen = self._computer(request)
        shot = seen.screenshot
        grammar = self.grammar
        screen = screen_map_for(shot.region, shot.pixels, grammar.target, grid=grammar.grid)
        chat = self._chat_for(seen, _Conversation)
        png = await asyncio.to_thread(png_at, shot.file, screen.sent)
        image = {
            "type": "image_url",
            "image_url": {"url": "data:image/png;base64," + base64.b64encode(png).decode()},
        }
        own = tuple(t for t in request.tools if t.name not in PIXEL_TOOLS and grammar.takes_tools)
        custom = frozenset(t.name for t in own)
        if not chat.messages:
            system = grammar.system(screen, own)
            chat.messages = [{"role": "system", "content": system}] if system else []
        turn = next_turn(request, chat, grammar, seen.outcomes, image, custom)
        body = {
            "model": self.model,
            "messages": newest_images([*chat.messages, turn], self.local.keep_screenshots),
            "max_tokens": self.local.max_tokens,
            "temperature": self.local.temperature,
        }
        answered, attempts = await self._poster.post("/chat/completions", body, request)
        text, refusal, finish = message_of(answered)
        if text is None and refusal is None:
            said = f"{self.base_url}: the answer holds no message"
            raise ModelError(said, attempts.usage)
        # Kept once answered: a request that failed leaves the transcript as it was.
        chat.messages += [turn, {"role": "assistant", "content": text or refusal or ""}]
        chat.broken = None
        if refusal is not None:
            answer = as_answer(
                Parsed(text or "", end="FAIL", result=f"the model refused: {refusal}")
            )
        else:
            try:
                points = Points(screen, grammar.fractions)
                parsed = grammar.read(text or "", points, chat.pointer, custom)
                answer = as_answer(parsed)
            except GrammarError as error:
                cut = " (the answer was cut at local.max_tokens)" if finish == "length" else ""
                chat.broken = f"{error}{cut}"
                answer = broken(text or "", chat.broken)
        return Completion(
            text=json.dumps(answer, ensure_ascii=False),
            usage=attempts.usage,
            model=self.name,
            extra={
                "finish_reason": finish,
                "attempts": attempts.retries + 1,
                "retried": attempts.statuses,
                "grammar": grammar.label,
                "display": list(screen.sent),
                "image_files": [str(shot.file)],
                "image_scales": [screen.sent[0] / shot.pixels[0]],
            },
        )


# ------------------------------------------------------------------ pure parts


def tokens_of(usage: Any) -> Usage:
    if not isinstance(usage, dict):
        return Usage()
    return Usage(0, int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0))


def message_of(answered: dict[str, Any]) -> tuple[str | None, str | None, str | None]:
    """The first choice's text, its refusal (an OpenAI-compatible server may give one), and
    why it stopped."""
    choices = answered.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return None, None, None
    message = choices[0].get("message") or {}
    content = message.get("content")
    if isinstance(content, list):  # content parts, as some servers answer
        content = "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    refusal = message.get("refusal")
    return (
        content if isinstance(content, str) else None,
        str(refusal) if refusal else None,
        choices[0].get("finish_reason"),
    )


def next_turn(
    request: ModelRequest,
    chat: _Conversation,
    grammar: Grammar,
    outcomes: tuple[Outcome, ...],
    image: dict[str, Any],
    custom: frozenset[str] = frozenset(),
) -> dict[str, Any]:
    """The next user message: the task and the screen (a conversation's first); after an
    answer refused, why (the grammar break, or the agent's reason) and the form to answer
    in, with no new screen; else the screen, after what roundhouse's own tools gave back, a
    line for each action that failed (and the question, when a FINISH is asked about
    again: agents/base.py)."""
    answered = any(m["role"] == "assistant" for m in chat.messages)
    if refuses_the_last_answer(request) and answered:
        why = chat.broken or request.messages[-1].text
        text = f"That answer could not be used: {why}\n{grammar.again}"
        return {"role": "user", "content": [{"type": "text", "text": text}]}
    if not answered:
        said = "\n\n".join(m.text for m in request.messages if m.role == "user") or "Go on."
        return {"role": "user", "content": [{"type": "text", "text": grammar.opening(said)}, image]}
    # What roundhouse's own tools gave back (Qwen's <tool_response>), and what failed.
    lines = [
        f"<tool_response>\n{o.text}\n</tool_response>" if o.ok else f"{o.function} failed: {o.text}"
        for o in outcomes
        if o.function in custom or not o.ok
    ]
    if doubts_the_last_answer(request):  # a FINISH after an effect not seen: asked again
        lines.append(request.messages[-1].text)
    content = [{"type": "text", "text": "\n".join(lines)}] if lines else []
    return {"role": "user", "content": [*content, image]}


def as_answer(parsed: Parsed) -> dict[str, Any]:
    """Parsed as roundhouse's JSON answer: its actions (CONTINUE each), or its end."""
    answer: dict[str, Any] = {"observation": "", "thought": parsed.thought}
    if parsed.end is not None and not parsed.calls:
        return {**answer, "action": {"status": parsed.end}, "result": parsed.result}
    listed = [{"function": f, "arguments": a, "status": "CONTINUE"} for f, a in parsed.calls]
    if parsed.end is not None:  # actions and then the end: the last one's status is its
        listed[-1]["status"] = parsed.end
        answer["result"] = parsed.result
    answer["action"] = listed or {"status": "CONTINUE"}  # a wait or a move: look again
    return answer


def broken(text: str, why: str) -> dict[str, Any]:
    """An answer outside the grammar, named so that the agent's parser refuses it."""
    action = {"function": UNSUPPORTED, "arguments": {"why": why}, "status": "CONTINUE"}
    return {"observation": "", "thought": text[:400], "action": [action]}


def newest_images(messages: list[dict[str, Any]], keep: int) -> list[dict[str, Any]]:
    """The messages with only their newest `keep` screenshots (transcript.py)."""
    return transcript.newest_images(messages, keep, lambda part: part.get("type") == "image_url")
