"""A computer-use model as the HostAgent's AppAgent (`model_app`, under `--agent host`): the
host (here a scripted model answering roundhouse's JSON) picks the window and writes the
subtask; `anthropic:MODEL`, through the real client against the fake Anthropic server,
carries the subtask out by pixels and keys, and its end goes back to the host. On the
fake desktop: the round record shows both agents, the cost is the two models' together,
and the session's limits hold the AppAgent's requests too."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from roundhouse.config import ConfigError, Settings
from roundhouse.core.states import AgentKind, RoundState
from roundhouse.devices.base import LocalDispatcher
from roundhouse.devices.contract import Rect
from roundhouse.devices.linux.tools import desktop_registry
from roundhouse.engine.compose import compose_session
from roundhouse.engine.round import NoSnapshots
from roundhouse.engine.session import Session
from roundhouse.models.anthropic.fake import FakeAnthropic, Turn
from roundhouse.models.base import ModelRequest
from roundhouse.models.computer.screen import ScreenMap, fit_anthropic
from roundhouse.models.observation import HostObservation
from roundhouse.testing.display import FakeDesktop
from roundhouse.testing.function_model import FunctionModel
from roundhouse.testing.tools import fake_tools
from tests.computer_rounds import editor

KEY = "test-key"
SIZE = (1920, 1080)
SUBTASK = "type 'native hello' and save it"


@pytest.fixture(autouse=True)
def loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RH_LOOPBACK_ONLY", "1")
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def host_answer(request: ModelRequest) -> dict[str, Any]:
    """Select gedit and hand it the subtask; once a subtask has ended, end as it did."""
    seen = request.observation
    assert isinstance(seen, HostObservation)
    if seen.subtasks:
        ended = seen.subtasks[-1]
        return {
            "observation": "the subtask ended",
            "thought": "nothing else is asked",
            "action": {"function": None, "status": ended.status},
            "result": f"host: {ended.result}",
        }
    gedit = next(w for w in seen.windows if "gedit" in w.title)
    return {
        "observation": "gedit is open",
        "thought": "the editor does it",
        "action": {
            "function": "select_window",
            "arguments": {"window_id": gedit.xid},
            "status": "ASSIGN",
        },
        "current_subtask": SUBTASK,
        "plan": ["type the text", "save it"],
    }


@asynccontextmanager
async def host_with_claude_app(
    tmp_path: Path, fake: FakeDesktop, server: FakeAnthropic, **settings: Any
) -> AsyncIterator[tuple[Session, FunctionModel]]:
    config = Settings.model_validate(
        {
            "logs": tmp_path / "logs",
            "workdir": tmp_path,
            "model": "function",
            "model_app": "anthropic:claude-sonnet-4-5",
            "agent": "host",
            "desktop": {"effect_grace": 0},
            "anthropic": {"base_url": server.base_url, "api_key": KEY, "max_retries": 1},
            # The scripted host at no cost: the round's cost is then Claude's alone.
            "prices": {"function": {"input_per_mtok": 0, "output_per_mtok": 0}},
            **settings,
        }
    )
    host = FunctionModel(host_answer)
    async with fake_tools(fake, config) as tools:
        async with compose_session(
            config,
            dispatcher=LocalDispatcher(desktop_registry(tools)),
            models={"function": host},
            snapshots=NoSnapshots(),
        ) as session:
            yield session, host


def on_image(x: int, y: int) -> list[int]:
    """Where Claude sees the desktop's logical point (x, y) on the image it is sent."""
    mx, my = ScreenMap(Rect(0, 0, *SIZE), fit_anthropic(*SIZE)).to_model(x, y)
    return [round(mx), round(my)]


def typed_and_saved() -> list[Turn]:
    """A click into the editor's text (950, 550), the typing, ctrl+s, the final text."""
    return [
        Turn(actions=({"action": "left_click", "coordinate": on_image(950, 550)},)),
        Turn(
            actions=(
                {"action": "type", "text": "native hello"},
                {"action": "key", "text": "ctrl+s"},
            )
        ),
        Turn(text="The text is typed and saved."),
        Turn(text="The text is typed and saved."),  # asked once more: ctrl+s showed nothing
    ]


