"""The session's shared memory of what is not in its rounds' records: the questions asked
and the user's answers, and the screenshots an agent chose to keep.

Every round reads it (rendered into the prompt with the earlier requests and recent steps,
which the round records hold: agents/prompting.py) and adds to it; it is saved as
blackboard.json, and in the session's checkpoint.
"""

from __future__ import annotations

from pydantic import BaseModel, Field


class QuestionAnswer(BaseModel):
    question: str
    answer: str | None  # None: nobody answered (non-interactive run)


class Blackboard(BaseModel):
    questions: list[QuestionAnswer] = Field(default_factory=list)
    screenshots: list[str] = Field(default_factory=list)  # file names in the log folder

    def add_question(self, question: str, answer: str | None) -> None:
        self.questions.append(QuestionAnswer(question=question, answer=answer))

    def add_screenshot(self, file_name: str) -> None:
        self.screenshots.append(file_name)

    def to_json(self) -> str:
        return self.model_dump_json(indent=2)

    @classmethod
    def from_json(cls, text: str) -> Blackboard:
        return cls.model_validate_json(text)
