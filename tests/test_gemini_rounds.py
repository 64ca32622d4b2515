"""--agent computer with `gemini:MODEL`: rounds through the real client against the fake
Gemini API (models/gemini/fake.py, written apart from the client: it refuses what the API
refuses), on the fake desktop. Points on the 0-999 grid land on the desktop, roundhouse's
tools go beside the computer_use tool, a safety decision goes through the confirm policy,
and the round's ends are named."""

from __future__ import annotations

import json
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import pytest

from roundhouse.config import ConfigError, Settings
from roundhouse.core.states import AgentKind, RoundState
from roundhouse.devices.contract import Rect
from roundhouse.engine.session import Session
from roundhouse.models import make_model
from roundhouse.models.base import DOUBT
from roundhouse.models.computer.screen import screen_map_for
from roundhouse.models.gemini.client import newest_images
from roundhouse.models.gemini.fake import Call, FakeGemini, Turn
from roundhouse.testing.display import FakeDesktop
from tests.computer_rounds import computer_session, editor

KEY = "test-key"
SIZE = (1920, 1080)  # sent as 1440x810, points on 0-999 over it
CU = "gemini-2.5-computer-use-preview-10-2025"
G3 = "gemini-3-flash-preview"


@pytest.fixture(autouse=True)
def loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RH_LOOPBACK_ONLY", "1")
    for name in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "GEMINI_BASE_URL", "GOOGLE_GEMINI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def gemini_session(
    tmp_path: Path, fake: FakeDesktop, server: FakeGemini, model: str = CU, **settings: Any
) -> AbstractAsyncContextManager[Session]:
    vendor = {"gemini": {"base_url": server.base_url, "api_key": KEY, "max_retries": 1}}
    return computer_session(tmp_path, fake, f"gemini:{model}", vendor, **settings)


def on_grid(x: int, y: int) -> dict[str, int]:
    """Where Gemini sees the desktop's logical point (x, y) on its 0-999 grid."""
    screen = screen_map_for(Rect(0, 0, *SIZE), SIZE, "gemini", grid=1000)
    gx, gy = screen.to_model(x, y)
    return {"x": round(gx), "y": round(gy)}


TYPE = Call(
    "type_text_at",
    {
        **on_grid(950, 550),
        "text": "native hello",
        "press_enter": False,
        "clear_before_typing": False,
    },
)
SAVE = Call("key_combination", {"keys": "control+s"})


@pytest.mark.parametrize("model", [CU, G3])
async def test_a_round_types_at_a_point_saves_and_finishes(tmp_path: Path, model: str) -> None:
    fake = FakeDesktop(size=SIZE)
    field, saved = editor(fake)
    turns = [
        Turn(calls=(TYPE,), text="I type into the editor."),
        Turn(calls=(SAVE,), ids=True),
        Turn(text="The text is typed and saved."),
        Turn(text="The text is typed and saved."),  # asked again: ctrl+s showed nothing here
    ]
    with FakeGemini(turns, key=KEY) as server:
        async with gemini_session(tmp_path, fake, server, model) as session:
            outcome = await session.run_round("type 'native hello' and save it")
            steps = session.store.read_steps()
    assert server.refusals == []  # Gemini 3's thought signatures went back too
    assert outcome.state is RoundState.FINISH
    assert outcome.result == "The text is typed and saved."
    [(x, y, button)] = fake.clicks
    assert abs(x - 950) <= 1 and abs(y - 550) <= 1 and button == "left"
    assert field.text == "native hello" and saved == ["native hello"]
    assert [s.agent for s in steps] == [AgentKind.COMPUTER] * 3
    assert [a.function for a in steps[0].actions] == ["click_coordinates", "type_text"]
    first = server.received[0].body
    assert first["tools"][0] == {
        "computerUse": {
            "environment": "ENVIRONMENT_DESKTOP",
            "excludedPredefinedFunctions": [
                "open_web_browser", "search", "navigate", "go_back", "go_forward", "hover_at",
            ],
        }
    }  # fmt: skip
    declared = {d["name"] for d in first["tools"][1]["functionDeclarations"]}
    assert {"launch_application", "get_controls", "set_text"} <= declared
    assert not declared & {"click_coordinates", "type_text", "press_keys"}
    # The call with an id was answered with it, its screenshot in its response.
    [answer] = server.received[2].body["contents"][-1]["parts"][:1]
    assert answer["functionResponse"]["id"] == "fc-fake-2-1"
    assert answer["functionResponse"]["parts"][0]["inlineData"]["mimeType"] == "image/png"
    last = server.received[-1].body["contents"][-1]["parts"]
    assert any(DOUBT in p.get("text", "") for p in last)
    assert outcome.usage.requests == 4 and outcome.usage.input_tokens == 4000


async def test_a_round_longer_than_the_screenshots_kept_goes_through(tmp_path: Path) -> None:
    """Six answers, each after a screenshot: older turns lose theirs (the last 3 keep them,
    as Google's reference client does), and the API, as the fake holds it, takes that."""
    fake = FakeDesktop(size=SIZE)
    field, saved = editor(fake)
    keys = [Call("key_combination", {"keys": key}) for key in ("End", "Home", "End", "Home")]
    turns = [
        Turn(calls=(TYPE,)),
        *(Turn(calls=(key,)) for key in keys),
        Turn(calls=(SAVE,)),
        Turn(text="Typed and saved."),
        Turn(text="Typed and saved."),
    ]
    with FakeGemini(turns, key=KEY) as server:
        async with gemini_session(tmp_path, fake, server, CU) as session:
            outcome = await session.run_round("type 'native hello' and save it")
    assert server.refusals == []
    assert outcome.state is RoundState.FINISH
    assert field.text == "native hello" and saved == ["native hello"]
    contents = server.received[-1].body["contents"]
    shots = [
        "inlineData" in json.dumps(content) for content in contents if content["role"] == "user"
    ]
    assert shots[-3:] == [True] * 3 and not all(shots)  # the oldest answers were trimmed


