"""The session's shared memory: requests, questions, trajectories, screenshots.

Every round reads it (rendered into the prompt) and adds to it; it is saved as
blackboard.json so a session can be resumed or reported.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, Field


class QuestionAnswer(BaseModel):
    question: str
    answer: str | None  # None: nobody answered (non-interactive run)


class Blackboard(BaseModel):
    requests: dict[str, str] = Field(default_factory=dict)
    questions: list[QuestionAnswer] = Field(default_factory=list)
    trajectories: list[dict[str, Any]] = Field(default_factory=list)
    screenshots: list[str] = Field(default_factory=list)  # file names in the log folder

    def add_requests(self, requests: dict[str, str]) -> None:
        self.requests.update(requests)

    def add_question(self, question: str, answer: str | None) -> None:
        self.questions.append(QuestionAnswer(question=question, answer=answer))

    def add_trajectory(self, summary: dict[str, Any]) -> None:
        self.trajectories.append(summary)

    def add_screenshot(self, file_name: str) -> None:
        self.screenshots.append(file_name)

    @property
    def is_empty(self) -> bool:
        return not (self.requests or self.questions or self.trajectories or self.screenshots)

    def to_json(self) -> str:
        return self.model_dump_json(indent=2)

    @classmethod
    def from_json(cls, text: str) -> Blackboard:
        return cls.model_validate_json(text)

    def render(self, max_trajectories: int = 10) -> str:
        """The blackboard as prompt text: what earlier rounds asked, learned and did."""
        if self.is_empty:
            return ""
        parts: list[str] = []
        if self.requests:
            parts.append("Earlier requests in this session:")
            parts += [f"- {key}: {text}" for key, text in self.requests.items()]
        if self.questions:
            parts.append("Questions asked and the user's answers:")
            parts += [
                f"- Q: {qa.question} A: {qa.answer or '(no answer)'}" for qa in self.questions
            ]
        if self.trajectories:
            parts.append("Recent steps of earlier rounds:")
            recent = self.trajectories[-max_trajectories:]
            parts += [f"- {json.dumps(step, ensure_ascii=False)}" for step in recent]
        if self.screenshots:
            parts.append(f"Screenshots saved: {', '.join(self.screenshots[-5:])}")
        return "\n".join(parts)
