"""What one step did, as written to response.log, and a round's whole trajectory.

These records are the shared currency of the loop, the store, the evaluator and the
report: plain pydantic models, JSON in and out.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from roundhouse.core.commands import Result
from roundhouse.core.states import AgentKind, RoundState, Status
from roundhouse.core.usage import NOTHING_SPENT, Usage


class ActionRecord(BaseModel):
    function: str | None = None
    arguments: dict[str, Any] = Field(default_factory=dict)


class StepRecord(BaseModel):
    """One line of response.log."""

    session_step: int
    round_id: int
    round_step: int
    agent: AgentKind
    agent_name: str  # "linux", "host", or the application an AppAgent serves
    status: Status
    observation: str = ""
    thought: str = ""
    plan: list[str] = Field(default_factory=list)
    action: ActionRecord = Field(default_factory=ActionRecord)
    result: Result | None = None
    answer: str = ""  # the agent's "result" field: its answer so far or its final answer
    subtask: str | None = None  # the host's ASSIGN, or the subtask an AppAgent works on
    question: str | None = None
    user_reply: str | None = None
    retries: int = 0  # invalid answers sent back to the model in this step
    usage: Usage = NOTHING_SPENT
    model_ms: float = 0.0
    action_ms: float = 0.0
    screenshots: list[str] = Field(default_factory=list)  # file names in the log folder


class RoundTrajectory(BaseModel):
    """Everything an evaluator (or a report) gets about one round."""

    round_id: int
    request: str
    state: RoundState
    result: str | None
    error: str | None
    steps: list[StepRecord]
    log_dir: Path
    final_screenshots: list[str] = Field(default_factory=list)
