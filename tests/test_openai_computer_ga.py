"""`openai-computer:gpt-5.4`: the GA `computer` tool, whose computer_call carries a list of
actions, in rounds against the fake Responses API (which refuses the preview tool for
gpt-5.4 and the GA tool for computer-use-preview), on the fake desktop: the batch runs in
order as one answer, the call is answered once by its call_id, chained by
previous_response_id, and a safety check goes through the confirm policy."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import pytest

from roundhouse.core.states import RoundState
from roundhouse.devices.contract import Rect
from roundhouse.engine.session import Session
from roundhouse.models.computer.screen import ScreenMap, fit_short_side
from roundhouse.models.openai_computer.fake import FakeOpenAIComputer, Turn
from roundhouse.models.openai_computer.tools import uses_ga
from roundhouse.testing.display import FakeDesktop
from tests.computer_rounds import computer_session, editor

KEY = "test-key"
SIZE = (1920, 1080)  # sent as 1365x768
CHECK = {"id": "sc_1", "code": "irrelevant_domain", "message": "Check the file name."}


@pytest.fixture(autouse=True)
def loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RH_LOOPBACK_ONLY", "1")
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def ga_session(
    tmp_path: Path, fake: FakeDesktop, server: FakeOpenAIComputer, **settings: Any
) -> AbstractAsyncContextManager[Session]:
    vendor = {"openai": {"base_url": server.base_url, "api_key": KEY, "max_retries": 1}}
    return computer_session(tmp_path, fake, "openai-computer:gpt-5.4", vendor, **settings)


def on_image(x: int, y: int) -> dict[str, int]:
    mx, my = ScreenMap(Rect(0, 0, *SIZE), fit_short_side(*SIZE)).to_model(x, y)
    return {"x": round(mx), "y": round(my)}


def test_the_model_picks_the_tool_unless_the_settings_say() -> None:
    assert uses_ga("gpt-5.4") and uses_ga("gpt-5.5-2026-05-01") and uses_ga("gpt-6")
    assert not uses_ga("computer-use-preview") and not uses_ga("gpt-5.1")
    assert uses_ga("my-deployment", "computer")
    assert not uses_ga("gpt-5.4", "computer_use_preview")


async def test_a_batch_of_actions_runs_as_one_answer_and_is_answered_once(tmp_path: Path) -> None:
    fake = FakeDesktop(size=SIZE)
    field, saved = editor(fake)
    turns = [
        Turn(actions=({"type": "click", **on_image(950, 550), "button": "left"},)),
        Turn(
            actions=(
                {"type": "type", "text": "native hello"},
                {"type": "keypress", "keys": ["CTRL", "S"]},
            )
        ),
        Turn(text="Saved?"),
        Turn(text="Saved."),  # asked again: ctrl+s showed nothing on the fake desktop
    ]
    with FakeOpenAIComputer(turns, key=KEY) as server:
        async with ga_session(tmp_path, fake, server) as session:
            outcome = await session.run_round("type 'native hello' and save it")
            steps = session.store.read_steps()
    assert server.refusals == []  # the GA tool for gpt-5.4, each call answered by its id
    assert outcome.state is RoundState.FINISH and outcome.result == "Saved."
    [(x, y, _)] = fake.clicks
    assert abs(x - 950) <= 2 and abs(y - 550) <= 2
    assert field.text == "native hello" and saved == ["native hello"]
    assert [a.function for a in steps[1].actions] == ["type_text", "press_keys"]
    first = server.received[0][1]
    assert first["tools"] == [{"type": "computer"}] and first["store"] is True
    answered = server.received[2][1]
    assert answered["previous_response_id"] == "resp_fake_2"
    [output] = [i for i in answered["input"] if i.get("type") == "computer_call_output"]
    assert output["call_id"] == "call_fake_2"


async def test_a_safety_check_on_a_batch_is_acknowledged_under_yes(
    tmp_path: Path,
) -> None:
    fake = FakeDesktop(size=SIZE)
    field, _ = editor(fake)
    batch = (
        {"type": "click", **on_image(950, 550), "button": "left"},
        {"type": "type", "text": "x"},
    )
    turns = [Turn(actions=batch, safety_checks=(CHECK,)), Turn(text="Typed."), Turn(text="Typed.")]
    with FakeOpenAIComputer(turns, key=KEY) as server:
        async with ga_session(tmp_path, fake, server, assume_yes=True) as session:
            outcome = await session.run_round("type x")
            steps = session.store.read_steps()
    assert server.refusals == []
    assert outcome.state is RoundState.FINISH and field.text == "x"
    assert [a.function for a in steps[0].actions] == ["click_coordinates", "type_text"]
    assert all(a.ran for a in steps[0].actions)
    assert server.received[1][1]["input"][0]["acknowledged_safety_checks"] == [CHECK]


async def test_a_safety_check_declined_without_yes_fails_the_round_naming_it(
    tmp_path: Path,
) -> None:
    fake = FakeDesktop(size=SIZE)
    editor(fake)
    batch = ({"type": "type", "text": "x"}, {"type": "keypress", "keys": ["ENTER"]})
    with FakeOpenAIComputer([Turn(actions=batch, safety_checks=(CHECK,))], key=KEY) as server:
        async with ga_session(tmp_path, fake, server) as session:
            outcome = await session.run_round("type x")
    assert outcome.state is RoundState.FAIL
    assert "Check the file name." in (outcome.result or "") and "declined" in (outcome.result or "")
    assert fake.typed == "" and len(server.received) == 1  # nothing ran, nothing acknowledged
