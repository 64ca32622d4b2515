"""Rounds and sessions with the replay model against the real shell."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from roundhouse.agents.user import NonInteractiveUser, ScriptedUser
from roundhouse.config import Price
from roundhouse.core.events import AnswerRejected, Event, RoundEnded, StepTaken
from roundhouse.core.record import RecordState
from roundhouse.core.states import RoundState, Status
from roundhouse.engine.round import MAX_STEP_REACHED
from tests.helpers import SessionFactory, read_jsonl, shell_answer, write_replay


def rounds_logged(folder: Path) -> list[dict[str, object]]:
    return read_jsonl(folder / "rounds.jsonl")


async def test_a_multi_round_session_shares_the_blackboard_and_counts_steps(
    tmp_path: Path, make_session: SessionFactory
) -> None:
    replay = write_replay(
        tmp_path / "answers.json",
        [
            shell_answer("CONTINUE", "echo first"),
            shell_answer("FINISH", result="said first"),
            shell_answer("CONTINUE", "echo second"),
            shell_answer("CONTINUE", "echo third"),
            shell_answer("FINISH", result="said second and third"),
        ],
    )
    session = make_session(model=f"replay:{replay}")
    outcomes = await session.run(["say first", "say second, then third"])
    assert [o.state for o in outcomes] == [RoundState.FINISH, RoundState.FINISH]
    assert [o.result for o in outcomes] == ["said first", "said second and third"]
    assert [o.steps for o in outcomes] == [2, 3]
    assert session.context.session_step == 5
    assert session.context.blackboard.requests == {
        "request_0": "say first",
        "request_1": "say second, then third",
    }
    steps = session.store.read_steps()
    assert [(s.round_id, s.round_step, s.session_step) for s in steps] == [
        (0, 1, 1),
        (0, 2, 2),
        (1, 1, 3),
        (1, 2, 4),
        (1, 3, 5),
    ]
    assert steps[2].result is not None and steps[2].result.result["stdout"] == "second\n"
    # The second round starts from fresh agent state: its first prompt shows no steps of round 0.
    prompts = read_jsonl(session.store.folder / "request.log")
    second_round_first_prompt = next(p for p in prompts if p["round_id"] == 1)
    assert (
        "echo first"
        not in second_round_first_prompt["messages"][1]["text"].split("Steps so far:")[1]
    )
    # ... but it sees the first request on the blackboard.
    assert "say first" in second_round_first_prompt["messages"][1]["text"]


async def test_max_round_stops_the_session(tmp_path: Path, make_session: SessionFactory) -> None:
    replay = write_replay(tmp_path / "a.json", [shell_answer("FINISH", result="ok")] * 3)
    session = make_session(model=f"replay:{replay}", max_round=2)
    outcomes = await session.run(["one", "two", "three"])
    assert len(outcomes) == 2


async def test_max_step_ends_the_round_in_fail(
    tmp_path: Path, make_session: SessionFactory
) -> None:
    replay = write_replay(tmp_path / "a.json", [shell_answer("CONTINUE", "true")] * 5)
    session = make_session(model=f"replay:{replay}", max_step=3)
    outcome = await session.run_round("loop forever")
    assert outcome.state is RoundState.FAIL
    assert outcome.error == MAX_STEP_REACHED
    assert outcome.steps == 3
    assert rounds_logged(session.store.folder)[-1]["state"] == "failed"


async def test_invalid_answers_go_back_to_the_model_then_the_round_errors(
    tmp_path: Path, make_session: SessionFactory
) -> None:
    replay = write_replay(
        tmp_path / "a.json",
        [
            "not json at all",
            {"observation": "no thought"},
            {**shell_answer("FINISH"), "action": {"function": "format_disk", "status": "FINISH"}},
        ],
    )
    events: list[Event] = []
    session = make_session(model=f"replay:{replay}", answer_retries=2, events=events)
    outcome = await session.run_round("anything")
    assert outcome.state is RoundState.ERROR
    assert "no valid answer in 3 attempts" in (outcome.error or "")
    assert "unknown function 'format_disk'" in (outcome.error or "")
    rejected = [e for e in events if isinstance(e, AnswerRejected)]
    assert [e.attempt for e in rejected] == [1, 2, 3]
    assert "not a JSON object" in rejected[0].reason
    # every attempt was a paid request, counted
    assert outcome.usage.requests == 3
    final = rounds_logged(session.store.folder)[-1]
    assert final["state"] == "failed"
    assert final["post_list"][-1]["message"].startswith("error: the model gave no valid answer")
    # The retry prompt carried the validation error back to the model.
    prompts = (session.store.folder / "request.log").read_text().splitlines()
    assert "That answer is invalid" in json.loads(prompts[1])["messages"][-1]["text"]


async def test_an_invalid_answer_then_a_valid_one_continues(
    tmp_path: Path, make_session: SessionFactory
) -> None:
    replay = write_replay(
        tmp_path / "a.json", ["```json\n{oops}\n```", shell_answer("FINISH", result="fine")]
    )
    session = make_session(model=f"replay:{replay}")
    outcome = await session.run_round("anything")
    assert outcome.state is RoundState.FINISH and outcome.result == "fine"
    assert session.store.read_steps()[0].retries == 1


async def test_a_model_out_of_answers_is_an_error_with_the_reason(
    tmp_path: Path, make_session: SessionFactory
) -> None:
    replay = write_replay(tmp_path / "a.json", [shell_answer("CONTINUE", "true")])
    session = make_session(model=f"replay:{replay}")
    outcome = await session.run_round("anything")
    assert outcome.state is RoundState.ERROR
    assert "no answer left after 1" in (outcome.error or "")


async def test_a_cancelled_round_is_recorded_and_its_logs_flushed(
    tmp_path: Path, make_session: SessionFactory
) -> None:
    replay = write_replay(
        tmp_path / "a.json",
        [shell_answer("CONTINUE", "echo started"), shell_answer("CONTINUE", "sleep 30")],
    )
    events: list[Event] = []
    session = make_session(model=f"replay:{replay}", events=events)
    task = asyncio.create_task(session.run_round("wait a long time"))
    while not any(isinstance(e, StepTaken) for e in events):
        await asyncio.sleep(0.02)
    await asyncio.sleep(0.3)  # the second command is running now
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert rounds_logged(session.store.folder)[-1]["state"] == RecordState.CANCELLED.value
    assert len(session.store.read_steps()) == 1  # the finished step is on disk
    ended = [e for e in events if isinstance(e, RoundEnded)]
    assert (
        ended and ended[0].state is RoundState.ERROR and ended[0].error == "cancelled by the user"
    )


async def test_a_destructive_command_is_refused_without_a_yes_when_not_interactive(
    tmp_path: Path, make_session: SessionFactory
) -> None:
    victim = tmp_path / "keep"
    victim.mkdir()
    (victim / "file").write_text("precious")
    replay = write_replay(
        tmp_path / "a.json",
        [shell_answer("CONTINUE", f"rm -rf {victim}"), shell_answer("FAIL", result="refused")],
    )
    session = make_session(model=f"replay:{replay}", user=NonInteractiveUser(assume_yes=False))
    await session.run_round("delete it")
    assert (victim / "file").read_text() == "precious"
    step = session.store.read_steps()[0]
    assert step.result is not None and step.result.status.value == "skipped"
    assert "not interactive" in (step.result.error or "") and "--yes" in (step.result.error or "")


async def test_yes_lets_a_destructive_command_run(
    tmp_path: Path, make_session: SessionFactory
) -> None:
    victim = tmp_path / "scratch"
    victim.mkdir()
    replay = write_replay(
        tmp_path / "a.json",
        [shell_answer("CONTINUE", f"rm -rf {victim}"), shell_answer("FINISH", result="gone")],
    )
    session = make_session(model=f"replay:{replay}", user=NonInteractiveUser(assume_yes=True))
    await session.run_round("delete it")
    assert not victim.exists()


async def test_confirm_is_asked_before_the_action_and_a_no_leaves_it_unrun(
    tmp_path: Path, make_session: SessionFactory
) -> None:
    target = tmp_path / "created-by-confirmed-step"
    replay = write_replay(
        tmp_path / "a.json",
        [
            shell_answer("CONFIRM", f"touch {target}"),
            shell_answer("FAIL", result="the user said no"),
        ],
    )
    user = ScriptedUser(confirms=[False])
    session = make_session(model=f"replay:{replay}", user=user)
    outcome = await session.run_round("make a file, but ask me first")
    assert user.questions and "touch" in user.questions[0]
    assert not target.exists()
    assert outcome.state is RoundState.FAIL
    assert "declined" in (session.store.read_steps()[0].result.error or "")  # type: ignore[union-attr]


async def test_confirm_with_a_yes_runs_the_action(
    tmp_path: Path, make_session: SessionFactory
) -> None:
    target = tmp_path / "made"
    replay = write_replay(
        tmp_path / "a.json",
        [shell_answer("CONFIRM", f"touch {target}"), shell_answer("FINISH", result="made")],
    )
    session = make_session(model=f"replay:{replay}", user=ScriptedUser(confirms=[True]))
    assert (await session.run_round("make it")).finished
    assert target.exists()


async def test_deny_policy_refuses_destructive_commands_outright(
    tmp_path: Path, make_session: SessionFactory
) -> None:
    victim = tmp_path / "v"
    victim.mkdir()
    replay = write_replay(
        tmp_path / "a.json",
        [shell_answer("CONTINUE", f"rm -r {victim}"), shell_answer("FAIL", result="no")],
    )
    user = ScriptedUser(confirms=[True])
    session = make_session(model=f"replay:{replay}", user=user, shell_policy="deny")
    await session.run_round("delete")
    assert victim.exists()
    assert user.questions == []  # nobody was even asked
    assert "deny" in (session.store.read_steps()[0].result.error or "")  # type: ignore[union-attr]


async def test_pending_asks_the_user_and_records_the_answer(
    tmp_path: Path, make_session: SessionFactory
) -> None:
    replay = write_replay(
        tmp_path / "a.json",
        [shell_answer("PENDING", question="Which folder?"), shell_answer("FINISH", result="ok")],
    )
    session = make_session(model=f"replay:{replay}", user=ScriptedUser(answers=["/tmp"]))
    await session.run_round("list a folder")
    qa = session.context.blackboard.questions
    assert [(q.question, q.answer) for q in qa] == [("Which folder?", "/tmp")]
    assert session.store.read_steps()[0].user_reply == "/tmp"


async def test_cost_is_priced_per_step_and_summed(
    tmp_path: Path, make_session: SessionFactory
) -> None:
    replay = write_replay(
        tmp_path / "a.json",
        [
            {
                "answer": shell_answer("CONTINUE", "true"),
                "usage": {"input_tokens": 1000, "output_tokens": 100},
                "model": "m",
            },
            {
                "answer": shell_answer("FINISH", result="done"),
                "usage": {"input_tokens": 2000, "output_tokens": 200},
                "model": "m",
            },
        ],
    )
    prices = {"m": Price(input_per_mtok=100, output_per_mtok=1000)}
    session = make_session(model=f"replay:{replay}", prices=prices)
    outcome = await session.run_round("x")
    steps = session.store.read_steps()
    assert [s.usage.cost for s in steps] == pytest.approx([0.2, 0.4])
    assert outcome.usage.cost == pytest.approx(0.6)
    assert session.usage.cost == pytest.approx(0.6)
    assert (outcome.usage.input_tokens, outcome.usage.output_tokens) == (3000, 300)


async def test_an_unknown_price_is_unknown_never_zero(
    tmp_path: Path, make_session: SessionFactory
) -> None:
    replay = write_replay(
        tmp_path / "a.json",
        [
            {
                "answer": shell_answer("FINISH", result="done"),
                "usage": {"input_tokens": 10, "output_tokens": 5},
                "model": "mystery",
            }
        ],
    )
    session = make_session(model=f"replay:{replay}")
    outcome = await session.run_round("x")
    assert not outcome.usage.cost_known
    assert outcome.usage.cost_text == "unknown"
    from roundhouse.engine.session import cost_line

    assert "$0.00" not in cost_line(outcome.usage)
    assert "unknown" in cost_line(outcome.usage)


async def test_the_evaluation_hook_records_not_evaluated_never_a_verdict(
    tmp_path: Path, make_session: SessionFactory
) -> None:
    replay = write_replay(tmp_path / "a.json", [shell_answer("FINISH", result="done")])
    session = make_session(
        model=f"replay:{replay}", model_eval="offline", eva_round=True, eva_session=True
    )
    await session.run(["x"])
    lines = read_jsonl(session.store.folder / "evaluation.log")
    assert [entry["complete"] for entry in lines] == ["not evaluated", "not evaluated"]
    assert lines[0]["round_id"] == 0 and lines[1]["round_id"] is None


async def test_a_tool_failure_is_shown_to_the_model_not_a_crash(
    tmp_path: Path, make_session: SessionFactory
) -> None:
    replay = write_replay(
        tmp_path / "a.json",
        [
            {
                "observation": "",
                "thought": "",
                "plan": [],
                "result": "",
                "action": {
                    "function": "run_shell",
                    "arguments": {"command": "ls", "cwd": "no-such-dir"},
                    "status": "CONTINUE",
                },
            },
            shell_answer("FAIL", result="the folder is missing"),
        ],
    )
    session = make_session(model=f"replay:{replay}")
    outcome = await session.run_round("x")
    assert outcome.state is RoundState.FAIL
    first = session.store.read_steps()[0]
    assert first.status is Status.CONTINUE
    assert first.result is not None and "NotADirectoryError" in (first.result.error or "")
    prompts = (session.store.folder / "request.log").read_text().splitlines()
    assert "NotADirectoryError" in prompts[-1]


async def test_sleep_time_is_waited_at_each_subtask_end(
    tmp_path: Path, make_session: SessionFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    slept: list[float] = []
    real_sleep = asyncio.sleep

    async def recording_sleep(seconds: float) -> None:
        slept.append(seconds)
        await real_sleep(0)

    monkeypatch.setattr("roundhouse.engine.round.asyncio.sleep", recording_sleep)
    replay = write_replay(tmp_path / "a.json", [shell_answer("FINISH", result="ok")])
    session = make_session(model=f"replay:{replay}", sleep_time=1.5)
    await session.run_round("x")
    assert slept == [1.5]


async def test_a_judge_model_gives_the_verdict_and_its_usage_is_counted(
    tmp_path: Path, make_session: SessionFactory
) -> None:
    verdict = {
        "reason": "the listing was printed",
        "sub_scores": [{"name": "listed", "evaluation": "yes"}],
        "complete": "yes",
    }
    replay = write_replay(
        tmp_path / "a.json",
        [shell_answer("FINISH", result="done"), {"answer": verdict, "usage": {"input_tokens": 5}}],
    )
    session = make_session(model=f"replay:{replay}", eva_round=True)
    outcome = await session.run_round("x")
    assert outcome.evaluation is not None and outcome.evaluation.complete == "yes"
    [logged] = read_jsonl(session.store.folder / "evaluation.log")
    assert logged["complete"] == "yes" and logged["sub_scores"][0]["name"] == "listed"
    assert logged["usage"]["input_tokens"] == 5
    assert outcome.usage.requests == 2  # the step and the judge


async def test_an_answer_about_a_ui_that_just_changed_is_checked_against_a_fresh_look() -> None:
    from roundhouse.agents.asking import ask_model
    from roundhouse.agents.responses import InvalidAnswer
    from roundhouse.core.context import RoundContext, SessionContext
    from roundhouse.core.events import EventBus
    from roundhouse.core.messages import Message
    from roundhouse.core.record import RoundRecord
    from roundhouse.models.base import ModelRequest
    from roundhouse.models.function import FunctionModel
    from roundhouse.models.pricing import PriceTable

    old_view = ModelRequest(agent="app", messages=(Message("user", "controls: 1 Close"),))
    new_view = ModelRequest(agent="app", messages=(Message("user", "controls: 1 Close, 2 OK"),))

    def run(looks: list[ModelRequest | None], valid_after: int) -> Any:
        checked: list[str] = []

        def parse(text: str) -> str:
            checked.append(text)
            if len(checked) <= valid_after:
                raise InvalidAnswer("there is no control 2")
            return text

        async def look_again() -> ModelRequest | None:
            return looks.pop(0) if looks else None

        model = FunctionModel(lambda request: "the answer")
        context = RoundContext(
            round_id=0,
            request="x",
            session=SessionContext(),
            record=RoundRecord(id=0, user_query="x"),
        )
        asked = ask_model(
            model,
            old_view,
            parse,
            context=context,
            prices=PriceTable(),
            retries=1,
            events=EventBus(),
            agent_name="app",
            look_again=look_again,
        )
        return asked, model

    asked, model = run([new_view], valid_after=1)
    result = await asked
    assert (result.answer, result.retries, len(model.requests)) == ("the answer", 0, 1)
    asked, model = run([None], valid_after=1)  # nothing changed: the model is asked again
    result = await asked
    assert result.retries == 1 and len(model.requests) == 2
    # Refused against the fresh view too: it goes back with that view, not the old one.
    asked, model = run([new_view, None], valid_after=2)
    result = await asked
    retry = model.requests[1].messages
    assert [m.text for m in retry[:1]] == ["controls: 1 Close, 2 OK"] and len(retry) == 3
    assert retry[2].text.startswith("That answer is invalid: there is no control 2")
