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

from roundhouse.core.events import (
    BlackboardChanged,
    Evaluated,
    Event,
    PromptSent,
    RecordChanged,
    SessionDescribed,
    SnapshotTaken,
    StepTaken,
)
from roundhouse.logs.store import SESSION_FILE, LogStore


class Recorder:
    def __init__(self, store: LogStore) -> None:
        self.store = store

    def __call__(self, event: Event) -> None:
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
