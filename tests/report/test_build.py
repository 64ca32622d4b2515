"""Reading a log folder into the report's data: the pure parts, without a browser."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from roundhouse.core.commands import Result, ResultStatus
from roundhouse.core.record import RoundRecord
from roundhouse.core.states import RoundState
from roundhouse.core.trajectory import StepRecord
from roundhouse.logs.report.build import find_snapshots, outcome, read_session, result_outputs
from roundhouse.logs.report.logs import Notes, read_jsonl


def step(number: int, status: str = "CONTINUE", **fields: Any) -> StepRecord:
    return StepRecord.model_validate(
        {
            "session_step": number,
            "round_id": 0,
            "round_step": number,
            "agent": "linux",
            "agent_name": "linux",
            "status": status,
            **fields,
        }
    )


def test_bad_lines_are_skipped_and_said_and_a_last_line_without_newline_is_kept(
    tmp_path: Path,
) -> None:
    good = [step(1).model_dump_json(), step(2).model_dump_json()]
    (tmp_path / "response.log").write_text(f"{good[0]}\n{{not json\n{good[1]}")
    notes = Notes()
    steps = read_jsonl(tmp_path, "response.log", StepRecord, notes)
    assert [s.session_step for s in steps] == [1, 2]
    assert len(notes.lines) == 1 and notes.lines[0].startswith("response.log: line 2 was skipped")


def test_a_folder_with_only_a_blackboard_is_a_log_folder_with_its_missing_files_said(
    tmp_path: Path,
) -> None:
    (tmp_path / "blackboard.json").write_text('{"requests": {"request_0": "hello"}}')
    session = read_session(tmp_path)
    assert session.rounds == ()
    assert "response.log is missing" in session.notes
    assert "rounds.jsonl is missing" in session.notes


def test_steps_without_a_round_record_take_the_request_from_the_checkpoint(
    tmp_path: Path,
) -> None:
    (tmp_path / "response.log").write_text(step(1, "FINISH", answer="done").model_dump_json())
    (tmp_path / "session.json").write_text(
        '{"agent": "linux", "settings": {}, "rounds": [{"id": 0, "user_query": "say done"}]}'
    )
    [round_] = read_session(tmp_path).rounds
    assert (round_.request, round_.answer, round_.interrupted) == ("say done", "done", True)


def test_the_round_outcome_says_what_the_steps_show() -> None:
    def record(state: RoundState, error: str | None = None, cancelled: bool = False) -> RoundRecord:
        return RoundRecord(id=0, user_query="q", state=state, error=error, cancelled=cancelled)

    finished = [step(1), step(2, "FINISH", answer="42")]
    assert outcome(record(RoundState.FINISH), finished) == ("42", None)
    failed = [step(1, "FAIL", answer="no such file")]
    assert outcome(record(RoundState.FAIL), failed) == (None, "no such file")
    limited = record(RoundState.FAIL, error="max_step reached")  # the round says why
    assert outcome(limited, [step(1), step(2)]) == (None, "max_step reached")
    answer, error = outcome(record(RoundState.ERROR), [step(1), step(2)])
    assert answer is None and error is not None and "before an agent ended it" in error
    cancelled = record(RoundState.ERROR, error="cancelled by the user", cancelled=True)
    assert outcome(cancelled, [step(1)]) == (None, "cancelled by the user")
    answer, error = outcome(record(RoundState.CONTINUE), [step(1)])
    assert error is not None and "interrupted" in error
    answer, error = outcome(None, [step(1)])  # no record at all
    assert error is not None and "interrupted" in error


def test_snapshots_are_found_by_the_seeds_names() -> None:
    files = {
        "action_round_0_sub_round_0_final.png",
        "desktop_round_0_sub_round_0_final.png",
        "action_round_0_final.png",
        "ui_trees/ui_tree_round_0_final.json",
        "action_round_1_sub_round_2_final.png",
        "action_step3.png",
        "action_round_x_final.png",
    }
    found = find_snapshots(files)
    assert sorted(found) == [0, 1]
    first = found[0][0]
    assert [(i.name, i.label) for i in first.images] == [
        ("action_round_0_sub_round_0_final.png", "window"),
        ("desktop_round_0_sub_round_0_final.png", "whole desktop"),
    ]
    assert found[0][None].ui_tree == "ui_trees/ui_tree_round_0_final.json"
    assert list(found[1]) == [2]


def test_a_shell_result_shows_its_streams_apart_and_other_results_as_json() -> None:
    shell = Result(
        status=ResultStatus.SUCCESS,
        result={"exit_code": 1, "stdout": "", "stderr": "boom\n", "truncated": True},
    )
    assert [(o.label, o.text) for o in result_outputs(shell)] == [
        ("exit code", "1"),
        ("stderr", "boom\n"),
        ("note", "the output was cut in the middle (too long)"),
    ]
    [as_json] = result_outputs(Result(status=ResultStatus.SUCCESS, result={"a": [1]}))
    assert as_json.text == '{\n "a": [\n  1\n ]\n}'
    assert result_outputs(Result.failure("no")) == ()
