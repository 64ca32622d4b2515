"""The one writer of a session's log folder: it turns the loop's events into the files
docs/design.md lays out. The loop, the agents and resume emit; nothing else writes.

    SessionChanged  -> session.json                    (the checkpoint, replaced whole)
    RoundChanged    -> rounds.jsonl, session.json      (appended: a round's last line is its state)
    PersonTookOver, HandedBack -> rounds.jsonl, session.json  (the round, with its pauses)
    StepTaken       -> response.log, session.json, blackboard.json
    PromptSent      -> request.log                     (appended)
    Evaluated       -> evaluation.log, session.json
    SnapshotTaken   -> ui_trees/*.json, session.json   (the screenshots are the device's files)

Every change of the session is in its checkpoint (session.json), so `resume` reads that
one file; the other files are the session's story, appended as it happens.
"""

from __future__ import annotations

import logging

from roundhouse.core.events import (
    Evaluated,
    Event,
    HandedBack,
    PersonTookOver,
    PromptSent,
    RoundChanged,
    SessionChanged,
    SnapshotTaken,
    StepAnswered,
    StepTaken,
)
from roundhouse.core.record import SessionRecord
from roundhouse.core.states import RoundState
from roundhouse.logs.store import LogStore, LogWriteError

log = logging.getLogger(__name__)


class Recorder:
    """Writes each event as it comes. The first write of a round that fails (a full disk)
    raises, so the loop stops with the reason; the writes its ending makes are still tried
    but only warned about, so the stop itself cannot crash. (A nearly full disk takes some
    short lines and refuses long ones: one failure is enough to stop a round.)"""

    def __init__(self, store: LogStore, session: SessionRecord) -> None:
        self.store = store
        self.session = session  # the live record: the checkpoint is written from it
        self.failed: str | None = None  # why a write of this round failed

    def __call__(self, event: Event) -> None:
        if isinstance(event, RoundChanged) and event.round.state is RoundState.START:
            self.failed = None  # a round starts: its writes may fail anew
        try:
            self._write(event)
        except LogWriteError as error:
            if self.failed is None:
                self.failed = str(error)
                raise
            log.warning("%s (the round has stopped already)", error)

    def _write(self, event: Event) -> None:
        match event:
            case SessionChanged() | StepAnswered():
                pass
            case RoundChanged(round_) | PersonTookOver(round_) | HandedBack(round_):
                self.store.write_round(round_)  # its line shows the pause
            case StepTaken(_, step):
                self.store.write_step(step)
                self.store.write_blackboard(self.session.blackboard)
            case PromptSent(round_id, agent, attempt, messages):
                self.store.write_prompt(round_id, agent, attempt, messages)
                return  # the prompts are no part of the checkpoint
            case Evaluated(evaluation):
                self.store.write_evaluation(evaluation)
            case SnapshotTaken(ui_tree=(name, tree)):
                self.store.write_json(name, tree)
            case SnapshotTaken():
                pass
            case _:
                return  # the rest is for displays
        self.store.write_checkpoint(self.session)
