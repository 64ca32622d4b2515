"""`anthropic:MODEL` against the fake Anthropic server (which refuses what the API
refuses), over real HTTP on 127.0.0.1: the tool version, the screenshot's size declared,
points mapped back onto the desktop, tool results by id, retries, refusals, caching and
usage."""

from __future__ import annotations

import base64
import dataclasses
import io
import json
import logging
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from roundhouse.config import AnthropicSettings, Settings
from roundhouse.core.messages import Message
from roundhouse.core.record import SessionRecord
from roundhouse.core.states import AgentKind
from roundhouse.devices.contract import Rect
from roundhouse.models.anthropic.client import AnthropicModel, outgoing
from roundhouse.models.anthropic.fake import FakeAnthropic, Turn
from roundhouse.models.anthropic.tools import (
    V20241022,
    V20250124,
    V20251124,
    UnknownModel,
    Unsupported,
    as_tool_call,
    computer_tool,
    tool_version,
    zoom_region,
)
from roundhouse.models.base import REFUSAL, ModelError, ModelRequest, OfferedTool
from roundhouse.models.computer.observation import ComputerObservation, Outcome, Screenshot
from roundhouse.models.computer.screen import ScreenMap, fit_anthropic
from tests.models.fakes import Sleeps

KEY = "sk-ant-secret-test-key"
MakeModel = Callable[..., AnthropicModel]


@pytest.fixture
def anthropic() -> Iterator[FakeAnthropic]:
    with FakeAnthropic(key=KEY) as server:
        yield server


@pytest.fixture
async def make_model(anthropic: FakeAnthropic, sleeps: Sleeps) -> AsyncIterator[MakeModel]:
    made: list[AnthropicModel] = []

    def make(name: str = "claude-sonnet-4-5", **settings: Any) -> AnthropicModel:
        env = {"ANTHROPIC_BASE_URL": anthropic.base_url, "ANTHROPIC_API_KEY": KEY}
        model = AnthropicModel(name, AnthropicSettings(**settings), env=env, sleep=sleeps)
        made.append(model)
        return model

    yield make
    for model in made:
        await model.aclose()


def push(fake: FakeAnthropic, *turns: Turn) -> None:
    fake._turns.extend(turns)


def shot(tmp_path: Path, pixels: tuple[int, int], region: Rect, name: str = "s.png") -> Screenshot:
    file = tmp_path / name
    Image.new("RGB", pixels, "gray").save(file)
    return Screenshot(file, region, pixels)


def ask(
    screenshot: Screenshot,
    outcomes: tuple[Outcome, ...] = (),
    conversation: str = "round-1",
    refused: str | None = None,
) -> ModelRequest:
    messages = [Message("system", "You drive a Linux desktop."), Message("user", "save it")]
    if refused is not None:
        messages += [Message("assistant", "{}"), Message("user", f"{REFUSAL} {refused}")]
    observation = ComputerObservation(conversation, screenshot, outcomes)
    return ModelRequest(agent="computer", messages=tuple(messages), observation=observation)


def sent(fake: FakeAnthropic, number: int = -1) -> dict[str, Any]:
    received = fake.received[number]
    assert received.refused is None, received.refused
    body: dict[str, Any] = received.body
    return body


def test_the_tool_version_follows_the_model() -> None:
    assert tool_version("claude-sonnet-4-5") is V20250124
    assert tool_version("claude-sonnet-4-5-20250929") is V20250124
    assert tool_version("claude-haiku-4-5") is V20250124
    assert tool_version("claude-opus-4-1-20250805") is V20250124
    assert tool_version("claude-sonnet-4-20250514") is V20250124
    assert tool_version("claude-3-7-sonnet-latest") is V20250124
    assert tool_version("claude-3-5-sonnet-20241022") is V20241022
    assert tool_version("claude-opus-4-5") is V20251124
    assert tool_version("claude-opus-4-7") is V20251124
    assert tool_version("claude-sonnet-4-6") is V20251124
    with pytest.raises(UnknownModel):
        tool_version("gpt-4o")