SECRET = Call(
    "type_text_at",
    {
        **on_grid(950, 550),
        "text": "hunter2",
        "press_enter": False,
        "clear_before_typing": False,
        "safety_decision": {
            "decision": "require_confirmation",
            "explanation": "The field looks like a password.",
        },
    },
)


async def test_a_safety_decision_is_acknowledged_under_yes(tmp_path: Path) -> None:
    fake = FakeDesktop(size=SIZE)
    field, _ = editor(fake)
    turns = [Turn(calls=(SECRET,)), Turn(text="Typed."), Turn(text="Typed.")]
    with FakeGemini(turns, key=KEY) as server:
        async with gemini_session(tmp_path, fake, server, assume_yes=True) as session:
            outcome = await session.run_round("type the password")
    assert server.refusals == []  # the fake refuses a confirmation not acknowledged
    assert outcome.state is RoundState.FINISH and field.text == "hunter2"
    answer = server.received[1].body["contents"][-1]["parts"][0]["functionResponse"]
    assert answer["response"]["safety_acknowledgement"] == "true"


async def test_a_safety_decision_declined_without_yes_fails_the_round_naming_it(
    tmp_path: Path,
) -> None:
    fake = FakeDesktop(size=SIZE)
    editor(fake)
    with FakeGemini([Turn(calls=(SECRET,))], key=KEY) as server:
        async with gemini_session(tmp_path, fake, server) as session:
            outcome = await session.run_round("type the password")
    assert outcome.state is RoundState.FAIL
    assert "The field looks like a password." in (outcome.result or "")
    assert "declined" in (outcome.result or "")
    assert fake.typed == "" and fake.clicks == []  # nothing ran
    assert server.remaining == 0 and len(server.received) == 1  # not acknowledged, not sent


async def test_a_function_it_cannot_do_goes_back_to_the_model(tmp_path: Path) -> None:
    fake = FakeDesktop(size=SIZE)
    editor(fake)
    turns = [
        Turn(calls=(Call("scroll_at", {"x": 10, "y": 10, "direction": "sideways"}),)),
        Turn(calls=(Call("click_at", on_grid(950, 550)),)),
        Turn(text="Clicked."),
    ]
    with FakeGemini(turns, key=KEY) as server:
        async with gemini_session(tmp_path, fake, server) as session:
            outcome = await session.run_round("click the editor")
            steps = session.store.read_steps()
    assert outcome.state is RoundState.FINISH and steps[0].retries == 1
    answer = server.received[1].body["contents"][-1]["parts"][0]["functionResponse"]
    assert "direction must be up, down, left or right" in answer["response"]["error"]


async def test_a_refusal_fails_the_round_naming_it(tmp_path: Path) -> None:
    fake = FakeDesktop(size=SIZE)
    editor(fake)
    with FakeGemini(
        [Turn(text="I can't help with that.", finish_reason="SAFETY")], key=KEY
    ) as server:
        async with gemini_session(tmp_path, fake, server) as session:
            outcome = await session.run_round("do something")
    assert outcome.state is RoundState.FAIL
    assert "the model refused (SAFETY)" in (outcome.result or "")


async def test_429_past_the_retries_ends_the_round_in_error_naming_it(tmp_path: Path) -> None:
    fake = FakeDesktop(size=SIZE)
    editor(fake)
    turns = [Turn(status=429, headers={"retry-after": "0"})] * 2
    with FakeGemini(turns, key=KEY) as server:
        async with gemini_session(tmp_path, fake, server) as session:
            outcome = await session.run_round("type x")
    assert outcome.state is RoundState.ERROR
    assert "429 (rate limited)" in (outcome.error or "")
    assert outcome.usage.requests == 2


def test_the_key_comes_from_the_environment_and_a_new_generation_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    base = {"gemini": {"base_url": "http://127.0.0.1:1"}}
    with pytest.raises(ConfigError, match="GEMINI_API_KEY"):
        make_model(f"gemini:{CU}", Settings.model_validate(base))
    monkeypatch.setenv("GEMINI_API_KEY", "from-env")
    model = make_model(f"gemini:{CU}", Settings.model_validate(base))
    assert model.name == f"gemini:{CU}"
    with pytest.raises(ConfigError, match="3.5 and later"):
        make_model("gemini:gemini-3.5-flash", Settings.model_validate(base))


def test_only_the_newest_turns_keep_their_screenshots() -> None:
    image = {"inlineData": {"mimeType": "image/png", "data": "AAAA"}}
    answer = {"functionResponse": {"name": "click_at", "response": {}, "parts": [image]}}
    contents = [{"role": "user", "parts": [{"text": "go"}, image]}]
    for _ in range(4):
        contents += [{"role": "model", "parts": [{"functionCall": {"name": "click_at"}}]}]
        contents += [{"role": "user", "parts": [answer]}]
    sent = newest_images(contents, 3)
    shown = [
        "parts" in p["functionResponse"] or "inlineData" in p
        for c in sent
        if c["role"] == "user"
        for p in c["parts"]
        if "functionResponse" in p or "inlineData" in p
    ]
    # The first turn's image is a line now; of the four answers, the newest three show.
    assert shown == [False, True, True, True]
    assert sent[0]["parts"][1] == {"text": "(an earlier screenshot, left out)"}
    assert contents[2]["parts"][0]["functionResponse"]["parts"] == [image]  # not changed
