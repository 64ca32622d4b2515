"""The records of a session: one per round and one for the session, each the ONE place its
state is kept. Everything else is derived from them: the TaskWeaver shape of a round
(posts between roles and a board per role) that rounds.jsonl holds, the subtasks the host
sees, the usage, the blackboard's recent steps, and the checkpoint `resume` loads.

The host writes the original request and its plan on the board; an AppAgent reads it,
so it knows the whole request and not only its subtask.
"""

from __future__ import annotations

import enum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, computed_field

from roundhouse.config import Settings
from roundhouse.core.blackboard import Blackboard
from roundhouse.core.evaluation import Evaluation
from roundhouse.core.states import AgentKind, RoundState, is_round_end, transition
from roundhouse.core.trajectory import StepRecord
from roundhouse.core.usage import NOTHING_SPENT, Usage


class RecordState(enum.StrEnum):
    """TaskWeaver's states of a round record, derived from the round's own state."""

    CREATED = "created"
    RUNNING = "running"
    FINISHED = "finished"
    FAILED = "failed"
    CANCELLED = "cancelled"


DEVICE_LOST = "device_lost"  # execution statuses attached to a round's last posts
RUN_AGAIN = "run_again"


class Attachment(BaseModel):
    type: Literal[
        "thought",
        "plan",
        "action",
        "result",
        "not_run",  # an action of a list that stopped before it: why
        "observation",
        "screenshot",
        "question",
        "execution_status",  # TaskWeaver's; ours: DEVICE_LOST, RUN_AGAIN
    ]
    content: str


class Post(BaseModel):
    id: str
    send_from: str
    send_to: str
    message: str
    attachments: list[Attachment] = Field(default_factory=list)


class SubtaskResult(BaseModel):
    """What one subtask (an AppAgent's run, or the Linux agent's round) came to."""

    sub_round_id: int
    agent_name: str
    subtask: str
    status: str
    result: str


class Pause(BaseModel):
    """The person took the desktop over during the round: the action that waited for their
    hand-back, what was seen of them, and when and how they handed it back."""

    step: int  # the round step whose action waited
    tool: str
    reason: str
    pid: int  # the process that waits: `roundhouse resume` hands back to it
    since: float  # time.time()
    handed_back: float | None = None
    how: str | None = None  # "a key", "roundhouse resume", "left alone 30 s"


class RoundRecord(BaseModel):
    """One round: its request, its state, its steps as they run, its board, and how it
    ended. `state` is the round's one state; TaskWeaver's (`record_state`) is derived."""

    model_config = ConfigDict(extra="ignore")  # rounds.jsonl lines add what is derived

    id: int
    user_query: str
    state: RoundState = RoundState.START
    cancelled: bool = False  # Ctrl-C, or a kill found by resume
    device_lost: bool = False  # ended in ERROR because its device went away
    run_again_as: int | None = None  # the round resume ran it again as
    board: dict[str, str] = Field(default_factory=dict)
    result: str | None = None  # the answer a finished (or failed) round gives the user
    error: str | None = None  # why it ended in ERROR (or was cut short)
    final_screenshots: list[str] = Field(default_factory=list)
    evaluation: Evaluation | None = None
    steps: list[StepRecord] = Field(default_factory=list)
    pauses: list[Pause] = Field(default_factory=list)  # the person took over, then handed back

    @property
    def request(self) -> str:
        return self.user_query

    @property
    def finished(self) -> bool:
        return self.state is RoundState.FINISH

    @property
    def ended(self) -> bool:
        return is_round_end(self.state) or self.cancelled

    @computed_field  # type: ignore[prop-decorator]
    @property
    def record_state(self) -> RecordState:
        if self.cancelled:
            return RecordState.CANCELLED
        if self.state is RoundState.FINISH:
            return RecordState.FINISHED
        if is_round_end(self.state):
            return RecordState.FAILED
        return RecordState.RUNNING

    @property
    def usage(self) -> Usage:
        """The round's spending: its steps' model calls and its judge's."""
        spent = sum((step.usage for step in self.steps), NOTHING_SPENT)
        return spent + self.evaluation.usage if self.evaluation else spent

    @property
    def round_step(self) -> int:
        return len(self.steps)

    @property
    def subtask_ends(self) -> int:
        """How many subtasks have ended: the number the next subtask snapshot gets."""
        return sum(1 for step in self.steps if _ends_subtask(step))

    @property
    def subtasks(self) -> list[SubtaskResult]:
        """What each acting agent's subtask came to (the host's ASSIGN only starts one)."""
        ended: list[SubtaskResult] = []
        number = 0
        for step in self.steps:
            if not _ends_subtask(step):
                continue
            if step.agent is not AgentKind.HOST and step.status is not None:
                ended.append(
                    SubtaskResult(
                        sub_round_id=number,
                        agent_name=step.agent_name,
                        subtask=step.subtask or self.user_query,
                        status=step.status.value,
                        result=step.answer,
                    )
                )
            number += 1
        return ended

    @computed_field  # type: ignore[prop-decorator]
    @property
    def post_list(self) -> list[Post]:
        """TaskWeaver's posts: one per concluded step, then the round's error and what
        resume made of it (the record has no error field: a post says it)."""
        posts = [_post(self.id, step) for step in self.steps if step.concluded]
        if self.error:
            lost = DEVICE_LOST if self.device_lost else None
            posts.append(self._said("error", f"error: {self.error}", lost))
        if self.run_again_as is not None:
            why = "its device was lost" if self.device_lost else "interrupted before it ended"
            message = f"{why}; run again as round {self.run_again_as}"
            posts.append(self._said("again", message, RUN_AGAIN))
        return posts

    def _said(self, what: str, message: str, status: str | None) -> Post:
        """A post of roundhouse's own to the user, with an execution status if any."""
        attached = [Attachment(type="execution_status", content=status)] if status else []
        return Post(
            id=f"post-{self.id}-{what}",
            send_from="roundhouse",
            send_to="user",
            message=message,
            attachments=attached,
        )

    @property
    def to_run_again(self) -> bool:
        """Not ended, cancelled (Ctrl-C, the watch page's stop, a failed log write) or
        ended by a lost device (the server, the display), and not run again yet: `roundhouse
        resume` runs it again."""
        return self.run_again_as is None and (not self.ended or self.cancelled or self.device_lost)

    def write_board(self, role: str, text: str) -> None:
        self.board[role] = text

    def read_board(self, role: str | None = None) -> str:
        """One role's board, or every role's, each under its name."""
        if role is not None:
            return self.board.get(role, "")
        return "\n\n".join(f"[{name}]\n{text}" for name, text in self.board.items())


