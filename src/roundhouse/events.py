"""Typed events the loop emits; observers (the CLI display, tests) subscribe.

The loop renders nothing itself. An observer that raises is our bug: it propagates.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from roundhouse.models.base import Message, Usage
from roundhouse.states import RoundState
from roundhouse.trajectory import StepRecord


@dataclass(frozen=True)
class RoundStarted:
    round_id: int
    request: str


@dataclass(frozen=True)
class StepTaken:
    step: StepRecord


@dataclass(frozen=True)
class PromptSent:
    """A request to a model, as it was sent (the store writes request.log from it)."""

    round_id: int
    agent: str
    attempt: int
    messages: tuple[Message, ...]


@dataclass(frozen=True)
class AnswerRejected:
    """The model's answer was invalid and goes back to it with the reason."""

    round_id: int
    agent: str
    attempt: int
    reason: str


@dataclass(frozen=True)
class SubtaskEnded:
    round_id: int
    sub_round_id: int
    agent: str
    snapshot_files: tuple[str, ...]


@dataclass(frozen=True)
class CostUpdated:
    round_id: int
    round_usage: Usage
    session_usage: Usage


@dataclass(frozen=True)
class RoundEnded:
    round_id: int
    state: RoundState
    result: str | None
    error: str | None
    steps: int
    usage: Usage


Event = (
    RoundStarted | StepTaken | PromptSent | AnswerRejected | SubtaskEnded | CostUpdated | RoundEnded
)
Observer = Callable[[Event], None]


class EventBus:
    def __init__(self) -> None:
        self._observers: list[Observer] = []

    def subscribe(self, observer: Observer) -> None:
        self._observers.append(observer)

    def emit(self, event: Event) -> None:
        for observer in self._observers:
            observer(event)
