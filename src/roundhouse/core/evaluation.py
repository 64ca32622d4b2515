"""The evaluation hook. Until a judge is configured the verdict is "not evaluated":
a round's own FINISH is never taken as proof that the request was fulfilled."""

from __future__ import annotations

from typing import Literal, Protocol

from pydantic import BaseModel, Field

from roundhouse.core.trajectory import RoundTrajectory
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


class Evaluator(Protocol):
    async def evaluate_round(self, trajectory: RoundTrajectory) -> Evaluation: ...

    async def evaluate_session(self, trajectories: list[RoundTrajectory]) -> Evaluation: ...


class NotEvaluated:
    """The default evaluator: records that nobody judged the round, and gives no verdict."""

    async def evaluate_round(self, trajectory: RoundTrajectory) -> Evaluation:
        return Evaluation(
            round_id=trajectory.round_id,
            evaluator="none",
            complete="not evaluated",
            reason="no evaluation model is configured (set model_eval)",
        )

    async def evaluate_session(self, trajectories: list[RoundTrajectory]) -> Evaluation:
        return Evaluation(
            evaluator="none",
            complete="not evaluated",
            reason="no evaluation model is configured (set model_eval)",
        )
