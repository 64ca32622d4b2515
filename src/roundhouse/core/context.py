"""Typed round and session context: what the loop and the agents share, with no bag of
string keys. Usage (tokens and cost) is one value, added up in one place: add_usage."""

from __future__ import annotations

from dataclasses import dataclass, field

from roundhouse.core.blackboard import Blackboard
from roundhouse.core.record import RoundRecord
from roundhouse.core.states import RoundState
from roundhouse.core.usage import NOTHING_SPENT, Usage


@dataclass(kw_only=True)
class SubtaskResult:
    """What one subtask (an AppAgent's run, or the Linux agent's round) came to."""

    sub_round_id: int
    agent_name: str
    subtask: str
    status: str
    result: str


@dataclass(kw_only=True)
class SessionContext:
    session_step: int = 0  # steps over all rounds
    usage: Usage = NOTHING_SPENT
    blackboard: Blackboard = field(default_factory=Blackboard)

    def add_usage(self, usage: Usage) -> None:
        """The one place the session's spending grows: every model call, the judge's too."""
        self.usage += usage


@dataclass(kw_only=True)
class RoundContext:
    round_id: int
    request: str
    session: SessionContext
    record: RoundRecord
    round_step: int = 0
    subtask_amount: int = 0
    usage: Usage = NOTHING_SPENT  # this round's part of the session's usage
    current_application: str | None = None
    previous_subtasks: list[SubtaskResult] = field(default_factory=list)
    state: RoundState = RoundState.START
    result: str | None = None  # the answer a finished (or failed) round gives the user
    error: str | None = None  # why a round ended in ERROR

    def add_usage(self, usage: Usage) -> None:
        self.usage += usage
        self.session.add_usage(usage)

    def next_step(self) -> int:
        """Count a step in the round and in the session; returns the session step."""
        self.round_step += 1
        self.session.session_step += 1
        return self.session.session_step
