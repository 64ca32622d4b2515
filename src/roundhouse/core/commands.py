"""Commands and Results: what an agent asks a device to do, and what came of it. The agents
and the log know the device through these and devices/contract.py alone."""

from __future__ import annotations

import enum
import uuid
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

ToolType = Literal["data_collection", "action"]


class ResultStatus(enum.StrEnum):
    SUCCESS = "success"
    FAILURE = "failure"
    SKIPPED = "skipped"


def new_call_id() -> str:
    return uuid.uuid4().hex[:12]


class Command(BaseModel):
    model_config = ConfigDict(frozen=True)

    tool_name: str
    parameters: dict[str, Any] = Field(default_factory=dict)
    tool_type: ToolType = "action"
    call_id: str = Field(default_factory=new_call_id)


class Result(BaseModel):
    status: ResultStatus
    result: Any = None
    error: str | None = None
    call_id: str = ""

    @classmethod
    def failure(cls, error: str, call_id: str = "") -> Result:
        return cls(status=ResultStatus.FAILURE, error=error, call_id=call_id)

    @property
    def ok(self) -> bool:
        return self.status is ResultStatus.SUCCESS