async def test_a_click_on_a_monitor_at_one_and_a_half_lands_on_its_logical_pixel(
    anthropic: FakeAnthropic, make_model: MakeModel, tmp_path: Path
) -> None:
    # The second monitor: 1280x800 logical at x=1920, shot in its own 1920x1200 pixels.
    screenshot = shot(tmp_path, (1920, 1200), Rect(1920, 0, 3200, 800))
    push(
        anthropic,
        Turn(text="Saving.", actions=({"action": "left_click", "coordinate": [678, 424]},)),
    )
    completion = await make_model().complete(ask(screenshot))

    body = sent(anthropic)
    [computer] = body["tools"]
    assert computer["type"] == "computer_20250124"
    assert (computer["display_width_px"], computer["display_height_px"]) == (1356, 847)
    assert anthropic.received[-1].headers["anthropic-beta"] == "computer-use-2025-01-24"
    assert body["system"][0]["cache_control"] == {"type": "ephemeral"}
    answer = json.loads(completion.text)
    [click] = answer["action"]
    # 678 of 1356 is the middle of the 1280 logical pixels from 1920; 424 of 847 of 800.
    assert click["function"] == "click_coordinates"
    assert abs(click["arguments"]["x"] - 2560) <= 1 and abs(click["arguments"]["y"] - 400) <= 1
    assert answer["thought"] == "Saving."
    assert completion.extra["display"] == [1356, 847]


async def test_each_tool_use_is_answered_by_its_id_with_the_new_screen(
    anthropic: FakeAnthropic, make_model: MakeModel, tmp_path: Path
) -> None:
    screenshot = shot(tmp_path, (1280, 800), Rect(0, 0, 1280, 800))
    push(
        anthropic,
        Turn(
            actions=(
                {"action": "type", "text": "native hello"},
                {"action": "key", "text": "ctrl+s"},
            )
        ),
        Turn(text="Saved."),
    )
    model = make_model()
    first = json.loads((await model.complete(ask(screenshot))).text)
    assert [a["function"] for a in first["action"]] == ["type_text", "press_keys"]
    assert first["action"][1]["arguments"] == {"keys": "ctrl+s"}
    outcomes = (Outcome("type_text", True, "done"), Outcome("press_keys", False, "no window"))
    final = json.loads((await model.complete(ask(screenshot, outcomes))).text)
    assert final["action"] == {"status": "FINISH"} and final["result"] == "Saved."

    results = sent(anthropic)["messages"][-1]["content"]
    assert [r["tool_use_id"] for r in results] == ["toolu_fake_1_1", "toolu_fake_1_2"]
    assert results[0]["content"] == [{"type": "text", "text": "done"}]
    assert results[1]["content"][0] == {"type": "text", "text": "failed: no window"}
    assert results[1]["content"][1]["type"] == "image"
    assert results[1]["cache_control"] == {"type": "ephemeral"}  # the prefix cached so far


async def test_an_action_roundhouse_cannot_do_is_refused_and_said_back_by_its_id(
    anthropic: FakeAnthropic, make_model: MakeModel, tmp_path: Path
) -> None:
    screenshot = shot(tmp_path, (1280, 800), Rect(0, 0, 1280, 800))
    # The API lets a key be held 100 s; roundhouse's hold_keys, 60.
    hold = {"action": "hold_key", "text": "shift", "duration": 80}
    push(anthropic, Turn(actions=(hold,)), Turn(text="Done."))
    model = make_model()
    answer = json.loads((await model.complete(ask(screenshot))).text)
    assert answer["action"][0]["function"] == "computer_unsupported"  # no tool: refused
    await model.complete(ask(screenshot, refused="unknown function 'computer_unsupported'"))
    [result] = sent(anthropic)["messages"][-1]["content"]
    assert result["is_error"] is True
    assert "duration must be between 0 and 60" in result["content"][0]["text"]


async def test_a_new_conversation_starts_a_new_transcript(
    anthropic: FakeAnthropic, make_model: MakeModel, tmp_path: Path
) -> None:
    screenshot = shot(tmp_path, (1280, 800), Rect(0, 0, 1280, 800))
    push(anthropic, Turn(actions=({"action": "screenshot"},)), Turn(text="ok"))
    model = make_model()
    answer = json.loads((await model.complete(ask(screenshot))).text)
    assert answer["action"] == {"status": "CONTINUE"}  # a screenshot: look again
    await model.complete(ask(screenshot, conversation="round-2"))
    assert len(sent(anthropic)["messages"]) == 1


async def test_overloaded_and_rate_limited_answers_are_retried_and_counted(
    anthropic: FakeAnthropic, make_model: MakeModel, tmp_path: Path, sleeps: Sleeps
) -> None:
    screenshot = shot(tmp_path, (1280, 800), Rect(0, 0, 1280, 800))
    push(
        anthropic,
        Turn(status=529),
        Turn(status=429, headers={"retry-after": "7"}),
        Turn(text="done", usage={"input_tokens": 100, "output_tokens": 20}),
    )
    completion = await make_model().complete(ask(screenshot))
    assert completion.extra["retried"] == ["529", "429"]
    assert completion.usage.requests == 3
    assert sleeps.calls == [1.0, 7.0]


