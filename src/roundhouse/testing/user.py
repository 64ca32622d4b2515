"""A user channel that answers from lists, in order (agents/user.py says what a channel
is): for tests and demos."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable

from roundhouse.core.user import Confirmation


class ScriptedUser:
    """Answers from lists, in order: for tests and demos."""

    def __init__(self, confirms: Iterable[bool] = (), answers: Iterable[str] = ()) -> None:
        self.confirms = deque(confirms)
        self.answers = deque(answers)
        self.questions: list[str] = []

    async def confirm(self, question: str) -> Confirmation:
        self.questions.append(question)
        return Confirmation(self.confirms.popleft() if self.confirms else False, "scripted")

    async def ask(self, question: str) -> str | None:
        self.questions.append(question)
        return self.answers.popleft() if self.answers else None
