"""The language-model contract every agent talks through.

A model gets a ModelRequest (chat messages, plus the typed observation they were rendered
from) and returns a Completion: text and Usage. Real models read the messages; the offline
planner reads the typed observation; the replay model reads neither.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from roundhouse.core.messages import Message
from roundhouse.core.usage import Usage

AgentRole = Literal["host", "app", "linux", "computer", "eval"]


class ModelError(RuntimeError):
    """The model cannot answer at all (bad key, unknown model, unreachable, out of answers).

    usage: what the failed attempts cost all the same (requests are counted even when
    they fail), so that a step that ends in this error still records them.
    """

    def __init__(self, message: str, usage: Usage | None = None) -> None:
        super().__init__(message)
        self.usage = usage if usage is not None else Usage()  # tokens of the attempts, unpriced


# How a refused answer goes back to the model (agents/asking.py): a replay knows by it that
# the answer it gave last was refused here.
REFUSAL = "That answer is invalid:"


# How the step tells a model that its FINISH follows an action whose effect was not seen
# (agents/base.py): asked once more, with a fresh look, before the FINISH stands.
DOUBT = "Before your FINISH stands:"


def doubts_the_last_answer(request: ModelRequest) -> bool:
    """Whether `request` asks the model again about its FINISH after an unseen effect."""
    last = request.messages[-1] if request.messages else None
    return last is not None and last.role == "user" and last.text.startswith(DOUBT)


def refuses_the_last_answer(request: ModelRequest) -> bool:
    """Whether `request` sends the model's last answer back as refused."""
    last = request.messages[-1] if request.messages else None
    return last is not None and last.role == "user" and last.text.startswith(REFUSAL)


class NoValidAnswer(RuntimeError):
    """The model kept answering invalidly; the round ends in ERROR with this reason."""


@dataclass(frozen=True)
class ModelRequest:
    agent: AgentRole
    messages: tuple[Message, ...]
    observation: object | None = None
    response_schema: dict[str, Any] | None = None
    # The tools the prompt lists, for a model that takes them as native tool calls
    # (openai.native_tools); the others read them in the prompt alone.
    tools: tuple[OfferedTool, ...] = ()
    # Called by a model before it sends this request again by itself (a retry), with what
    # its attempts spent so far; raises core/limits.py's LimitReached when the session's
    # limits allow no more requests. Set by the model pool (models/priced.py), which checks
    # the first attempt itself.
    before_retry: Callable[[Usage], None] | None = None


@dataclass(frozen=True)
class OfferedTool:
    name: str
    description: str  # the one sentence the prompt gives
    parameters: dict[str, Any]  # JSON schema of the arguments


@dataclass(frozen=True)
class Completion:
    text: str
    usage: Usage
    model: str  # the name prices are looked up by
    extra: dict[str, Any] = field(default_factory=dict)


class LanguageModel(Protocol):
    name: str

    async def complete(self, request: ModelRequest) -> Completion: ...
