"""Carry a session on from its log folder after a crash or a kill.

The recorder replaces the session's checkpoint (session.json: every round with its steps,
the blackboard, the judges' verdicts) whole at every change, so it is never half-written
and it is all resume reads. Finished rounds are kept as they are. A round that never ended
(the process was killed, or Ctrl-C cancelled it), or that ended in ERROR because its
device was lost (the server of `--mcp` died, the display went away), is marked and run
again as a new round with the same request; the blackboard and the cost come back with
the rounds, and a round run again is left out of what the next prompts recall.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from roundhouse.config import ConfigError
from roundhouse.core.events import EventBus, RoundChanged, StepTaken
from roundhouse.core.record import RoundRecord, SessionRecord
from roundhouse.logs.store import SESSION_FILE, LogStore, first_error


@dataclass(frozen=True)
class ResumePlan:
    folder: Path
    record: SessionRecord  # the session as it was left: carried on in place
    kept: list[RoundRecord]  # rounds that ended: left as they are
    interrupted: list[RoundRecord]  # rounds to run again

    @property
    def requests(self) -> list[str]:
        return [record.user_query for record in self.interrupted]


def plan_resume(folder: Path) -> ResumePlan:
    path = folder / SESSION_FILE
    if not path.is_file():
        raise ConfigError(f"{folder} is not a roundhouse session folder (no {SESSION_FILE})")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        record = SessionRecord.model_validate(data)
    except (OSError, ValueError) as error:
        why = first_error(error) if isinstance(error, ValidationError) else str(error)
        raise ConfigError(f"{path}: {why}") from None
    if isinstance(data, dict) and "rounds" not in data:
        raise ConfigError(
            f"{path} was written by an older roundhouse, which kept no checkpoint of its "
            "rounds: this session cannot be carried on"
        )
    _take_logged_steps(record, LogStore(folder))
    interrupted = [r for r in record.rounds if r.to_run_again]
    kept = [r for r in record.rounds if r.ended and not r.to_run_again]
    return ResumePlan(folder=folder, record=record, kept=kept, interrupted=interrupted)


def _take_logged_steps(record: SessionRecord, store: LogStore) -> None:
    """A step the log holds as ended where the checkpoint does not: the recorder appends a
    step to response.log, then replaces the checkpoint, and a kill in between left the
    checkpoint one write behind. The logged step is the one that happened; marked cut short
    instead, it was logged a second time under the same number."""
    logged = {step.session_step: step for step in store.read_steps() if step.concluded}
    for round_ in record.rounds:
        round_.steps = [
            logged.get(step.session_step, step) if not step.concluded else step
            for step in round_.steps
        ]


KILLED = "cut short: the session was stopped before this step ended"


def mark_interrupted(events: EventBus, plan: ResumePlan) -> None:
    """Say in each round to run again what became of it (the recorder writes it): a round
    that never ended is cancelled, and its step in flight, answered but never ended, is
    logged as cut short (its number and cost stay in response.log's count); one ended by a
    lost device keeps its ERROR."""
    for number, record in enumerate(plan.interrupted):
        record.run_again_as = plan.record.next_round_id + number
        if not record.ended:
            record.cancelled = True
        for step in record.steps:
            if not step.concluded and step.error is None:
                step.error = KILLED
                events.emit(StepTaken(record, step))
        events.emit(RoundChanged(record))
