"""A log folder read into typed data: session → rounds → steps, with their posts and
board, screenshots, snapshots at subtask ends, cost and evaluations.

`read_session` does the reading (logs.py); everything else here is pure: it takes what
was read and the folder's file list, and decides what the report shows.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from roundhouse.core.blackboard import QuestionAnswer
from roundhouse.core.commands import Result
from roundhouse.core.evaluation import Evaluation
from roundhouse.core.record import Pause, Post, RecordState, RoundRecord
from roundhouse.core.states import InvalidTransition, Status, transition
from roundhouse.core.trajectory import ActionRecord, StepRecord
from roundhouse.core.usage import NOTHING_SPENT, Usage
from roundhouse.logs.report.logs import (
    Notes,
    check_log_folder,
    list_files,
    pretty_json,
    read_blackboard,
    read_jsonl,
    read_requests,
)
from roundhouse.logs.store import EVALUATION_LOG, RESPONSE_LOG, ROUNDS_LOG

# Outputs longer than this are folded: the step card stays readable, the text is one click away.
FOLD_LINES = 12
FOLD_CHARS = 1500

_SNAPSHOT = re.compile(
    r"^(?:(?P<kind>action|desktop)_round_(?P<round>\d+)(?:_sub_round_(?P<sub>\d+))?_final\.png"
    r"|ui_trees/ui_tree_round_(?P<tree_round>\d+)(?:_sub_round_(?P<tree_sub>\d+))?_final\.json)$"
)


@dataclass(frozen=True)
class Image:
    name: str  # relative to the log folder
    label: str


@dataclass(frozen=True)
class Output:
    label: str
    text: str

    @property
    def folded(self) -> bool:
        return self.text.count("\n") >= FOLD_LINES or len(self.text) > FOLD_CHARS

    @property
    def line_count(self) -> int:
        return self.text.count("\n") + 1


@dataclass(frozen=True)
class Snapshot:
    """What the round looked like at a subtask end (sub_round k) or at its end (None)."""

    round_id: int
    sub_round: int | None
    images: tuple[Image, ...]
    ui_tree: str | None


@dataclass(frozen=True)
class ActionView:
    """One action of a step: its call, and its result as text blocks (or why it did not run)."""

    record: ActionRecord
    outputs: tuple[Output, ...]

    @property
    def result(self) -> Result | None:
        return self.record.result


@dataclass(frozen=True)
class StepView:
    record: StepRecord
    images: tuple[Image, ...]  # the annotated screenshot first
    missing_images: tuple[str, ...]  # named by the step, absent from the folder
    actions: tuple[ActionView, ...]  # an answer's actions, in the order they ran
    usage: Usage
    snapshot: Snapshot | None  # taken at the subtask end this step made


@dataclass(frozen=True)
class RoundView:
    id: int
    request: str
    state: str  # the record's state: finished, failed, cancelled, running (interrupted), ...
    interrupted: bool
    answer: str | None
    error: str | None
    board: dict[str, str]
    posts: tuple[Post, ...]
    steps: tuple[StepView, ...]
    snapshots: tuple[Snapshot, ...]  # subtask-end snapshots no step accounts for
    final: Snapshot | None
    evaluation: Evaluation | None
    usage: Usage
    # The person took the desktop over: before which step's action, why, how handed back.
    pauses: tuple[Pause, ...] = ()

    @property
    def label(self) -> str:
        """One word for the round's end: the record's state, or "interrupted"."""
        return "interrupted" if self.interrupted else self.state


@dataclass(frozen=True)
class SessionView:
    folder: Path
    rounds: tuple[RoundView, ...]
    evaluation: Evaluation | None
    questions: tuple[QuestionAnswer, ...]
    notes: tuple[str, ...]
    files: frozenset[str]

    @property
    def task(self) -> str:
        return self.folder.name

    @property
    def total_steps(self) -> int:
        return sum(len(round_.steps) for round_ in self.rounds)

    @property
    def total_actions(self) -> int:
        """The actions the steps' answers held: a step is one answer, of one or several."""
        return sum(len(step.actions) for round_ in self.rounds for step in round_.steps)

    @property
    def usage(self) -> Usage:
        return sum((round_.usage for round_ in self.rounds), _evaluation_usage(self.evaluation))


