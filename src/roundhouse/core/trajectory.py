"""One step, as one record: filled in while the step runs (smolagents' ActionStep), and
the one source of everything said about the step afterwards: the next prompts' history,
the round's TaskWeaver posts, the blackboard's recent steps, response.log and the
session's checkpoint are all derived from it.

Plain pydantic: JSON in and out.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from roundhouse.core.commands import Result
from roundhouse.core.states import AgentKind, Status
from roundhouse.core.usage import NOTHING_SPENT, Usage


class ActionRecord(BaseModel):
    function: str | None = None
    arguments: dict[str, Any] = Field(default_factory=dict)


class StepRecord(BaseModel):
    """One line of response.log. A step that never concluded (the model gave no valid
    answer, or the device was lost) keeps `status` None and says why in `error`, with what
    its attempts spent."""

    session_step: int
    round_id: int
    round_step: int
    agent: AgentKind
    agent_name: str  # "linux", "host", or the application an AppAgent serves
    status: Status | None = None  # what the step came to; None until it concludes
    observation: str = ""
    thought: str = ""
    plan: list[str] = Field(default_factory=list)
    action: ActionRecord = Field(default_factory=ActionRecord)
    comment: str = ""  # what the agent noted for itself (its progress)
    result: Result | None = None
    answer: str = ""  # the agent's "result" field: its answer so far or its final answer
    send_to: str = ""  # to whom the step's post goes: the user, the host, or the app itself
    subtask: str | None = None  # the host's ASSIGN, or the subtask an AppAgent works on
    question: str | None = None
    user_reply: str | None = None
    retries: int = 0  # invalid answers sent back to the model in this step
    usage: Usage = NOTHING_SPENT  # every model call of the step, the refused ones too
    model_ms: float = 0.0
    action_ms: float = 0.0
    screenshots: list[str] = Field(default_factory=list)  # file names in the log folder
    error: str | None = None  # why the step did not conclude

    @property
    def concluded(self) -> bool:
        return self.status is not None

    def spend(self, usage: Usage) -> None:
        """A model call of this step, counted as soon as it is answered."""
        self.usage += usage
