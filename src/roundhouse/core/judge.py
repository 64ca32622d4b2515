"""The evaluation hook a session calls after a round (eva_round) and at its end
(eva_session). Until a judge model is configured the verdict is "not evaluated"."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from roundhouse.core.evaluation import Evaluation
from roundhouse.core.record import RoundRecord

NO_JUDGE = "no evaluation model is configured (set model_eval)"


class Evaluator(Protocol):
    async def evaluate_round(self, round_: RoundRecord, log_dir: Path) -> Evaluation: ...

    async def evaluate_session(self, rounds: list[RoundRecord], log_dir: Path) -> Evaluation: ...


class NotEvaluated:
    """The default evaluator: records that nobody judged the round, and gives no verdict."""

    async def evaluate_round(self, round_: RoundRecord, log_dir: Path) -> Evaluation:
        return Evaluation(
            round_id=round_.id, evaluator="none", complete="not evaluated", reason=NO_JUDGE
        )

    async def evaluate_session(self, rounds: list[RoundRecord], log_dir: Path) -> Evaluation:
        return Evaluation(evaluator="none", complete="not evaluated", reason=NO_JUDGE)