def read_session(folder: Path) -> SessionView:
    """Read a log folder (NotALogFolder if it is none). Never fails on a crashed run's
    leftovers: what cannot be read is skipped and listed in `notes`."""
    check_log_folder(folder)
    notes = Notes()
    files = list_files(folder)
    for name in (RESPONSE_LOG, ROUNDS_LOG):
        if name not in files:
            notes.add(f"{name} is missing")
    steps = read_jsonl(folder, RESPONSE_LOG, StepRecord, notes)
    records = read_jsonl(folder, ROUNDS_LOG, RoundRecord, notes)
    evaluations = read_jsonl(folder, EVALUATION_LOG, Evaluation, notes)
    blackboard = read_blackboard(folder, notes)
    return build_session(
        folder,
        steps=steps,
        records=records,
        evaluations=evaluations,
        requests=read_requests(folder, notes),
        questions=blackboard.questions,
        files=files,
        notes=notes.lines,
    )


def build_session(
    folder: Path,
    *,
    steps: Sequence[StepRecord],
    records: Sequence[RoundRecord],
    evaluations: Sequence[Evaluation],
    requests: Sequence[str],
    questions: Sequence[QuestionAnswer],
    files: frozenset[str],
    notes: Sequence[str] = (),
) -> SessionView:
    latest = latest_records(records)  # rounds.jsonl is appended: the last line is the state
    by_round: dict[int, list[StepRecord]] = {}
    for step in steps:
        by_round.setdefault(step.round_id, []).append(step)
    judged = {e.round_id: e for e in evaluations}  # a later line supersedes an earlier one
    snapshots = find_snapshots(files)
    all_notes = list(notes)
    rounds = []
    for round_id in sorted(latest.keys() | by_round.keys()):
        record = latest.get(round_id)
        if record is None:
            all_notes.append(f"round {round_id} has steps but no record in {ROUNDS_LOG}")
        rounds.append(
            build_round(
                round_id,
                record,
                by_round.get(round_id, []),
                request=requests[round_id] if round_id < len(requests) else None,
                evaluation=judged.get(round_id),
                snapshots=snapshots.get(round_id, {}),
                files=files,
                notes=all_notes,
            )
        )
    return SessionView(
        folder=folder,
        rounds=tuple(rounds),
        evaluation=judged.get(None),
        questions=tuple(questions),
        notes=tuple(all_notes),
        files=files,
    )


def latest_records(records: Iterable[RoundRecord]) -> dict[int, RoundRecord]:
    latest: dict[int, RoundRecord] = {}
    for record in records:
        latest[record.id] = record
    return latest


def find_snapshots(files: Iterable[str]) -> dict[int, dict[int | None, Snapshot]]:
    """The snapshot files, by round and sub-round (None: the round's final snapshot)."""
    images: dict[tuple[int, int | None], list[Image]] = {}
    trees: dict[tuple[int, int | None], str] = {}
    for name in sorted(files):
        found = _SNAPSHOT.match(name)
        if found is None:
            continue
        if found["kind"]:
            key = (int(found["round"]), _optional_int(found["sub"]))
            label = "window" if found["kind"] == "action" else "whole desktop"
            images.setdefault(key, []).append(Image(name, label))
        else:
            trees[(int(found["tree_round"]), _optional_int(found["tree_sub"]))] = name
    found_snapshots: dict[int, dict[int | None, Snapshot]] = {}
    for key in images.keys() | trees.keys():
        round_id, sub_round = key
        shots = tuple(sorted(images.get(key, []), key=lambda image: image.label != "window"))
        found_snapshots.setdefault(round_id, {})[sub_round] = Snapshot(
            round_id, sub_round, shots, trees.get(key)
        )
    return found_snapshots


