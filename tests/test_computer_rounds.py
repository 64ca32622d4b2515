"""--agent computer: rounds driven by `anthropic:MODEL` through the real client against the
fake Anthropic server (which refuses what the API refuses), on the fake desktop. The round
record, the cost and the ends of a round come out as for every agent."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from roundhouse.config import AnthropicSettings, ConfigError, Price, Settings
from roundhouse.core.commands import Command, Result
from roundhouse.core.states import AgentKind, RoundState
from roundhouse.devices.base import DeviceLost, LocalDispatcher
from roundhouse.devices.contract import Rect
from roundhouse.devices.describing import ToolSpec
from roundhouse.devices.linux.tools import desktop_registry
from roundhouse.engine.compose import compose_session
from roundhouse.engine.round import NoSnapshots
from roundhouse.engine.session import Session
from roundhouse.logs.resume import mark_interrupted, plan_resume
from roundhouse.models.anthropic.fake import FakeAnthropic, Turn
from roundhouse.models.base import DOUBT
from roundhouse.models.computer.screen import ScreenMap, fit_anthropic
from roundhouse.models.openai_computer.fake import FakeOpenAIComputer
from roundhouse.models.openai_computer.fake import Turn as FakeTurn
from roundhouse.testing.display import FakeDesktop
from roundhouse.testing.tools import fake_tools
from tests.computer_rounds import computer_session, editor

KEY = "test-key"
SIZE = (1920, 1080)  # shrunk to 1429x804 for Claude


@pytest.fixture(autouse=True)
def loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RH_LOOPBACK_ONLY", "1")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    for name in ("ANTHROPIC_BASE_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def claude_session(
    tmp_path: Path, fake: FakeDesktop, server: FakeAnthropic, **settings: Any
) -> AbstractAsyncContextManager[Session]:
    vendor = {"anthropic": {"base_url": server.base_url, "api_key": KEY, "max_retries": 1}}
    return computer_session(tmp_path, fake, "anthropic:claude-sonnet-4-5", vendor, **settings)


def told_of_unseen(body: dict[str, Any], function: str) -> bool:
    """Whether a request tells the model that its last action, `function`, showed nothing."""
    said = [b.get("text", "") for b in body["messages"][-1]["content"] if b["type"] == "text"]
    return any(DOUBT in text and function in text for text in said)


def on_image(x: int, y: int) -> list[int]:
    """Where Claude sees the desktop's logical point (x, y) on the image it is sent."""
    screen = ScreenMap(Rect(0, 0, *SIZE), fit_anthropic(*SIZE))
    mx, my = screen.to_model(x, y)
    return [round(mx), round(my)]


async def test_a_round_clicks_types_and_saves_and_finishes_with_the_final_text(
    tmp_path: Path,
) -> None:
    fake = FakeDesktop(size=SIZE)
    field = editor(fake)[0]
    saved: list[str] = []
    fake.on_keys("ctrl+s", lambda: saved.append(field.text))
    turns = [
        Turn(actions=({"action": "left_click", "coordinate": on_image(950, 550)},)),
        Turn(
            actions=(
                {"action": "type", "text": "native hello"},
                {"action": "key", "text": "ctrl+s"},
            )
        ),
        Turn(text="The text is typed."),
        # ctrl+s showed nothing on the fake desktop: the FINISH is questioned once, with a
        # fresh screenshot (agents/base.py), and this answer stands.
        Turn(text="The text is typed and saved."),
    ]
    with FakeAnthropic(turns, key=KEY) as server:
        async with claude_session(tmp_path, fake, server) as session:
            outcome = await session.run_round("type 'native hello' and save it")
            steps = session.store.read_steps()
    assert server.refusals == []  # every request was one the API takes
    assert outcome.state is RoundState.FINISH
    assert outcome.result == "The text is typed and saved."
    assert told_of_unseen(server.received[-1].body, "press_keys")
    [(x, y, button)] = fake.clicks
    assert abs(x - 950) <= 2 and abs(y - 550) <= 2 and button == "left"
    assert fake.typed == "native hello"
    assert saved == ["native hello"]
    assert [s.agent for s in steps] == [AgentKind.COMPUTER] * 3
    assert [a.function for a in steps[1].actions] == ["type_text", "press_keys"]
    assert all(s.screenshots for s in steps)
    assert outcome.usage.requests == 4  # three answers, and the FINISH asked about once
    assert outcome.usage.cost is not None and outcome.usage.cost > 0  # Claude's price is known
    # The tool_results answered the ids the fake gave, the screen in the last of them.
    last = server.received[-2].body["messages"][-1]["content"]
    assert [r["tool_use_id"] for r in last] == ["toolu_fake_2_1", "toolu_fake_2_2"]


async def test_a_refusal_fails_the_round_naming_it(tmp_path: Path) -> None:
    fake = FakeDesktop(size=SIZE)
    editor(fake)
    turns = [Turn(text="I won't do that.", stop_reason="refusal")]
    with FakeAnthropic(turns, key=KEY) as server:
        async with claude_session(tmp_path, fake, server) as session:
            outcome = await session.run_round("do something bad")
    assert outcome.state is RoundState.FAIL
    assert outcome.result == "the model refused: I won't do that."


