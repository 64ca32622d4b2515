"""max_requests and max_tokens end a round as max_cost does, and refuse the request BEFORE it
is sent: counted where the answers come from (the replay file, the fake OpenAI server over
real HTTP), no request past a limit is ever made, retries included."""

from __future__ import annotations

import json
from pathlib import Path

from roundhouse.core.states import RoundState, Status
from roundhouse.engine.session import Session
from roundhouse.models.fake_openai import FakeOpenAI, Reply
from roundhouse.models.replay import ReplayModel
from tests.helpers import SessionFactory, shell_answer, write_replay


def replayed(session: Session, spec: str) -> ReplayModel:
    model = session.models.get(spec).inner
    assert isinstance(model, ReplayModel)
    return model


async def test_max_requests_refuses_the_request_past_it_and_ends_the_round_in_fail(
    tmp_path: Path, make_session: SessionFactory
) -> None:
    spec = f"replay:{write_replay(tmp_path / 'a.json', [shell_answer('CONTINUE', 'true')] * 5)}"
    session = await make_session(model=spec, max_requests=2)
    outcome = await session.run_round("loop")
    assert outcome.state is RoundState.FAIL
    assert outcome.result == outcome.error == "max_requests reached: 2 requests of 2"
    assert [s.status for s in outcome.steps] == [Status.CONTINUE, Status.CONTINUE, None]
    assert outcome.steps[-1].error == outcome.result  # the step refused before asking
    assert replayed(session, spec).used == 2  # the third answer was never asked for
    again = await session.run_round("once more")  # the session's cap holds for every round
    assert again.state is RoundState.FAIL and again.usage.requests == 0
    assert replayed(session, spec).used == 2


async def test_max_tokens_counts_input_and_output_and_refuses_the_next_request(
    tmp_path: Path, make_session: SessionFactory
) -> None:
    paid = {"usage": {"input_tokens": 100, "output_tokens": 50}}  # 150 tokens each
    answers = [{"answer": shell_answer("CONTINUE", "true"), **paid}] * 5
    spec = f"replay:{write_replay(tmp_path / 'a.json', answers)}"
    session = await make_session(model=spec, max_tokens=400)
    outcome = await session.run_round("loop")
    # 0, 150, 300 tokens spent: under the cap, so three requests; 450: no fourth.
    assert outcome.state is RoundState.FAIL
    assert outcome.result == "max_tokens reached: 450 tokens of 400"
    assert replayed(session, spec).used == 3
    assert (session.usage.input_tokens, session.usage.output_tokens) == (300, 150)


async def test_a_judge_the_limits_refuse_says_unsure_and_the_round_keeps_its_end(
    tmp_path: Path, make_session: SessionFactory
) -> None:
    verdict = {"reason": "listed", "complete": "yes"}
    spec = f"replay:{write_replay(tmp_path / 'a.json', [shell_answer('FINISH'), verdict])}"
    session = await make_session(model=spec, max_requests=1, eva_round=True)
    outcome = await session.run_round("x")
    assert outcome.state is RoundState.FINISH
    assert outcome.evaluation is not None and outcome.evaluation.complete == "unsure"
    assert "max_requests reached: 1 request of 1" in outcome.evaluation.reason
    assert replayed(session, spec).used == 1


def completion(answer: dict[str, object], prompt: int = 100, output: int = 50) -> Reply:
    return Reply.completion(json.dumps(answer), prompt_tokens=prompt, completion_tokens=output)


async def test_no_request_past_max_requests_reaches_the_server(
    make_session: SessionFactory,
) -> None:
    with FakeOpenAI([completion(shell_answer("CONTINUE", "true"))] * 5) as server:
        session = await make_session(
            model="openai:gpt-4o-mini",
            openai={"base_url": server.base_url, "api_key": "test"},
            max_requests=3,
        )
        outcome = await session.run_round("loop")
        received, left = len(server.requests), server.remaining
    await session.models.close()
    assert outcome.state is RoundState.FAIL
    assert outcome.result == "max_requests reached: 3 requests of 3"
    assert (received, left) == (3, 2)
    assert outcome.usage.requests == 3


async def test_a_retry_past_max_requests_is_refused_before_it_is_sent(
    make_session: SessionFactory,
) -> None:
    """The client retries a 429 by itself; each retry is a request the limits are asked
    about first, so a request that would need five attempts stops at the cap."""
    storm = [Reply.error(429, "slow down", {"Retry-After": "0"}) for _ in range(5)]
    with FakeOpenAI(storm) as server:
        session = await make_session(
            model="openai:gpt-4o-mini",
            openai={"base_url": server.base_url, "api_key": "test", "max_retries": 4},
            max_requests=2,
        )
        outcome = await session.run_round("anything")
        received = len(server.requests)
    await session.models.close()
    assert received == 2
    assert outcome.state is RoundState.FAIL
    assert outcome.result == "max_requests reached: 2 requests of 2"
    [step] = outcome.steps
    assert step.status is None and step.usage.requests == 2  # its attempts, counted


async def test_no_request_past_max_tokens_reaches_the_server(
    make_session: SessionFactory,
) -> None:
    with FakeOpenAI([completion(shell_answer("CONTINUE", "true"))] * 5) as server:
        session = await make_session(
            model="openai:gpt-4o-mini",
            openai={"base_url": server.base_url, "api_key": "test"},
            max_tokens=400,
        )
        outcome = await session.run_round("loop")
        received = len(server.requests)
    await session.models.close()
    assert outcome.result == "max_tokens reached: 450 tokens of 400"
    assert received == 3
