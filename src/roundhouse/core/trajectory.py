"""One step, as one record: filled in while the step runs (smolagents' ActionStep), and
the one source of everything said about the step afterwards: the next prompts' history,
the round's TaskWeaver posts, the blackboard's recent steps, response.log and the
session's checkpoint are all derived from it.

A step is one model answer (one call, and the calls its invalid answers cost), and the
actions that answer held: one, or a list run in order until one of them showed the list
could not go on (agents/action_list.py). Each action keeps its own result, or why it did
not run.

Plain pydantic: JSON in and out.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field, model_validator

from roundhouse.core.commands import Result
from roundhouse.core.states import AgentKind, Status
from roundhouse.core.usage import NOTHING_SPENT, Usage


class ActionRecord(BaseModel):
    """One action of a step's answer: what was called, and what came of it. An action the
    list stopped before has no result and says why in `not_run`."""

    function: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    result: Result | None = None
    not_run: str | None = None

    @property
    def ran(self) -> bool:
        return self.result is not None


class StepRecord(BaseModel):
    """One line of response.log. A step that never concluded (the model gave no valid
    answer, or the device was lost) keeps `status` None and says why in `error`, with what
    its attempts spent."""

    session_step: int
    round_id: int
    round_step: int
    agent: AgentKind
    agent_name: str  # "linux", "host", or the application an AppAgent serves
    started: float | None = None  # time.time() as the step began (a run's video times it)
    status: Status | None = None  # what the step came to; None until it concludes
    observation: str = ""
    thought: str = ""
    plan: list[str] = Field(default_factory=list)
    # The answer's actions in order, each with its result as it runs (none: the answer
    # called no tool: FINISH, PENDING, SCREENSHOT...).
    actions: list[ActionRecord] = Field(default_factory=list)
    comment: str = ""  # what the agent noted for itself (its progress)
    answer: str = ""  # the agent's "result" field: its answer so far or its final answer
    send_to: str = ""  # to whom the step's post goes: the user, the host, or the app itself
    subtask: str | None = None  # the host's ASSIGN, or the subtask an AppAgent works on
    question: str | None = None
    user_reply: str | None = None
    retries: int = 0  # invalid answers sent back to the model in this step
    usage: Usage = NOTHING_SPENT  # every model call of the step, the refused ones too
    model_ms: float = 0.0
    action_ms: float = 0.0  # all of the step's actions, and the user's answer
    screenshots: list[str] = Field(default_factory=list)  # file names in the log folder
    error: str | None = None  # why the step did not conclude

    @model_validator(mode="before")
    @classmethod
    def _one_action_as_written_before(cls, data: Any) -> Any:
        """A step written before answers held lists ({"action": {...}, "result": ...}), as
        an older session.json or response.log has it: its one action, with its result."""
        if not isinstance(data, dict) or "action" not in data or "actions" in data:
            return data
        data = dict(data)
        action, result = data.pop("action") or {}, data.pop("result", None)
        function = action.get("function") if isinstance(action, dict) else None
        data["actions"] = (
            [{"function": function, "arguments": action.get("arguments") or {}, "result": result}]
            if function
            else []
        )
        return data

    @property
    def concluded(self) -> bool:
        return self.status is not None

    @property
    def ran(self) -> list[ActionRecord]:
        """The actions that ran, in order."""
        return [action for action in self.actions if action.ran]

    def spend(self, usage: Usage) -> None:
        """A model call of this step, counted as soon as it is answered."""
        self.usage += usage