def _ends_subtask(step: StepRecord) -> bool:
    return step.status is not None and transition(step.agent, step.status).subtask_end


def _post(round_id: int, step: StepRecord) -> Post:
    attachments = [
        Attachment(type="thought", content=step.thought),
        Attachment(type="plan", content="\n".join(step.plan)),
    ]
    for action in step.actions:  # each action, then what came of it or why it did not run
        call = f"{action.function}({action.arguments})"
        attachments.append(Attachment(type="action", content=call))
        if action.result is not None:
            outcome = action.result.model_dump_json(exclude={"call_id"})
            attachments.append(Attachment(type="result", content=outcome))
        elif action.not_run is not None:
            attachments.append(Attachment(type="not_run", content=action.not_run))
    return Post(
        id=f"post-{round_id}-{step.round_step}",
        send_from=step.agent_name,
        send_to=step.send_to,
        message=step.answer,
        attachments=attachments,
    )


class SessionRecord(BaseModel):
    """The session: the ONE state of it, and its checkpoint (session.json, replaced whole
    at every change): `resume` loads this file alone. Secrets (the API key) are never in
    it."""

    agent: AgentKind
    settings: dict[str, Any]
    rounds: list[RoundRecord] = Field(default_factory=list)
    blackboard: Blackboard = Field(default_factory=Blackboard)
    evaluations: list[Evaluation] = Field(default_factory=list)  # of the whole session

    @classmethod
    def describe(cls, settings: Settings, agent: AgentKind) -> SessionRecord:
        # Every section that holds a key (openai, anthropic, gemini, and any added later)
        # leaves it out: a key never reaches the log folder.
        keyed = {
            name: {"api_key"}
            for name, section in settings
            if isinstance(section, BaseModel) and "api_key" in type(section).model_fields
        }
        return cls(agent=agent, settings=settings.model_dump(mode="json", exclude=keyed))

    @property
    def requests(self) -> list[str]:
        """One per round, in order, re-runs included."""
        return [round_.user_query for round_ in self.rounds]

    @property
    def steps(self) -> list[StepRecord]:
        return [step for round_ in self.rounds for step in round_.steps]

    @property
    def session_step(self) -> int:
        return sum(len(round_.steps) for round_ in self.rounds)

    @property
    def usage(self) -> Usage:
        """What the session has spent: every round's steps and judges, and its own judge's."""
        rounds = sum((round_.usage for round_ in self.rounds), NOTHING_SPENT)
        return sum((e.usage for e in self.evaluations), rounds)

    @property
    def next_round_id(self) -> int:
        return len(self.rounds)
