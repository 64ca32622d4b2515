"""Typed round and session context: what the loop and the agents share, with no bag of
string keys. Usage is kept as a value; cost is derived by pricing each completion."""

from __future__ import annotations

from dataclasses import dataclass, field

from roundhouse.blackboard import Blackboard
from roundhouse.models.base import Usage
from roundhouse.models.pricing import ZERO_COST, Cost
from roundhouse.record import RoundRecord
from roundhouse.states import RoundState


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
    usage: Usage = field(default_factory=Usage)
    cost: Cost = ZERO_COST
    blackboard: Blackboard = field(default_factory=Blackboard)


@dataclass(kw_only=True)
class RoundContext:
    round_id: int
    request: str
    session: SessionContext
    record: RoundRecord
    round_step: int = 0
    subtask_amount: int = 0
    usage: Usage = field(default_factory=Usage)
    cost: Cost = ZERO_COST
    current_application: str | None = None
    previous_subtasks: list[SubtaskResult] = field(default_factory=list)
    state: RoundState = RoundState.START
    result: str | None = None  # the answer a finished (or failed) round gives the user
    error: str | None = None  # why a round ended in ERROR

    def add_usage(self, usage: Usage, cost: Cost) -> None:
        self.usage += usage
        self.cost += cost
        self.session.usage += usage
        self.session.cost += cost

    def next_step(self) -> int:
        """Count a step in the round and in the session; returns the session step."""
        self.round_step += 1
        self.session.session_step += 1
        return self.session.session_step
