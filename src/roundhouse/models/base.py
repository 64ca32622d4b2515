"""The language-model contract every agent talks through.

A model gets a ModelRequest (chat messages, plus the typed observation they were rendered
from) and returns a Completion: text and Usage. Real models read the messages; the offline
planner reads the typed observation; the replay model reads neither.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, Protocol

AgentRole = Literal["host", "app", "linux", "eval"]


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


def refuses_the_last_answer(request: ModelRequest) -> bool:
    """Whether `request` sends the model's last answer back as refused."""
    last = request.messages[-1] if request.messages else None
    return last is not None and last.role == "user" and last.text.startswith(REFUSAL)


class NoValidAnswer(RuntimeError):
    """The model kept answering invalidly; the round ends in ERROR with this reason."""


@dataclass(frozen=True)
class Usage:
    """What model calls spent: requests, tokens, and their cost in dollars.

    One value from a model's answer to the session's total, in memory and in the logs
    (response.log's "usage"). A model counts requests and tokens; pricing (models/pricing.py)
    sets the cost. `cost` is None until priced, and stays None when no price is known: an
    unknown cost stays unknown in every sum, and is never shown as $0.00.
    """

    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float | None = None

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.requests + other.requests,
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            None if self.cost is None or other.cost is None else self.cost + other.cost,
        )

    def priced(self, dollars: float | None) -> Usage:
        return replace(self, cost=dollars)

    @property
    def cost_known(self) -> bool:
        return self.cost is not None

    @property
    def cost_text(self) -> str:
        """ "$0.80", "$0.000474" (a cheap model's step is not free: its digits show), "unknown"."""
        if self.cost is None:
            return "unknown"
        if 0 < self.cost < 0.01:
            return f"${self.cost:.6f}".rstrip("0")
        return f"${self.cost:.2f}"


NOTHING_SPENT = Usage(cost=0.0)  # where sums start: no call made, nothing spent, and known


@dataclass(frozen=True)
class Message:
    role: Literal["system", "user", "assistant"]
    text: str
    images: tuple[Path, ...] = ()  # PNG files; a vision model gets them, the log names them


@dataclass(frozen=True)
class ModelRequest:
    agent: AgentRole
    messages: tuple[Message, ...]
    observation: object | None = None
    response_schema: dict[str, Any] | None = None
    # The tools the prompt lists, for a model that takes them as native tool calls
    # (openai.native_tools); the others read them in the prompt alone.
    tools: tuple[OfferedTool, ...] = ()


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