def build_round(
    round_id: int,
    record: RoundRecord | None,
    steps: Sequence[StepRecord],
    *,
    request: str | None,
    evaluation: Evaluation | None,
    snapshots: dict[int | None, Snapshot],
    files: frozenset[str],
    notes: list[str],
) -> RoundView:
    unclaimed = dict(snapshots)
    views = []
    sub_round = 0
    for step in steps:
        snapshot = None
        if ends_subtask(step):  # the round numbers its subtask ends in step order
            snapshot = unclaimed.pop(sub_round, None)
            sub_round += 1
        views.append(build_step(step, snapshot, files, notes))
    final = unclaimed.pop(None, None)
    if record is not None:
        record = record.model_copy(update={"steps": list(steps)})  # its posts come from them
    state = record.record_state if record else None
    answer, error = outcome(record, steps)
    usage = sum((view.usage for view in views), _evaluation_usage(evaluation))
    return RoundView(
        id=round_id,
        request=record.user_query if record else (request or "(not recorded)"),
        state=state.value if state else "unknown",
        interrupted=state in (None, RecordState.CREATED, RecordState.RUNNING),
        answer=answer,
        error=error,
        board=dict(record.board) if record else {},
        posts=tuple(record.post_list) if record else (),
        steps=tuple(views),
        snapshots=tuple(unclaimed[key] for key in sorted(k for k in unclaimed if k is not None)),
        final=final,
        evaluation=evaluation,
        usage=usage,
        pauses=tuple(record.pauses) if record else (),
    )


def build_step(
    step: StepRecord, snapshot: Snapshot | None, files: frozenset[str], notes: list[str]
) -> StepView:
    # The annotated screenshot says most (numbered controls): it comes first.
    ordered = sorted(step.screenshots, key=lambda name: not name.endswith("_annotated.png"))
    images = []
    missing = []
    for name in ordered:
        if name in files:
            label = "annotated" if name.endswith("_annotated.png") else "screenshot"
            images.append(Image(name, label))
        else:
            missing.append(name)
            notes.append(f"step {step.session_step} names {name}, which is not in the folder")
    return StepView(
        record=step,
        images=tuple(images),
        missing_images=tuple(missing),
        actions=tuple(ActionView(action, result_outputs(action.result)) for action in step.actions),
        usage=logged_usage(step.usage),
        snapshot=snapshot,
    )


def result_outputs(result: Result | None) -> tuple[Output, ...]:
    """A tool's result as text blocks: a shell's stdout and stderr apart, anything else as
    itself (text) or as JSON."""
    if result is None or result.result is None:
        return ()
    value = result.result
    if isinstance(value, str):
        return (Output("output", value),) if value else ()
    if isinstance(value, dict) and {"stdout", "stderr", "exit_code"} <= value.keys():
        blocks = [Output("exit code", str(value["exit_code"]))]
        blocks += [
            Output(stream, str(value[stream])) for stream in ("stdout", "stderr") if value[stream]
        ]
        if value.get("truncated"):
            blocks.append(Output("note", "the output was cut in the middle (too long)"))
        return tuple(blocks)
    return (Output("output", pretty_json(value)),)


def outcome(
    record: RoundRecord | None, steps: Sequence[StepRecord]
) -> tuple[str | None, str | None]:
    """The round's answer and its error, from its record and its last step."""
    state = record.record_state if record else None
    last = steps[-1] if steps else None
    ended = last is not None and ends_round(last)
    answer = last.answer if last is not None and ended and last.answer else None
    if state in (None, RecordState.CREATED, RecordState.RUNNING):
        return answer, (
            "the round was interrupted: its record was never closed (the run stopped "
            "in the middle of it)"
        )
    assert record is not None  # a state was read from it
    if state is RecordState.CANCELLED:
        return answer, record.error or "cancelled by the user"
    if state is RecordState.FAILED:
        if last is not None and ended and last.status is Status.FAIL:
            return None, last.answer or "the agent failed the request without saying why"
        return answer, record.error or "the round stopped before an agent ended it"
    return answer, None


def ends_subtask(step: StepRecord) -> bool:
    if step.status is None:  # cut short: it ended nothing
        return False
    try:
        return transition(step.agent, step.status).subtask_end
    except InvalidTransition:  # a record from another version: it ended nothing we know of
        return False


def ends_round(step: StepRecord) -> bool:
    if step.status is None:
        return False
    try:
        return transition(step.agent, step.status).round_end
    except InvalidTransition:
        return False


def logged_usage(usage: Usage) -> Usage:
    """A step's usage as the report counts it: a step that made no model call spent nothing
    (older logs wrote no cost for it); a call with no price stays unknown, never $0.00."""
    return NOTHING_SPENT if usage.requests == 0 and usage.cost is None else usage


def _evaluation_usage(evaluation: Evaluation | None) -> Usage:
    return logged_usage(evaluation.usage) if evaluation else NOTHING_SPENT


def _optional_int(text: str | None) -> int | None:
    return None if text is None else int(text)