async def test_retries_run_out_as_a_model_error_naming_them(
    anthropic: FakeAnthropic, make_model: MakeModel, tmp_path: Path
) -> None:
    screenshot = shot(tmp_path, (1280, 800), Rect(0, 0, 1280, 800))
    push(anthropic, *[Turn(status=529)] * 3)
    with pytest.raises(ModelError) as error:
        await make_model(max_retries=2).complete(ask(screenshot))
    assert "529 (overloaded)" in str(error.value) and "gave up after 3 attempts" in str(error.value)
    assert error.value.usage.requests == 3


async def test_a_refusal_ends_the_round_named(
    anthropic: FakeAnthropic, make_model: MakeModel, tmp_path: Path
) -> None:
    screenshot = shot(tmp_path, (1280, 800), Rect(0, 0, 1280, 800))
    push(anthropic, Turn(text="I can't help with that.", stop_reason="refusal"))
    answer = json.loads((await make_model().complete(ask(screenshot))).text)
    assert answer["action"] == {"status": "FAIL"}
    assert answer["result"] == "the model refused: I can't help with that."


async def test_cached_tokens_are_counted_as_input_and_apart(
    anthropic: FakeAnthropic, make_model: MakeModel, tmp_path: Path
) -> None:
    screenshot = shot(tmp_path, (1280, 800), Rect(0, 0, 1280, 800))
    usage = {
        "input_tokens": 50,
        "output_tokens": 20,
        "cache_read_input_tokens": 3000,
        "cache_creation_input_tokens": 400,
    }
    push(anthropic, Turn(text="done", usage=usage))
    completion = await make_model().complete(ask(screenshot))
    assert completion.usage.input_tokens == 3450
    assert (completion.usage.cache_read_tokens, completion.usage.cache_write_tokens) == (3000, 400)
    assert completion.model == "claude-sonnet-4-5"


async def test_a_refused_key_is_named_and_never_logged(
    make_model: MakeModel,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    anthropic: FakeAnthropic,
) -> None:
    screenshot = shot(tmp_path, (1280, 800), Rect(0, 0, 1280, 800))
    model = make_model()
    model._poster.client.headers["x-api-key"] = "sk-ant-wrong"
    caplog.set_level(logging.DEBUG)
    with pytest.raises(ModelError) as error:
        await model.complete(ask(screenshot))
    assert "refused the API key (401)" in str(error.value)
    assert "sk-ant" not in str(error.value) and "sk-ant" not in caplog.text


def test_the_endpoint_and_key_are_checked_before_any_request() -> None:
    loopback = {"RH_LOOPBACK_ONLY": "1", "ANTHROPIC_API_KEY": "k"}
    with pytest.raises(ModelError, match="non-loopback"):
        AnthropicModel("claude-sonnet-4-5", AnthropicSettings(), env=loopback)
    with pytest.raises(ModelError, match="ANTHROPIC_API_KEY"):
        AnthropicModel(
            "claude-sonnet-4-5", AnthropicSettings(base_url="http://127.0.0.1:9"), env={}
        )
    with pytest.raises(ModelError, match="no computer tool"):
        AnthropicModel("gpt-4o", AnthropicSettings(api_key="k"), env={})


def test_only_the_newest_screenshots_are_sent() -> None:
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "x"}}
    messages: list[dict[str, Any]] = [{"role": "user", "content": [image]}]
    for number in range(4):
        messages.append({"role": "assistant", "content": [{"type": "tool_use", "id": str(number)}]})
        result = {"type": "tool_result", "tool_use_id": str(number), "content": [image]}
        messages.append({"role": "user", "content": [result]})
    out = outgoing(messages, keep=2)
    kinds = [
        part["type"]
        for message in out[::2]
        for block in message["content"]
        for part in (block.get("content") or [block])
    ]
    assert kinds == ["text", "text", "text", "image", "image"]
    assert messages[0]["content"] == [image]  # the transcript itself is untouched


def test_the_key_from_the_settings_is_not_written_with_the_session() -> None:
    settings = Settings.model_validate({"anthropic": {"api_key": KEY}, "agent": "computer"})
    described = SessionRecord.describe(settings, AgentKind.COMPUTER)
    assert KEY not in json.dumps(described.settings)


