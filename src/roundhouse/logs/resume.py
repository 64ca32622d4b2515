"""Carry a session on from its log folder after a crash or a kill.

Finished rounds are kept as they are. A round that never ended (the process was killed,
or Ctrl-C cancelled it), or that ended in ERROR because its device was lost (the server of
`--mcp` died, the display went away), is marked in rounds.jsonl and run again as a new
round with the same request. The blackboard, the step count and the cost are restored from
the folder, without the interrupted round's half-done steps.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from pydantic import ValidationError

from roundhouse.config import ConfigError
from roundhouse.core.blackboard import Blackboard
from roundhouse.core.context import SessionContext
from roundhouse.core.evaluation import Evaluation
from roundhouse.core.events import EventBus, RecordChanged
from roundhouse.core.record import (
    RUN_AGAIN,
    Attachment,
    Post,
    RecordState,
    RoundRecord,
    SessionInfo,
)
from roundhouse.core.trajectory import StepRecord
from roundhouse.logs.store import (
    BLACKBOARD,
    EVALUATION_LOG,
    RESPONSE_LOG,
    ROUNDS_LOG,
    SESSION_FILE,
    read_jsonl,
)

log = logging.getLogger(__name__)

T = TypeVar("T", RoundRecord, StepRecord, Evaluation)
ENDED = frozenset({RecordState.FINISHED, RecordState.FAILED})


@dataclass(frozen=True)
class ResumePlan:
    folder: Path
    info: SessionInfo
    kept: list[RoundRecord]  # rounds that ended: left as they are
    interrupted: list[RoundRecord]  # rounds that did not end: marked and run again
    context: SessionContext  # blackboard, step count, usage and cost, restored
    next_round_id: int
    skipped_lines: int  # half-written lines (the kill came mid-write), left out

    @property
    def requests(self) -> list[str]:
        return [record.user_query for record in self.interrupted]


def plan_resume(folder: Path) -> ResumePlan:
    info_file = folder / SESSION_FILE
    if not info_file.exists():
        raise ConfigError(f"{folder} is not a roundhouse session folder (no {SESSION_FILE})")
    try:
        info = SessionInfo.model_validate_json(info_file.read_text(encoding="utf-8"))
    except ValidationError as error:
        raise ConfigError(f"{info_file}: {error}") from None
    records, bad_records = _read_jsonl(folder / ROUNDS_LOG, RoundRecord)
    latest: dict[int, RoundRecord] = {}
    for record in records:
        latest[record.id] = record  # appended as it changes: the last line is its state now
    interrupted = [r for r in latest.values() if r.state not in ENDED or r.device_lost]
    kept = [r for r in latest.values() if r not in interrupted]
    gone = {r.id for r in interrupted}
    steps, bad_steps = _read_jsonl(folder / RESPONSE_LOG, StepRecord)
    evaluations, bad_evaluations = _read_jsonl(folder / EVALUATION_LOG, Evaluation)
    context = SessionContext(
        session_step=max((step.session_step for step in steps), default=0),
        blackboard=_blackboard(folder, gone),
    )
    for spent in [step.usage for step in steps] + [e.usage for e in evaluations]:
        context.add_usage(spent)
    return ResumePlan(
        folder=folder,
        info=info,
        kept=sorted(kept, key=lambda r: r.id),
        interrupted=sorted(interrupted, key=lambda r: r.id),
        context=context,
        next_round_id=max(latest, default=-1) + 1,
        skipped_lines=bad_records + bad_steps + bad_evaluations,
    )


def mark_interrupted(events: EventBus, plan: ResumePlan) -> None:
    """Say in each unfinished round's record what became of it (the recorder writes it)."""
    for number, record in enumerate(plan.interrupted):
        again = plan.next_round_id + number
        if record.device_lost:  # it did end (in ERROR): that stays its state
            message = f"its device was lost; run again as round {again}"
        else:
            record.state = RecordState.CANCELLED
            message = f"interrupted before it ended; run again as round {again}"
        ran_again = Attachment(type="execution_status", content=RUN_AGAIN)
        record.add_post(
            Post(send_from="roundhouse", send_to="user", message=message, attachments=[ran_again])
        )
        events.emit(RecordChanged(record))


def _blackboard(folder: Path, interrupted: set[int]) -> Blackboard:
    path = folder / BLACKBOARD
    if not path.exists():
        return Blackboard()
    board = Blackboard.from_json(path.read_text(encoding="utf-8"))
    board.trajectories = [t for t in board.trajectories if t.get("round") not in interrupted]
    board.requests = {
        k: v for k, v in board.requests.items() if k not in {f"request_{i}" for i in interrupted}
    }
    return board


def _read_jsonl(path: Path, kind: type[T]) -> tuple[list[T], int]:
    """The records of a JSON-lines log, and how many lines a kill left unreadable."""
    records, problems = read_jsonl(path, kind)
    for problem in problems:
        log.warning("left out: %s", problem)
    return records, len(problems)
