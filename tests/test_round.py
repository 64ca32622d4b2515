"""Rounds and sessions with the replay model against the real shell."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest

from roundhouse.config import Price
from roundhouse.core.events import AnswerRejected, Event, RoundChanged, StepTaken
from roundhouse.core.record import RecordState
from roundhouse.core.states import RoundState, Status
from roundhouse.core.user import NonInteractiveUser
from roundhouse.testing.user import ScriptedUser
from tests.helpers import (
    SessionFactory,
    descendants_running,
    read_jsonl,
    shell_answer,
    wait_for_async,
    write_replay,
)


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
    session = await make_session(model=f"replay:{replay}")
    outcomes = await session.run(["say first", "say second, then third"])
    assert [o.state for o in outcomes] == [RoundState.FINISH, RoundState.FINISH]
    assert [o.result for o in outcomes] == ["said first", "said second and third"]
    assert [o.round_step for o in outcomes] == [2, 3]
    assert session.record.session_step == 5
    assert session.record.requests == ["say first", "say second, then third"]
    steps = session.store.read_steps()
    assert [(s.round_id, s.round_step, s.session_step) for s in steps] == [
        (0, 1, 1),
        (0, 2, 2),
        (1, 1, 3),
        (1, 2, 4),
        (1, 3, 5),
    ]
    [ran] = steps[2].actions
    assert ran.result is not None and ran.result.result["stdout"] == "second\n"
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
    session = await make_session(model=f"replay:{replay}", max_round=2)
    outcomes = await session.run(["one", "two", "three"])
    assert len(outcomes) == 2


async def test_max_step_ends_the_round_in_fail(
    tmp_path: Path, make_session: SessionFactory
) -> None:
    replay = write_replay(tmp_path / "a.json", [shell_answer("CONTINUE", "true")] * 5)
    session = await make_session(model=f"replay:{replay}", max_step=3)
    outcome = await session.run_round("loop forever")
    assert outcome.state is RoundState.FAIL
    assert outcome.error == outcome.result == "max_step reached: 3 steps of 3"
    assert outcome.round_step == 3
    assert rounds_logged(session.store.folder)[-1]["record_state"] == "failed"


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
    session = await make_session(model=f"replay:{replay}", answer_retries=2, events=events)
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
    assert final["record_state"] == "failed"
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
    session = await make_session(model=f"replay:{replay}")
    outcome = await session.run_round("anything")
    assert outcome.state is RoundState.FINISH and outcome.result == "fine"
    assert session.store.read_steps()[0].retries == 1


async def test_a_model_out_of_answers_is_an_error_with_the_reason(
    tmp_path: Path, make_session: SessionFactory
) -> None:
    replay = write_replay(tmp_path / "a.json", [shell_answer("CONTINUE", "true")])
    session = await make_session(model=f"replay:{replay}")
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
    session = await make_session(model=f"replay:{replay}", events=events)
    task = asyncio.create_task(session.run_round("wait a long time"))
    await wait_for_async(lambda: any(isinstance(e, StepTaken) for e in events), "a step")
    await wait_for_async(
        lambda: descendants_running(os.getpid(), "sleep\x0030"), "the second command to run"
    )
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert rounds_logged(session.store.folder)[-1]["record_state"] == RecordState.CANCELLED.value
    assert session.store.read_steps()[0].status is Status.CONTINUE  # the finished step is on disk
    changed = [e.round for e in events if isinstance(e, RoundChanged)]
    assert changed[-1].state is RoundState.ERROR
    assert changed[-1].error == "cancelled by the user" and changed[-1].cancelled
    # The step in flight stays on the record, saying why it never concluded.
    cut = session.store.read_steps()
    assert len(cut) == 2 and cut[1].status is None and cut[1].error == "cancelled by the user"


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
    session = await make_session(
        model=f"replay:{replay}", user=NonInteractiveUser(assume_yes=False)
    )
    await session.run_round("delete it")
    assert (victim / "file").read_text() == "precious"
    step = session.store.read_steps()[0]
    assert step.actions[0].result is not None and step.actions[0].result.status.value == "skipped"
    result = step.actions[0].result
    assert "not interactive" in (result.error or "") and "--yes" in (result.error or "")


async def test_yes_lets_a_destructive_command_run(
    tmp_path: Path, make_session: SessionFactory
) -> None:
    victim = tmp_path / "scratch"
    victim.mkdir()
    replay = write_replay(
        tmp_path / "a.json",
        [shell_answer("CONTINUE", f"rm -rf {victim}"), shell_answer("FINISH", result="gone")],
    )
    session = await make_session(model=f"replay:{replay}", user=NonInteractiveUser(assume_yes=True))
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
    session = await make_session(model=f"replay:{replay}", user=user)
    outcome = await session.run_round("make a file, but ask me first")
    assert user.questions and "touch" in user.questions[0]
    assert not target.exists()
    assert outcome.state is RoundState.FAIL
    assert "declined" in (session.store.read_steps()[0].actions[0].result.error or "")  # type: ignore[union-attr]


async def test_confirm_with_a_yes_runs_the_action(
    tmp_path: Path, make_session: SessionFactory
) -> None:
    target = tmp_path / "made"
    replay = write_replay(
        tmp_path / "a.json",
        [shell_answer("CONFIRM", f"touch {target}"), shell_answer("FINISH", result="made")],
    )
    session = await make_session(model=f"replay:{replay}", user=ScriptedUser(confirms=[True]))
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
    session = await make_session(model=f"replay:{replay}", user=user, shell_policy="deny")
    await session.run_round("delete")
    assert victim.exists()
    assert user.questions == []  # nobody was even asked
    assert "deny" in (session.store.read_steps()[0].actions[0].result.error or "")  # type: ignore[union-attr]


async def test_pending_asks_the_user_and_records_the_answer(
    tmp_path: Path, make_session: SessionFactory
) -> None:
    replay = write_replay(
        tmp_path / "a.json",
        [shell_answer("PENDING", question="Which folder?"), shell_answer("FINISH", result="ok")],
    )
    session = await make_session(model=f"replay:{replay}", user=ScriptedUser(answers=["/tmp"]))
    await session.run_round("list a folder")
    qa = session.record.blackboard.questions
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
    session = await make_session(model=f"replay:{replay}", prices=prices)
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
    session = await make_session(model=f"replay:{replay}")
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
    session = await make_session(
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
    session = await make_session(model=f"replay:{replay}")
    outcome = await session.run_round("x")
    assert outcome.state is RoundState.FAIL
    first = session.store.read_steps()[0]
    assert first.status is Status.CONTINUE
    failed = first.actions[0].result
    assert failed is not None and "NotADirectoryError" in (failed.error or "")
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
    session = await make_session(model=f"replay:{replay}", sleep_time=1.5)
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
    session = await make_session(model=f"replay:{replay}", eva_round=True)
    outcome = await session.run_round("x")
    assert outcome.evaluation is not None and outcome.evaluation.complete == "yes"
    [logged] = read_jsonl(session.store.folder / "evaluation.log")
    assert logged["complete"] == "yes" and logged["sub_scores"][0]["name"] == "listed"
    assert logged["usage"]["input_tokens"] == 5
    assert outcome.usage.requests == 2  # the step and the judge


async def test_an_answer_about_a_ui_that_just_changed_is_checked_against_a_fresh_look() -> None:
    from roundhouse.agents.asking import ask_model
    from roundhouse.agents.responses import InvalidAnswer
    from roundhouse.core.events import EventBus
    from roundhouse.core.messages import Message
    from roundhouse.core.states import AgentKind
    from roundhouse.core.trajectory import StepRecord
    from roundhouse.models.base import ModelRequest
    from roundhouse.testing.function_model import FunctionModel

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
        step = StepRecord(
            session_step=1, round_id=0, round_step=1, agent=AgentKind.APP, agent_name="app"
        )
        asked = ask_model(
            model,
            old_view,
            parse,
            asker=step,
            retries=1,
            events=EventBus(),
            look_again=look_again,
        )
        return asked, model, step

    asked, model, step = run([new_view], valid_after=1)
    result = await asked
    assert (result.answer, step.retries, len(model.requests)) == ("the answer", 0, 1)
    asked, model, step = run([None], valid_after=1)  # nothing changed: the model is asked again
    await asked
    assert step.retries == 1 and len(model.requests) == 2
    assert step.usage.requests == 2  # both answers were counted on the step as they came
    # Refused against the fresh view too: it goes back with that view, not the old one.
    asked, model, step = run([new_view, None], valid_after=2)
    await asked
    retry = model.requests[1].messages
    assert [m.text for m in retry[:1]] == ["controls: 1 Close, 2 OK"] and len(retry) == 3
    assert retry[2].text.startswith("That answer is invalid: there is no control 2")


async def test_max_cost_is_checked_before_each_request_and_ends_the_round_in_fail(
    tmp_path: Path, make_session: SessionFactory
) -> None:
    paid = {"usage": {"input_tokens": 1000, "output_tokens": 100}, "model": "m"}  # $0.20 each
    replay = write_replay(
        tmp_path / "a.json", [{"answer": shell_answer("CONTINUE", "true"), **paid}] * 5
    )
    prices = {"m": Price(input_per_mtok=100, output_per_mtok=1000)}
    session = await make_session(model=f"replay:{replay}", prices=prices, max_cost=0.3)
    outcome = await session.run_round("loop")
    # $0.20 spent: under the cap, so a second request; $0.40: no third.
    assert outcome.state is RoundState.FAIL
    assert outcome.result == "max_cost reached: $0.40 spent of $0.3"
    assert [s.status for s in outcome.steps] == [Status.CONTINUE, Status.CONTINUE, None]
    assert outcome.steps[-1].error == outcome.result  # the step refused before asking
    assert session.usage.cost == pytest.approx(0.4)
    again = await session.run_round("once more")  # the session's cap holds for every round
    assert again.state is RoundState.FAIL and again.usage.requests == 0


async def test_max_cost_with_an_unknown_price_refuses_the_first_request_saying_why(
    tmp_path: Path, make_session: SessionFactory
) -> None:
    mystery = {"usage": {"input_tokens": 10}, "model": "mystery"}
    replay = write_replay(tmp_path / "a.json", [{"answer": shell_answer("FINISH"), **mystery}] * 2)
    session = await make_session(model=f"replay:{replay}", max_cost=1.0)
    first = await session.run_round("x")
    assert first.state is RoundState.FINISH  # nothing spent yet: nothing unknown yet
    second = await session.run_round("y")
    assert second.state is RoundState.FAIL
    assert "unknown" in (second.result or "") and "prices:" in (second.result or "")