async def test_a_long_round_sends_and_keeps_only_the_newest_screenshots(
    anthropic: FakeAnthropic, make_model: MakeModel, tmp_path: Path
) -> None:
    screenshot = shot(tmp_path, (1280, 800), Rect(0, 0, 1280, 800))
    push(anthropic, *[Turn(actions=({"action": "screenshot"},))] * 5)
    model = make_model(keep_screenshots=2)
    for _ in range(5):
        await model.complete(ask(screenshot))
    assert anthropic.refusals == []
    dumped = json.dumps(sent(anthropic)["messages"]) + json.dumps(
        model._chat.messages if model._chat else []
    )
    assert dumped.count('"type": "image"') == 2 + 2  # the last request's two, the two kept


def test_each_computer_action_becomes_its_tool_call_or_is_refused_saying_why() -> None:
    screen = ScreenMap(Rect(100, 50, 1380, 850), (1280, 800))  # a window's own screenshot
    assert as_tool_call({"action": "right_click", "coordinate": [10, 20]}, screen) == (
        "click_coordinates",
        {"x": 110, "y": 70, "button": "right"},
    )
    assert as_tool_call({"action": "double_click", "coordinate": [0, 0]}, screen) == (
        "click_coordinates",
        {"x": 100, "y": 50, "double": True},
    )
    scroll = {
        "action": "scroll",
        "coordinate": [5, 5],
        "scroll_direction": "up",
        "scroll_amount": 2,
    }
    assert as_tool_call(scroll, screen) == (
        "scroll",
        {"x": 105, "y": 55, "direction": "up", "amount": 2},
    )
    drag = {"action": "left_click_drag", "start_coordinate": [1, 2], "coordinate": [3, 4]}
    assert as_tool_call(drag, screen) == (
        "drag",
        {"start_x": 101, "start_y": 52, "end_x": 103, "end_y": 54},
    )
    assert as_tool_call({"action": "wait", "duration": 2}, screen) == ("wait", {"seconds": 2})
    assert as_tool_call({"action": "screenshot"}, screen) is None
    for refused, words in (
        ({"action": "left_click", "coordinate": [1280, 5]}, "outside the display"),
        ({"action": "left_click_drag", "coordinate": [5, 5]}, "needs start_coordinate"),
        ({"action": "left_click", "coordinate": [5, 5], "text": "shift a"}, "one combination"),
        ({"action": "type"}, "needs text"),
        ({"action": "hold_key", "text": "shift"}, "duration must be"),
        ({"action": "hold_key", "duration": 1}, "needs text"),
        ({"action": "left_mouse_down", "coordinate": [5, 5]}, "takes no coordinate"),
        ({"action": "wait", "duration": 600}, "between 0 and 60"),
        ({"action": "fly"}, "not one of computer_20251124's"),
    ):
        with pytest.raises(Unsupported, match=words):
            as_tool_call(refused, screen)


def test_the_finer_actions_become_the_finer_tools() -> None:
    screen = ScreenMap(Rect(100, 50, 1380, 850), (1280, 800))
    click = {"action": "left_click", "coordinate": [5, 5], "text": "shift"}
    assert as_tool_call(click, screen) == (
        "click_coordinates",
        {"x": 105, "y": 55, "hold": "Shift_L"},  # a lone modifier is held as its key
    )
    triple = {"action": "triple_click", "coordinate": [5, 5], "text": "ctrl"}
    assert as_tool_call(triple, screen) == (
        "click_coordinates",
        {"x": 105, "y": 55, "triple": True, "hold": "Control_L"},
    )
    scroll = {"action": "scroll", "coordinate": [5, 5], "scroll_direction": "up", "text": "ctrl"}
    assert as_tool_call(scroll, screen) == (
        "scroll",
        {"x": 105, "y": 55, "direction": "up", "amount": 3, "hold": "Control_L"},
    )
    here = {"action": "double_click", "text": "shift"}  # where the pointer is
    assert as_tool_call(here, screen) == ("click_pointer", {"double": True, "hold": "Shift_L"})
    move = {"action": "mouse_move", "coordinate": [640, 400]}
    assert as_tool_call(move, screen) == ("move_pointer", {"x": 740, "y": 450})
    assert as_tool_call({"action": "left_mouse_down"}, screen) == ("mouse_down", {})
    assert as_tool_call({"action": "left_mouse_up"}, screen) == ("mouse_up", {})
    assert as_tool_call({"action": "cursor_position"}, screen) == ("pointer_position", {})
    hold = {"action": "hold_key", "text": "Shift_L", "duration": 0.5}
    assert as_tool_call(hold, screen) == ("hold_keys", {"keys": "Shift_L", "seconds": 0.5})
    zoom = {"action": "zoom", "region": [0, 0, 640, 400]}
    assert as_tool_call(zoom, screen) is None  # the next screenshot is cut there
    assert zoom_region(zoom, screen) == (0.0, 0.0, 0.5, 0.5)
    for region in ([0, 0, 1281, 10], [10, 10, 5, 20], [0, 0, 5]):
        with pytest.raises(Unsupported, match="region"):
            zoom_region({"action": "zoom", "region": region}, screen)


