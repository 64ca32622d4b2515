"""Rounds through the real OpenAI client against the fake server over real HTTP."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from roundhouse.config import Price
from roundhouse.core.states import RoundState, Status
from roundhouse.models.fake_openai import FakeOpenAI, Reply
from tests.helpers import SessionFactory, read_jsonl, shell_answer


def completion(answer: dict[str, object], prompt: int, output: int) -> Reply:
    return Reply.completion(json.dumps(answer), prompt_tokens=prompt, completion_tokens=output)


async def test_a_shell_round_through_the_fake_server_counts_retries_and_errors(
    tmp_path: Path, make_session: SessionFactory
) -> None:
    replies = [
        Reply.error(429, "slow down", {"Retry-After": "0"}),
        completion(shell_answer("CONTINUE", "echo from-model"), 1000, 100),
        Reply.malformed(),
        Reply.completion("this is not the JSON you asked for", 400, 10),
        completion(shell_answer("FINISH", result="the model said from-model"), 2000, 50),
    ]
    with FakeOpenAI(replies) as server:
        session = await make_session(
            model="openai:gpt-4o-mini",
            openai={"base_url": server.base_url, "api_key": "test", "max_retries": 3},
            prices={"gpt-4o-mini": Price(input_per_mtok=1.0, output_per_mtok=10.0)},
        )
        outcome = await session.run_round("say from-model")
        received = server.requests
    await session.models.close()
    assert outcome.state is RoundState.FINISH
    assert outcome.result == "the model said from-model"
    steps = session.store.read_steps()
    [ran] = steps[0].actions
    assert ran.result is not None and ran.result.result["stdout"] == "from-model\n"
    # Every HTTP attempt is a request; the invalid answer was sent back and paid for.
    assert len(received) == 5
    assert outcome.usage.requests == 5
    assert (outcome.usage.input_tokens, outcome.usage.output_tokens) == (3400, 160)
    assert steps[1].retries == 1
    step_costs = [s.usage.cost for s in steps]
    assert all(cost is not None and cost > 0 for cost in step_costs)
    assert outcome.usage.cost == pytest.approx(sum(c for c in step_costs if c))
    assert outcome.usage.cost == pytest.approx((3400 * 1.0 + 160 * 10.0) / 1e6)
    # The re-ask carried the validation error to the model.
    last_messages = received[-1].body["messages"]
    assert "That answer is invalid" in last_messages[-1]["content"]


async def test_an_unreachable_endpoint_ends_the_round_in_error_with_the_reason(
    tmp_path: Path, make_session: SessionFactory
) -> None:
    with FakeOpenAI() as server:
        dead_url = server.base_url  # closed when the block ends
    session = await make_session(
        model="openai:gpt-4o-mini",
        openai={"base_url": dead_url, "api_key": "test", "max_retries": 0, "timeout": 2},
    )
    outcome = await session.run_round("anything")
    await session.models.close()
    assert outcome.state is RoundState.ERROR
    assert "cannot connect" in (outcome.error or "")
    assert outcome.usage.requests == 1


async def test_a_storm_of_429s_ends_the_round_in_error_once_the_budget_is_spent(
    tmp_path: Path, make_session: SessionFactory
) -> None:
    storm = [Reply.error(429, "slow down", {"Retry-After": "1"}) for _ in range(20)]
    with FakeOpenAI(storm) as server:
        session = await make_session(
            model="openai:gpt-4o-mini",
            openai={
                "base_url": server.base_url,
                "api_key": "test",
                "max_retries": 20,
                "retry_budget": 2.5,
            },
        )
        outcome = await session.run_round("anything")
        received = len(server.requests)
    await session.models.close()
    assert outcome.state is RoundState.ERROR
    assert "retry budget of 2.5 s" in (outcome.error or "")
    # Two waits of 1 s fit the budget; the third attempt was the last, and all were counted.
    assert received == 3 and outcome.usage.requests == 3
    # The round's record on disk carries the error.
    rounds = read_jsonl(session.store.folder / "rounds.jsonl")
    assert rounds[-1]["record_state"] == "failed"
    assert "retry budget" in rounds[-1]["post_list"][-1]["message"]


def test_acceptance_cli_cost_line_matches_the_steps(tmp_path: Path) -> None:
    replies = [
        completion(shell_answer("CONTINUE", "uname -r"), 1200, 80),
        completion(shell_answer("FINISH", result="kernel read"), 1500, 40),
    ]
    with FakeOpenAI(replies) as server:
        env = {k: v for k, v in os.environ.items() if not k.startswith("ROUNDHOUSE_")}
        env |= {"ROUNDHOUSE_OPENAI__BASE_URL": server.base_url, "OPENAI_API_KEY": "test"}
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "roundhouse",
                "run",
                "what is the kernel version",
                "--model",
                "openai:gpt-4o-mini",
                "--logs",
                "L",
                "--task",
                "oa",
            ],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 0, done.stderr
    steps = read_jsonl(tmp_path / "L" / "oa" / "response.log")
    costs = [step["usage"]["cost"] for step in steps]
    assert all(cost > 0 for cost in costs)  # gpt-4o-mini has a known price
    expected = f"Request total cost for current round is ${sum(costs):.6f}".rstrip("0")
    assert expected in done.stdout


async def test_native_tool_calls_reach_the_one_parser(
    tmp_path: Path, make_session: SessionFactory
) -> None:
    """openai.native_tools: the tools go out in the request's `tools`; an action given as a
    tool call runs; a tool call with broken arguments is refused and asked again, as a
    broken JSON answer would be."""
    said = json.dumps({"observation": "a shell", "thought": "echo it"})
    replies = [
        Reply.tool_call("run_shell", {"command": "echo from-tool"}, text=said),
        Reply.tool_call("run_shell", "{not json"),
        completion(shell_answer("FINISH", result="echoed from-tool"), 10, 5),
    ]
    with FakeOpenAI(replies) as server:
        session = await make_session(
            model="openai:gpt-4o-mini",
            openai={"base_url": server.base_url, "api_key": "test", "native_tools": True},
        )
        outcome = await session.run_round("echo from-tool")
        received = server.requests
    await session.models.close()
    assert outcome.state is RoundState.FINISH, outcome.error
    offered = received[0].body["tools"]
    assert {tool["function"]["name"] for tool in offered} >= {"run_shell"}
    run_shell = next(tool for tool in offered if tool["function"]["name"] == "run_shell")
    assert "command" in run_shell["function"]["parameters"]["properties"]
    assert received[0].body["tool_choice"] == "auto"
    steps = session.store.read_steps()
    assert steps[0].observation == "a shell"  # the content gave the rest of the answer
    [ran] = steps[0].actions
    assert ran.result is not None and ran.result.result["stdout"] == "from-tool\n"
    assert steps[1].retries == 1  # the broken call was refused and asked again
    assert "That answer is invalid" in received[2].body["messages"][-1]["content"]
    assert outcome.usage.requests == 3


async def test_several_native_tool_calls_are_one_answers_list_of_actions(
    tmp_path: Path, make_session: SessionFactory
) -> None:
    """Tool calls made together are the actions of one answer, run in their order: one
    model call, two commands."""
    said = json.dumps({"observation": "a shell", "thought": "both"})
    calls = (
        ("run_shell", json.dumps({"command": "echo one > a.txt"})),
        ("run_shell", json.dumps({"command": "cat a.txt"})),
    )
    replies = [
        Reply(text=said, tool_calls=calls, finish_reason="tool_calls"),
        completion(shell_answer("FINISH", result="wrote one"), 10, 5),
    ]
    with FakeOpenAI(replies) as server:
        session = await make_session(
            model="openai:gpt-4o-mini",
            openai={"base_url": server.base_url, "api_key": "test", "native_tools": True},
        )
        outcome = await session.run_round("write one and show it")
    await session.models.close()
    assert outcome.state is RoundState.FINISH, outcome.error
    first = session.store.read_steps()[0]
    assert first.usage.requests == 1 and first.status is Status.CONTINUE
    assert [a.arguments["command"] for a in first.ran] == ["echo one > a.txt", "cat a.txt"]
    assert first.ran[1].result is not None and first.ran[1].result.result["stdout"] == "one\n"


async def test_tools_stay_in_the_prompt_alone_by_default_and_after_an_endpoint_refuses_them(
    tmp_path: Path, make_session: SessionFactory
) -> None:
    with FakeOpenAI([completion(shell_answer("FINISH", result="done"), 10, 5)]) as server:
        session = await make_session(
            model="openai:gpt-4o-mini", openai={"base_url": server.base_url, "api_key": "test"}
        )
        await session.run_round("anything")
        assert "tools" not in server.requests[0].body
    await session.models.close()

    replies = [
        Reply.error(400, "tools are not supported by this model"),
        completion(shell_answer("FINISH", result="done"), 10, 5),
    ]
    with FakeOpenAI(replies) as server:
        session = await make_session(
            model="openai:gpt-4o-mini",
            openai={"base_url": server.base_url, "api_key": "test", "native_tools": True},
        )
        outcome = await session.run_round("anything")
        bodies = [request.body for request in server.requests]
    await session.models.close()
    assert outcome.state is RoundState.FINISH, outcome.error
    assert "tools" in bodies[0] and "tools" not in bodies[1]
