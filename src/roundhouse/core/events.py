"""Typed events the loop emits. Observers subscribe: the CLI display, tests, and the
recorder (recorder.py), the one writer of the log folder.

The loop renders nothing and writes nothing itself. An observer that raises is our bug: it
propagates.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from roundhouse.core.blackboard import Blackboard
from roundhouse.core.evaluation import Evaluation
from roundhouse.core.messages import Message
from roundhouse.core.record import RoundRecord, SessionInfo
from roundhouse.core.states import RoundState
from roundhouse.core.trajectory import StepRecord
from roundhouse.core.usage import Usage


@dataclass(frozen=True)
class SessionDescribed:
    """The session as resume needs it: when it opens and when a request arrives."""

    info: SessionInfo


@dataclass(frozen=True)
class RoundStarted:
    round_id: int
    request: str


@dataclass(frozen=True)
class RecordChanged:
    """A round's record changed state (started, ended, marked interrupted)."""

    record: RoundRecord


@dataclass(frozen=True)
class StepTaken:
    step: StepRecord


@dataclass(frozen=True)
class BlackboardChanged:
    blackboard: Blackboard


@dataclass(frozen=True)
class PromptSent:
    """A request to a model, as it was sent."""

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
class SnapshotTaken:
    """What the round looked like at a subtask end (sub_round_id) or at its end (None):
    the files the device wrote, and the UI tree when one is kept (written by the recorder)."""

    round_id: int
    sub_round_id: int | None
    files: tuple[str, ...]
    ui_tree: tuple[str, Any] | None = None  # (file name under the log folder, the tree)


@dataclass(frozen=True)
class SubtaskEnded:
    round_id: int
    sub_round_id: int
    agent: str
    snapshot_files: tuple[str, ...]


@dataclass(frozen=True)
class Evaluated:
    """A judge's verdict on a round (round_id set) or on the session."""

    evaluation: Evaluation


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
    SessionDescribed
    | RoundStarted
    | RecordChanged
    | StepTaken
    | BlackboardChanged
    | PromptSent
    | AnswerRejected
    | SnapshotTaken
    | SubtaskEnded
    | Evaluated
    | CostUpdated
    | RoundEnded
)
Observer = Callable[[Event], None]


class EventBus:
    def __init__(self) -> None:
        self._observers: list[Observer] = []

    def subscribe(self, observer: Observer, *, first: bool = False) -> None:
        """`first`: before the observers already there (the recorder: written, then shown)."""
        if first:
            self._observers.insert(0, observer)
        else:
            self._observers.append(observer)

    def emit(self, event: Event) -> None:
        for observer in self._observers:
            observer(event)