def test_each_version_takes_its_own_actions_only() -> None:
    screen = ScreenMap(Rect(0, 0, 1280, 800), (1280, 800))
    zoom = {"action": "zoom", "region": [0, 0, 10, 10]}
    with pytest.raises(Unsupported, match="not one of computer_20250124's"):
        as_tool_call(zoom, screen, V20250124)
    triple = {"action": "triple_click", "coordinate": [5, 5]}
    with pytest.raises(Unsupported, match="not one of computer_20241022's"):
        as_tool_call(triple, screen, V20241022)
    move = {"action": "mouse_move", "coordinate": [5, 5]}
    assert as_tool_call(move, screen, V20241022) == ("move_pointer", {"x": 5, "y": 5})
    assert "enable_zoom" not in computer_tool(V20250124, screen)
    assert computer_tool(V20251124, screen)["enable_zoom"] is True


async def test_a_zoom_and_the_cursor_position_are_answered_in_the_displays_pixels(
    anthropic: FakeAnthropic, make_model: MakeModel, tmp_path: Path
) -> None:
    # A 2560x1600 desktop, shown to Claude at 1356x847 (about 1.15 megapixels).
    screenshot = shot(tmp_path, (2560, 1600), Rect(0, 0, 2560, 1600))
    width, height = display = fit_anthropic(2560, 1600)
    with Image.open(screenshot.file) as image:  # the top-left quarter red
        image.paste((255, 0, 0), (0, 0, 1280, 800))
        image.save(screenshot.file)
    zoom = {"action": "zoom", "region": [0, 0, width // 2, height // 2]}
    push(anthropic, Turn(actions=(zoom, {"action": "cursor_position"})), Turn(text="Done."))
    model = make_model("claude-opus-4-5")
    answer = json.loads((await model.complete(ask(screenshot))).text)
    assert [a["function"] for a in answer["action"]] == ["pointer_position"]
    point = {"x": 1000, "y": 500}  # the desktop's pixels
    ran = (Outcome("pointer_position", True, "x 1000 y 500", output=point),)
    await model.complete(ask(screenshot, ran))
    assert anthropic.refusals == []
    body = sent(anthropic)
    assert body["tools"][0]["enable_zoom"] is True
    zoomed, position = body["messages"][-1]["content"]
    assert zoomed["content"][0] == {"type": "text", "text": "the zoomed region"}
    data = base64.b64decode(zoomed["content"][1]["source"]["data"])
    with Image.open(io.BytesIO(data)) as image:
        assert image.size == display  # the region, enlarged to the display
        assert image.convert("RGB").getpixel((width // 2, height // 2)) == (255, 0, 0)
    x, y = ScreenMap(Rect(0, 0, 2560, 1600), display).to_model(1000, 500)
    said = f"X={round(x)},Y={round(y)}"  # the desktop's point, in the display's pixels
    assert said == "X=529,Y=264" and position["content"][0] == {"type": "text", "text": said}
    assert position["content"][1]["type"] == "image"  # the screen, in the last result


async def test_the_finer_tools_are_not_offered_as_custom_tools(
    anthropic: FakeAnthropic, make_model: MakeModel, tmp_path: Path
) -> None:
    screenshot = shot(tmp_path, (1280, 800), Rect(0, 0, 1280, 800))
    push(anthropic, Turn(text="Done."))
    offered = tuple(
        OfferedTool(name, name, {"type": "object", "properties": {}})
        for name in ("move_pointer", "pointer_position", "get_controls")
    )
    request = ask(screenshot)
    await make_model().complete(dataclasses.replace(request, tools=offered))
    assert [t["name"] for t in sent(anthropic)["tools"]] == ["computer", "get_controls"]
