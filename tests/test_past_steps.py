"""The prompt's history is built from the step records in one place (models/observation.py
`past_steps`, `past_action`): these are the entries the agents' prompts showed before it
moved there, and the offline planner's assumed step reads as a step that ran."""

from __future__ import annotations

from roundhouse.core.commands import Result, ResultStatus
from roundhouse.core.states import AgentKind, Status
from roundhouse.core.trajectory import ActionRecord, StepRecord
from roundhouse.models.observation import NOT_RUN, PastStep, past_steps
from roundhouse.models.offline.several import assumed


def _step(**fields: object) -> StepRecord:
    return StepRecord.model_validate(
        {
            "session_step": 1,
            "round_id": 0,
            "round_step": 1,
            "agent": AgentKind.APP,
            "agent_name": "gedit",
            **fields,
        }
    )


def test_one_action_is_one_entry_with_the_answers_status() -> None:
    step = _step(
        status=Status.CONTINUE,
        comment="typing",
        actions=[
            ActionRecord(
                function="type_text",
                arguments={"text": "hi"},
                result=Result(status=ResultStatus.SUCCESS, result={"effect": "confirmed"}),
            )
        ],
    )
    assert past_steps(step) == (
        PastStep(
            function="type_text",
            arguments={"text": "hi"},
            status="CONTINUE",
            result_status="success",
            output={"effect": "confirmed"},
            error=None,
            comment="typing",
        ),
    )


def test_a_list_numbers_its_actions_and_says_why_one_did_not_run() -> None:
    failed = Result(status=ResultStatus.FAILURE, error="no control 7")
    step = _step(
        status=Status.FINISH,
        actions=[
            ActionRecord(function="click_control", arguments={"label": 7}, result=failed),
            ActionRecord(function="press_keys", arguments={"keys": "ctrl+s"}, not_run="stopped"),
        ],
    )
    assert past_steps(step) == (
        PastStep(
            function="click_control",
            arguments={"label": 7},
            status="CONTINUE",  # not the last: it went on
            result_status="failure",
            output=None,
            error="no control 7",
            in_list=(1, 2),
        ),
        PastStep(
            function="press_keys",
            arguments={"keys": "ctrl+s"},
            status="FINISH",
            result_status=NOT_RUN,
            output=None,
            error="stopped",
            in_list=(2, 2),
        ),
    )


def test_an_answer_that_called_nothing_is_an_entry_of_its_own() -> None:
    assert past_steps(_step(status=Status.FINISH, comment="done")) == (
        PastStep(
            function=None,
            arguments={},
            status="FINISH",
            result_status=None,
            output=None,
            error=None,
            comment="done",
        ),
    )


def test_a_question_answered_follows_the_actions() -> None:
    step = _step(
        status=Status.PENDING,
        question="Which file?",
        user_reply="notes.txt",
        actions=[ActionRecord(function="list_windows", result=Result(status=ResultStatus.SUCCESS))],
    )
    entries = past_steps(step)
    assert [entry.function for entry in entries] == ["list_windows", None]
    assert entries[1] == PastStep(
        function=None,
        arguments={},
        status="PENDING",
        result_status="answered",
        output="notes.txt",
        error=None,
    )


def test_a_step_not_concluded_has_no_status() -> None:
    (entry,) = past_steps(_step())
    assert entry.status == ""


def test_the_offline_planners_assumed_step_is_one_that_ran() -> None:
    answer = {"action": {"function": "click_control", "arguments": {"label": 3}}}
    assert assumed(answer) == PastStep(
        function="click_control",
        arguments={"label": 3},
        status="CONTINUE",
        result_status="success",
        output={"effect": "confirmed", "seen": "assumed"},
        error=None,
    )
    shell = {"action": {"function": "run_shell", "arguments": {"command": "ls"}}}
    assert assumed(shell).output == {"exit_code": 0, "stdout": "", "stderr": ""}
    assert assumed(shell).ran
