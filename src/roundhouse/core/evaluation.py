"""A verdict on a round or a session, as the judge gives it (agents/evaluation.py) and
evaluation.log keeps it. A round's own FINISH is never taken as proof that the request
was fulfilled: until a judge is configured the verdict is "not evaluated" (core/judge.py)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from roundhouse.core.usage import NOTHING_SPENT, Usage

Verdict = Literal["yes", "no", "unsure"]


class SubScore(BaseModel):
    name: str
    evaluation: Verdict


class Evaluation(BaseModel):
    round_id: int | None = None  # None: the evaluation of a whole session
    evaluator: str
    complete: Verdict | Literal["not evaluated"]
    reason: str
    sub_scores: list[SubScore] = Field(default_factory=list)
    usage: Usage = NOTHING_SPENT
