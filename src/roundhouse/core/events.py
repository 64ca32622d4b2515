"""Typed events the loop emits. Observers subscribe: the CLI display, tests, and the
recorder (logs/recorder.py), the one writer of the log folder.

The loop renders nothing and writes nothing itself. An observer that raises is our bug: it
propagates. The records an event carries are the live ones (core/record.py): an observer
reads them, and never changes them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from roundhouse.core.evaluation import Evaluation
from roundhouse.core.messages import Message
from roundhouse.core.record import Pause, RoundRecord, SessionRecord
from roundhouse.core.trajectory import StepRecord


@dataclass(frozen=True)
class SessionChanged:
    """The session opened, or what it knows beside its rounds changed (the blackboard)."""

    session: SessionRecord


@dataclass(frozen=True)
class RoundChanged:
    """A round started, ended, or was marked by resume ("run again as round N")."""

    round: RoundRecord


@dataclass(frozen=True)
class _OfStep:
    """What an event about one step of a round carries."""

    round: RoundRecord
    step: StepRecord


@dataclass(frozen=True)
class StepAnswered(_OfStep):
    """The model answered a step, which acts now: what the answer cost is on the record
    before the action runs (a kill during a long command loses neither)."""


@dataclass(frozen=True)
class StepTaken(_OfStep):
    """A step ended: concluded, or cut short (its `error` says why)."""


@dataclass(frozen=True)
class PromptSent:
    """A request to a model, as it was sent."""

    round_id: int | None  # None: the session's judge
    agent: str
    attempt: int
    messages: tuple[Message, ...]


@dataclass(frozen=True)
class AnswerRejected:
    """The model's answer was invalid and goes back to it with the reason."""

    round_id: int | None
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
class _OfPause:
    """What an event about a round's pause for the person carries."""

    round: RoundRecord
    pause: Pause


@dataclass(frozen=True)
class PersonTookOver(_OfPause):
    """Input that was not ours came: the round waits, before an action, for the person to
    hand the desktop back (the pause is on the round's record)."""


@dataclass(frozen=True)
class HandedBack(_OfPause):
    """The person handed the desktop back: the round goes on."""


@dataclass(frozen=True)
class Evaluated:
    """A judge's verdict on a round (round_id set) or on the session."""

    evaluation: Evaluation


Event = (
    SessionChanged
    | RoundChanged
    | StepAnswered
    | StepTaken
    | PromptSent
    | AnswerRejected
    | SnapshotTaken
    | PersonTookOver
    | HandedBack
    | Evaluated
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