async def test_the_host_assigns_and_a_computer_use_app_agent_finishes_the_subtask(
    tmp_path: Path,
) -> None:
    fake = FakeDesktop(size=SIZE)
    _, saved = editor(fake)
    with FakeAnthropic(typed_and_saved(), key=KEY) as server:
        async with host_with_claude_app(tmp_path, fake, server) as (session, host):
            outcome = await session.run_round("type 'native hello' into gedit and save it")
            steps = session.store.read_steps()
    assert server.refusals == [] and server.remaining == 0
    assert outcome.state is RoundState.FINISH
    assert outcome.result == "host: The text is typed and saved."
    assert saved == ["native hello"]
    assert [s.agent for s in steps] == [AgentKind.HOST, *[AgentKind.APP] * 3, AgentKind.HOST]
    assert {s.agent_name for s in steps if s.agent is AgentKind.APP} == {"gedit"}
    assert [a.function for a in steps[2].actions] == ["type_text", "press_keys"]
    # The vendor was asked the subtask, in the window the host chose, the plan beside it.
    first = server.received[0].body["messages"][0]["content"]
    asked = " ".join(b.get("text", "") for b in first if b["type"] == "text")
    assert SUBTASK in asked and "gedit" in asked and "- save it" in asked
    # Only the app's pixel and control tools: launching and the shell are the host's.
    tools = {t["name"] for t in server.received[0].body["tools"]}
    assert "launch_application" not in tools and "run_shell" not in tools
    assert "get_controls" in tools
    # The cost: Claude's four requests, priced; the host's beside them (priced at $0 here).
    assert outcome.usage.requests == 4 + len(host.requests)
    assert outcome.usage.cost is not None and outcome.usage.cost > 0


async def test_the_sessions_limits_hold_the_app_agents_requests(tmp_path: Path) -> None:
    fake = FakeDesktop(size=SIZE)
    editor(fake)
    with FakeAnthropic(typed_and_saved(), key=KEY) as server:
        async with host_with_claude_app(tmp_path, fake, server, max_requests=2) as (session, _):
            outcome = await session.run_round("type 'native hello' into gedit and save it")
    assert outcome.state is RoundState.FAIL
    assert "max_requests reached" in (outcome.result or "")
    assert len(server.received) == 1  # the host's request, then one of Claude's


async def test_a_computer_use_host_is_refused_naming_what_it_can_be(tmp_path: Path) -> None:
    config = Settings.model_validate(
        {"logs": tmp_path / "logs", "model": "anthropic:claude-sonnet-4-5", "agent": "host"}
    )
    async with fake_tools(FakeDesktop(), config) as tools:
        with pytest.raises(ConfigError, match=r"the host's AppAgent \(model_app\)"):
            async with compose_session(
                config, dispatcher=LocalDispatcher(desktop_registry(tools)), snapshots=NoSnapshots()
            ):
                pass


async def test_each_assignment_is_a_new_conversation_with_the_vendor(tmp_path: Path) -> None:
    """The host hands gedit a second subtask after the first: Claude is asked it afresh (a
    transcript of one message), not as the tail of the first subtask's."""
    fake = FakeDesktop(size=SIZE)
    editor(fake)
    assigned: list[str] = []

    def twice(request: ModelRequest) -> dict[str, Any]:
        seen = request.observation
        assert isinstance(seen, HostObservation)
        if len(seen.subtasks) < 2:
            subtask = ["type 'one'", "type 'two'"][len(seen.subtasks)]
            assigned.append(subtask)
            gedit = next(w for w in seen.windows if "gedit" in w.title)
            select = {"function": "select_window", "arguments": {"window_id": gedit.xid}}
            return host_answer(request) | {
                "action": {**select, "status": "ASSIGN"},
                "current_subtask": subtask,
            }
        return host_answer(request)

    click = Turn(actions=({"action": "left_click", "coordinate": on_image(950, 550)},))
    turns = [
        click,
        Turn(actions=({"action": "type", "text": "one"},)),
        Turn(text="Typed one."),
        click,
        Turn(actions=({"action": "type", "text": "two"},)),
        Turn(text="Typed two."),
    ]
    with FakeAnthropic(turns, key=KEY) as server:
        async with host_with_claude_app(tmp_path, fake, server) as (session, host):
            host.answer = twice
            outcome = await session.run_round("type one, then two, into gedit")
    assert server.refusals == [] and server.remaining == 0
    assert outcome.state is RoundState.FINISH and assigned == ["type 'one'", "type 'two'"]
    firsts = [r.body["messages"] for r in server.received if len(r.body["messages"]) == 1]
    assert len(firsts) == 2  # each subtask opened a transcript of its own
    asked = [" ".join(b.get("text", "") for b in m[0]["content"]) for m in firsts]
    assert "type 'one'" in asked[0] and "type 'two'" in asked[1]