async def test_overload_past_the_retries_ends_the_round_in_error_naming_529(
    tmp_path: Path,
) -> None:
    fake = FakeDesktop(size=SIZE)
    editor(fake)
    turns = [Turn(status=529, headers={"retry-after": "0"})] * 2
    with FakeAnthropic(turns, key=KEY) as server:
        async with claude_session(tmp_path, fake, server) as session:
            outcome = await session.run_round("anything")
    assert outcome.state is RoundState.ERROR
    assert "529 (overloaded)" in (outcome.error or "")
    assert outcome.usage.requests == 2


async def test_an_action_roundhouse_cannot_do_goes_back_to_the_model(tmp_path: Path) -> None:
    fake = FakeDesktop(size=SIZE)
    editor(fake)
    turns = [
        # The API lets a key be held 100 s; roundhouse's hold_keys, 60.
        Turn(actions=({"action": "hold_key", "text": "shift", "duration": 80},)),
        Turn(actions=({"action": "type", "text": "x"},)),
        Turn(text="done"),
        Turn(text="done"),  # after being told the typing showed nothing on the fake desktop
    ]
    with FakeAnthropic(turns, key=KEY) as server:
        async with claude_session(tmp_path, fake, server) as session:
            outcome = await session.run_round("type x")
            steps = session.store.read_steps()
    assert server.refusals == []
    assert outcome.state is RoundState.FINISH and fake.typed == "x"
    assert steps[0].retries == 1
    refused = server.received[1].body["messages"][-1]["content"][0]
    assert refused["is_error"] is True and "between 0 and 60" in refused["content"][0]["text"]


async def test_the_computer_agent_needs_a_computer_use_model(tmp_path: Path) -> None:
    config = Settings.model_validate({"logs": tmp_path / "logs", "agent": "computer"})
    fake = FakeDesktop()
    async with fake_tools(fake, config) as tools:
        with pytest.raises(ConfigError, match="computer-use model"):
            async with compose_session(
                config, dispatcher=LocalDispatcher(desktop_registry(tools)), snapshots=NoSnapshots()
            ):
                pass


CHECK = {"id": "sc_1", "code": "malicious_instructions", "message": "The page asks for a password."}


def openai_session(
    tmp_path: Path, fake: FakeDesktop, server: FakeOpenAIComputer, **settings: Any
) -> AbstractAsyncContextManager[Session]:
    vendor = {
        "openai": {"base_url": server.base_url, "api_key": KEY, "max_retries": 1},
        "prices": {"computer-use-preview": Price(input_per_mtok=3.0, output_per_mtok=12.0)},
    }
    return computer_session(
        tmp_path, fake, "openai-computer:computer-use-preview", vendor, **settings
    )


async def test_openai_a_safety_check_is_acknowledged_under_yes(tmp_path: Path) -> None:
    fake = FakeDesktop(size=SIZE)
    editor(fake)
    turns = [
        FakeTurn(action={"type": "type", "text": "native hello"}, safety_checks=(CHECK,)),
        FakeTurn(action={"type": "keypress", "keys": ["CTRL", "S"]}),
        FakeTurn(text="Saved?"),
        FakeTurn(text="Saved."),  # after being told ctrl+s showed nothing on the fake desktop
    ]
    with FakeOpenAIComputer(turns, key=KEY) as server:
        async with openai_session(tmp_path, fake, server, assume_yes=True) as session:
            outcome = await session.run_round("type 'native hello' and save it")
    assert server.refusals == []
    assert outcome.state is RoundState.FINISH and outcome.result == "Saved."
    assert fake.typed == "native hello"
    acknowledged = server.received[1].body["input"][0]["acknowledged_safety_checks"]
    assert acknowledged == [CHECK]
    assert outcome.usage.cost == pytest.approx((4 * 1000 * 3.0 + 4 * 50 * 12.0) / 1e6)


async def test_openai_a_safety_check_declined_without_yes_fails_the_round_naming_it(
    tmp_path: Path,
) -> None:
    fake = FakeDesktop(size=SIZE)
    editor(fake)
    turns = [FakeTurn(action={"type": "type", "text": "secret"}, safety_checks=(CHECK,))]
    with FakeOpenAIComputer(turns, key=KEY) as server:
        async with openai_session(tmp_path, fake, server) as session:
            outcome = await session.run_round("type the secret")
    assert outcome.state is RoundState.FAIL
    assert "The page asks for a password." in (outcome.result or "")
    assert "declined" in (outcome.result or "") and "--yes" in (outcome.result or "")
    assert fake.typed == ""  # nothing ran
    assert server.remaining == 0 and len(server.received) == 1  # not acknowledged, not sent


