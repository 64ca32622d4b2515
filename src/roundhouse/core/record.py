"""A session's records: each Round's in TaskWeaver's shape (posts between roles, and a board
per role), and the session's own (what `resume` needs).

The host writes the original request and its plan on the board; an AppAgent reads it,
so it knows the whole request and not only its subtask.
"""

from __future__ import annotations

import enum
import uuid
from typing import Any, Literal

from pydantic import BaseModel, Field

from roundhouse.config import Settings
from roundhouse.core.states import AgentKind


class RecordState(enum.StrEnum):
    CREATED = "created"
    RUNNING = "running"
    FINISHED = "finished"
    FAILED = "failed"
    CANCELLED = "cancelled"


DEVICE_LOST = "device_lost"  # execution statuses attached to a round's last post
RUN_AGAIN = "run_again"


def _new_id(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


class Attachment(BaseModel):
    type: Literal[
        "thought",
        "plan",
        "action",
        "result",
        "observation",
        "screenshot",
        "question",
        "execution_status",  # TaskWeaver's; ours: DEVICE_LOST, RUN_AGAIN
    ]
    content: str
    id: str = Field(default_factory=lambda: _new_id("atta"))


class Post(BaseModel):
    send_from: str
    send_to: str
    message: str
    attachments: list[Attachment] = Field(default_factory=list)
    id: str = Field(default_factory=lambda: _new_id("post"))


class RoundRecord(BaseModel):
    id: int
    user_query: str
    state: RecordState = RecordState.CREATED
    post_list: list[Post] = Field(default_factory=list)
    board: dict[str, str] = Field(default_factory=dict)

    @property
    def device_lost(self) -> bool:
        """Ended in ERROR because its device was lost (the server, the display), not because
        of the request, and not run again yet: `roundhouse resume` runs it again. Said by
        the status attached to its last post (a resume attaches RUN_AGAIN after it)."""
        if not self.post_list:
            return False
        last = self.post_list[-1]
        statuses = [a.content for a in last.attachments if a.type == "execution_status"]
        return statuses[-1:] == [DEVICE_LOST]

    def add_post(self, post: Post) -> None:
        self.post_list.append(post)

    def write_board(self, role: str, text: str) -> None:
        self.board[role] = text

    def read_board(self, role: str | None = None) -> str:
        """One role's board, or every role's, each under its name."""
        if role is not None:
            return self.board.get(role, "")
        return "\n\n".join(f"[{name}]\n{text}" for name, text in self.board.items())


class SessionInfo(BaseModel):
    """What `roundhouse resume` needs to carry a session on (session.json): written when it
    starts and each time a request arrives. Secrets (the API key) are never written."""

    agent: AgentKind
    settings: dict[str, Any]
    requests: list[str] = Field(default_factory=list)

    @classmethod
    def describe(cls, settings: Settings, agent: AgentKind) -> SessionInfo:
        dumped = settings.model_dump(mode="json", exclude={"openai": {"api_key"}})
        return cls(agent=agent, settings=dumped)
