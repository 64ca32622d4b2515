"""The live step display: an event observer that writes one line per step."""

from __future__ import annotations

import json
from typing import Any, TextIO

from roundhouse.core.events import (
    AnswerRejected,
    Event,
    HandedBack,
    PersonTookOver,
    RoundChanged,
    SnapshotTaken,
    StepTaken,
)
from roundhouse.core.states import RoundState
from roundhouse.core.trajectory import ActionRecord

WIDTH = 100


def _short(value: Any, width: int = WIDTH) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


class StepPrinter:
    def __init__(self, out: TextIO) -> None:
        self.out = out

    def __call__(self, event: Event) -> None:
        if isinstance(event, RoundChanged) and event.round.state is RoundState.START:
            self._write(f"round {event.round.id}: {event.round.user_query}")
        elif isinstance(event, StepTaken):
            step = event.step
            status = step.status or f"cut short: {_short(step.error or '', 300)}"
            head = f"  step {step.round_step} [{step.agent_name}] {status}"
            lines = [_action_line(action) for action in step.actions]
            if len(lines) == 1:
                self._write(f"{head} {lines[0]}")
            else:  # an answer of several actions: a line each, under the step's
                self._write(head + (f" ({len(lines)} actions, one model call)" if lines else ""))
                for line in lines:
                    self._write(f"    {line}")
        elif isinstance(event, AnswerRejected):
            self._write(
                f"  invalid answer from {event.agent} (try {event.attempt}): {_short(event.reason)}"
            )
        elif isinstance(event, PersonTookOver):
            self._write(
                f"  paused before {event.pause.tool}: {event.pause.reason}. Press Enter here, "
                f"or run `roundhouse resume` on this session's log folder, to hand back"
            )
        elif isinstance(event, HandedBack):
            self._write(f"  handed back ({event.pause.how}): going on")
        elif isinstance(event, SnapshotTaken) and event.sub_round_id is not None and event.files:
            self._write(f"  subtask {event.sub_round_id} ended; saved {', '.join(event.files)}")

    def _write(self, line: str) -> None:
        self.out.write(line + "\n")
        self.out.flush()


def _action_line(action: ActionRecord) -> str:
    call = f"{action.function}({_short(action.arguments, 60)})"
    if action.result is None:  # its list stopped first, or the step was cut short in it
        why = f"not run: {_short(action.not_run, 300)}" if action.not_run else "no result"
        return f"{call} → {why}"
    # An error is what the user must read whole; output only needs a summary.
    detail = action.result.error or _summary(action.result.result)
    width = 300 if action.result.error else 60
    return f"{call} → {action.result.status}: {_short(detail, width)}"


def _summary(result: Any) -> str:
    if isinstance(result, dict) and "exit_code" in result:
        lines = len(str(result.get("stdout", "")).splitlines())
        return f"exit {result['exit_code']}, {lines} lines of output"
    return _short(result, 60)