async def test_claude_may_use_roundhouse_tools_beside_the_pixels(tmp_path: Path) -> None:
    """get_controls and set_text as custom tools: their results come back as text."""
    fake = FakeDesktop(size=SIZE)
    field = editor(fake)[0]
    turns = [
        Turn(calls=({"name": "get_controls", "input": {}},)),
        Turn(calls=({"name": "set_text", "input": {"label": 1, "text": "native hello"}},)),
        Turn(text="Set."),
    ]
    with FakeAnthropic(turns, key=KEY) as server:
        async with claude_session(tmp_path, fake, server) as session:
            outcome = await session.run_round("put native hello in the text")
    assert server.refusals == []
    assert outcome.state is RoundState.FINISH and field.text == "native hello"
    declared = {tool["name"] for tool in server.received[0].body["tools"]}
    assert {"computer", "get_controls", "set_text", "launch_application"} <= declared
    [listed] = server.received[1].body["messages"][-1]["content"]
    assert listed["tool_use_id"] == "toolu_fake_1_1"
    assert '"Text"' in listed["content"][0]["text"]  # the controls, as text


async def test_a_computer_round_recorded_is_replayed_without_the_vendor(tmp_path: Path) -> None:
    recording = tmp_path / "answers.json"
    fake = FakeDesktop(size=SIZE)
    editor(fake)
    turns = [
        Turn(actions=({"action": "left_click", "coordinate": on_image(950, 550)},)),
        Turn(actions=({"action": "type", "text": "native hello"},)),
        Turn(text="Typed."),
    ]
    with FakeAnthropic(turns, key=KEY) as server:
        async with claude_session(tmp_path, fake, server, record_answers=recording) as session:
            recorded = await session.run_round("type 'native hello'")
    assert recorded.state is RoundState.FINISH

    again = FakeDesktop(size=SIZE)
    editor(again)
    with FakeAnthropic([], key=KEY) as silent:  # asked nothing: the replay answers
        replay = {"model": f"replay:{recording}", "logs": tmp_path / "logs2"}
        async with claude_session(tmp_path, again, silent, **replay) as session:
            replayed = await session.run_round("type 'native hello'")
        assert silent.received == []
    assert replayed.state is RoundState.FINISH and replayed.result == "Typed."
    assert again.typed == "native hello" and again.clicks == fake.clicks


@dataclass
class LosesTheDisplay:
    """The desktop's dispatcher, until a `wait` of 30 s: then the display is gone."""

    inner: LocalDispatcher

    async def execute(self, commands: Sequence[Command]) -> list[Result]:
        if any(c.tool_name == "wait" and c.parameters.get("seconds") == 30 for c in commands):
            raise DeviceLost("the display went away")
        return await self.inner.execute(commands)

    async def tool_specs(self) -> list[ToolSpec]:
        return await self.inner.tool_specs()


async def test_a_round_whose_display_was_lost_is_run_again_by_resume_afresh(
    tmp_path: Path,
) -> None:
    fake = FakeDesktop(size=SIZE)
    editor(fake)
    lost = [
        Turn(actions=({"action": "type", "text": "half "},)),
        Turn(actions=({"action": "wait", "duration": 30},)),
    ]
    config = Settings.model_validate(
        {
            "logs": tmp_path / "logs",
            "workdir": tmp_path,
            "model": "anthropic:claude-sonnet-4-5",
            "agent": "computer",
            "desktop": {"effect_grace": 0},
        }
    )
    with FakeAnthropic(lost, key=KEY) as server:
        first = config.model_copy(
            update={"anthropic": AnthropicSettings(base_url=server.base_url, api_key=KEY)}
        )
        async with fake_tools(fake, first) as tools:
            dispatcher = LosesTheDisplay(LocalDispatcher(desktop_registry(tools)))
            async with compose_session(
                first, dispatcher=dispatcher, snapshots=NoSnapshots()
            ) as session:
                ended = await session.run_round("type 'native hello'")
                folder = session.store.folder
    assert ended.state is RoundState.ERROR and ended.device_lost
    plan = plan_resume(folder)
    assert plan.requests == ["type 'native hello'"]

    again = [
        Turn(actions=({"action": "type", "text": "native hello"},)),
        Turn(text="Done?"),
        Turn(text="Done."),  # after being told the typing showed nothing on the fake desktop
    ]
    with FakeAnthropic(again, key=KEY) as server:
        second = config.model_copy(
            update={"anthropic": AnthropicSettings(base_url=server.base_url, api_key=KEY)}
        )
        async with fake_tools(fake, second) as tools:
            async with compose_session(
                second,
                resume=plan,
                dispatcher=LocalDispatcher(desktop_registry(tools)),
                snapshots=NoSnapshots(),
            ) as session:
                mark_interrupted(session.events, plan)
                outcome = await session.run_round(plan.requests[0])
                total = session.record.usage
        opening = server.received[0].body["messages"]
    assert outcome.state is RoundState.FINISH and outcome.result == "Done."
    assert len(opening) == 1  # a new transcript: the request and the screen
    assert fake.typed == "half native hello"
    assert total.requests == 5  # the lost round's two requests kept, and this round's three
