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


def _new_id(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


class Attachment(BaseModel):
    type: Literal["thought", "plan", "action", "result", "observation", "screenshot", "question"]
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
    # Ended in ERROR because the device was lost (its server, its display), not because of
    # the request: `roundhouse resume` runs it again once the device is back, then clears it.
    rerun_on_resume: bool = False

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
