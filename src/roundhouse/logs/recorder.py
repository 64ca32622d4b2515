"""The one writer of a session's log folder: it turns the loop's events into the files
docs/design.md lays out. The loop, the agents and resume emit; nothing else writes.

    SessionDescribed   -> session.json      (replaced whole)
    RecordChanged      -> rounds.jsonl      (appended: the last line of a round is its state)
    StepTaken          -> response.log      (appended, one line per step)
    BlackboardChanged  -> blackboard.json   (replaced whole)
    PromptSent         -> request.log       (appended)
    Evaluated          -> evaluation.log    (appended)
    SnapshotTaken      -> ui_trees/*.json   (the screenshots are the device's own files)
"""

from __future__ import annotations

import logging

from roundhouse.core.events import (
    BlackboardChanged,
    Evaluated,
    Event,
    PromptSent,
    RecordChanged,
    RoundStarted,
    SessionDescribed,
    SnapshotTaken,
    StepTaken,
)
from roundhouse.logs.store import SESSION_FILE, LogStore, LogWriteError

log = logging.getLogger(__name__)


class Recorder:
    """Writes each event as it comes. The first write of a round that fails (a full disk)
    raises, so the loop stops with the reason; the writes its ending makes are still tried
    but only warned about, so the stop itself cannot crash. (A nearly full disk takes some
    short lines and refuses long ones: one failure is enough to stop a round.)"""

    def __init__(self, store: LogStore) -> None:
        self.store = store
        self.failed: str | None = None  # why a write of this round failed

    def __call__(self, event: Event) -> None:
        if isinstance(event, RoundStarted):
            self.failed = None
        try:
            self._write(event)
        except LogWriteError as error:
            if self.failed is None:
                self.failed = str(error)
                raise
            log.warning("%s (the round has stopped already)", error)

    def _write(self, event: Event) -> None:
        match event:
            case SessionDescribed(info):
                self.store.write_json(SESSION_FILE, info)
            case RecordChanged(record):
                self.store.write_round(record)
            case StepTaken(step):
                self.store.write_step(step)
            case BlackboardChanged(blackboard):
                self.store.write_blackboard(blackboard)
            case PromptSent(round_id, agent, attempt, messages):
                self.store.write_prompt(round_id, agent, attempt, messages)
            case Evaluated(evaluation):
                self.store.write_evaluation(evaluation)
            case SnapshotTaken(ui_tree=(name, tree)):
                self.store.write_json(name, tree)
            case _:
                pass  # the rest is for displays
