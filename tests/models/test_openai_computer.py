"""`openai-computer:MODEL` and its fake: the fake refuses what the Responses API refuses
(each refusal over real HTTP), and the client, against it, declares the screenshot's size,
maps points back, answers each call by its call_id and acknowledges safety checks."""

from __future__ import annotations

import base64
import io
import json
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from PIL import Image

from roundhouse.config import OpenAISettings
from roundhouse.core.messages import Message
from roundhouse.devices.contract import Rect
from roundhouse.models.base import REFUSAL, ModelError, ModelRequest
from roundhouse.models.computer.observation import ComputerObservation, Outcome, Screenshot
from roundhouse.models.openai_computer.client import OpenAIComputerModel
from roundhouse.models.openai_computer.fake import FakeOpenAIComputer, Turn
from roundhouse.models.openai_computer.tools import chord
from tests.models.fakes import Sleeps

KEY = "sk-test-openai-key"
MakeModel = Callable[..., OpenAIComputerModel]
CHECK = {"id": "sc_1", "code": "malicious_instructions", "message": "The page asks for a password."}


def data_url(width: int, height: int) -> str:
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), "white").save(buffer, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()


def tool(width: int = 1024, height: int = 768, environment: str = "linux") -> dict[str, Any]:
    return {
        "type": "computer_use_preview",
        "display_width": width,
        "display_height": height,
        "environment": environment,
    }


def first_input(width: int = 1024, height: int = 768) -> list[dict[str, Any]]:
    content = [
        {"type": "input_text", "text": "go"},
        {"type": "input_image", "image_url": data_url(width, height)},
    ]
    return [{"role": "user", "content": content}]


def body(**overrides: Any) -> dict[str, Any]:
    return {
        "model": "computer-use-preview",
        "tools": [tool()],
        "input": first_input(),
        "truncation": "auto",
        **overrides,
    }


@pytest.fixture
def fake() -> Iterator[FakeOpenAIComputer]:
    with FakeOpenAIComputer(key=KEY) as server:
        yield server


def post(fake: FakeOpenAIComputer, payload: dict[str, Any], key: str = KEY) -> httpx.Response:
    headers = {"authorization": f"Bearer {key}"} if key else {}
    return httpx.post(f"{fake.base_url}/responses", json=payload, headers=headers, timeout=10)


def refused(response: httpx.Response, status: int, words: str) -> None:
    assert response.status_code == status, response.text
    assert words in response.json()["error"]["message"], response.text


def call_output(call_id: str, checks: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    item: dict[str, Any] = {
        "type": "computer_call_output",
        "call_id": call_id,
        "output": {"type": "computer_screenshot", "image_url": data_url(1024, 768)},
    }
    if checks is not None:
        item["acknowledged_safety_checks"] = checks
    return item


# ------------------------------------------------------------------ the fake refuses


def test_the_fake_refuses_a_missing_or_wrong_key(fake: FakeOpenAIComputer) -> None:
    fake.push(Turn(text="hi"))
    refused(post(fake, body(), key=""), 401, "Incorrect API key")
    refused(post(fake, body(), key="sk-other"), 401, "Incorrect API key")
    assert post(fake, body()).status_code == 200


def test_the_fake_refuses_the_tool_on_a_model_that_does_not_take_it(
    fake: FakeOpenAIComputer,
) -> None:
    refused(
        post(fake, body(model="gpt-4o")),
        400,
        "Tool 'computer_use_preview' is not supported with gpt-4o.",
    )
    refused(post(fake, body(truncation="disabled")), 400, "truncation must be 'auto'")
    refused(post(fake, body(tools=[tool(environment="amiga")])), 400, "environment")


def test_the_fake_refuses_a_display_other_than_the_screenshot(fake: FakeOpenAIComputer) -> None:
    refused(post(fake, body(tools=[tool(1280, 800)])), 400, "screenshot sent is 1024x768")


def test_the_fake_refuses_unknown_previous_responses_and_call_ids(
    fake: FakeOpenAIComputer,
) -> None:
    fake.push(Turn(action={"type": "screenshot"}), Turn(text="done"))
    first = post(fake, body()).json()
    refused(post(fake, body(previous_response_id="resp_nope")), 400, "not found")
    answered = body(previous_response_id=first["id"], input=[call_output("call_other")])
    refused(post(fake, answered), 400, "No tool call found")
    unanswered = body(previous_response_id=first["id"], input=first_input())
    refused(post(fake, unanswered), 400, "No tool output found for computer call call_fake_1")
    good = body(previous_response_id=first["id"], input=[call_output("call_fake_1")])
    assert post(fake, good).status_code == 200


def test_the_fake_refuses_a_safety_check_not_acknowledged(fake: FakeOpenAIComputer) -> None:
    fake.push(Turn(action={"type": "type", "text": "x"}, safety_checks=(CHECK,)), Turn(text="ok"))
    first = post(fake, body()).json()
    [call] = [item for item in first["output"] if item["type"] == "computer_call"]
    assert call["pending_safety_checks"] == [CHECK]
    bare = body(previous_response_id=first["id"], input=[call_output("call_fake_1")])
    refused(post(fake, bare), 400, "sc_1 of call call_fake_1 were not acknowledged")
    acknowledged = body(
        previous_response_id=first["id"], input=[call_output("call_fake_1", [CHECK])]
    )
    assert post(fake, acknowledged).status_code == 200


# ------------------------------------------------------------------ the client


@pytest.fixture
async def make_model(fake: FakeOpenAIComputer, sleeps: Sleeps) -> AsyncIterator[MakeModel]:
    made: list[OpenAIComputerModel] = []

    def make(name: str = "computer-use-preview", **settings: Any) -> OpenAIComputerModel:
        env = {"OPENAI_BASE_URL": fake.base_url, "OPENAI_API_KEY": KEY}
        model = OpenAIComputerModel(name, OpenAISettings(**settings), env=env, sleep=sleeps)
        made.append(model)
        return model

    yield make
    for model in made:
        await model.aclose()


def shot(tmp_path: Path, pixels: tuple[int, int], region: Rect) -> Screenshot:
    file = tmp_path / "s.png"
    Image.new("RGB", pixels, "gray").save(file)
    return Screenshot(file, region, pixels)


def ask(
    screenshot: Screenshot, outcomes: tuple[Outcome, ...] = (), refused: str | None = None
) -> ModelRequest:
    messages = [Message("system", "You drive a Linux desktop."), Message("user", "save it")]
    if refused is not None:
        messages += [Message("assistant", "{}"), Message("user", f"{REFUSAL} {refused}")]
    observation = ComputerObservation("round-1", screenshot, outcomes)
    return ModelRequest(agent="computer", messages=tuple(messages), observation=observation)


def test_keys_become_chords_press_keys_takes() -> None:
    assert chord(["CTRL", "S"]) == "ctrl+s"
    assert chord(["ENTER"]) == "Return"
    assert chord(["ctrl", "shift", "ArrowLeft"]) == "ctrl+shift+Left"
    assert chord(["F4"]) == "F4"


async def test_a_click_is_mapped_back_and_the_call_answered_with_its_id(
    fake: FakeOpenAIComputer, make_model: MakeModel, tmp_path: Path
) -> None:
    screenshot = shot(tmp_path, (1920, 1080), Rect(0, 0, 1920, 1080))
    fake.push(
        Turn(action={"type": "click", "x": 682, "y": 384, "button": "left"}),
        Turn(action={"type": "keypress", "keys": ["CTRL", "S"]}),
        Turn(text="Saved."),
    )
    model = make_model()
    first = json.loads((await model.complete(ask(screenshot))).text)
    [click] = first["action"]
    assert click["function"] == "click_coordinates"
    assert abs(click["arguments"]["x"] - 960) <= 2 and abs(click["arguments"]["y"] - 540) <= 2
    sent = fake.received[-1].body
    assert sent["tools"][0]["display_width"] == 1365 and sent["tools"][0]["display_height"] == 768
    second = json.loads(
        (await model.complete(ask(screenshot, (Outcome("click", True, "done"),)))).text
    )
    assert second["action"][0]["arguments"] == {"keys": "ctrl+s"}
    failed = (Outcome("press_keys", False, "no window"),)
    final = json.loads((await model.complete(ask(screenshot, failed))).text)
    assert final["action"] == {"status": "FINISH"} and final["result"] == "Saved."
    assert fake.refusals == []
    last = fake.received[-1].body
    assert last["previous_response_id"] == "resp_fake_2"
    assert last["input"][0]["call_id"] == "call_fake_2"
    assert "press_keys failed: no window" in last["input"][1]["content"][0]["text"]


async def test_a_safety_check_is_confirm_and_acknowledged_once_approved(
    fake: FakeOpenAIComputer, make_model: MakeModel, tmp_path: Path
) -> None:
    screenshot = shot(tmp_path, (1024, 768), Rect(0, 0, 1024, 768))
    fake.push(Turn(action={"type": "type", "text": "x"}, safety_checks=(CHECK,)), Turn(text="ok"))
    model = make_model()
    answer = json.loads((await model.complete(ask(screenshot))).text)
    assert answer["action"][0]["status"] == "CONFIRM"
    assert answer["safety_checks"] == ["The page asks for a password."]
    await model.complete(ask(screenshot, (Outcome("type_text", True, "done"),)))
    assert fake.refusals == []
    assert fake.received[-1].body["input"][0]["acknowledged_safety_checks"] == [CHECK]


async def test_an_unsupported_action_is_said_back_with_the_screen(
    fake: FakeOpenAIComputer, make_model: MakeModel, tmp_path: Path
) -> None:
    screenshot = shot(tmp_path, (1024, 768), Rect(0, 0, 1024, 768))
    fake.push(Turn(action={"type": "move", "x": 1, "y": 1}), Turn(text="ok"))
    model = make_model()
    answer = json.loads((await model.complete(ask(screenshot))).text)
    assert answer["action"][0]["function"] == "computer_unsupported"
    await model.complete(ask(screenshot, refused="unknown function 'computer_unsupported'"))
    assert fake.refusals == []
    note = fake.received[-1].body["input"][-1]["content"][0]["text"]
    assert "'move' is not supported" in note


async def test_refusals_and_retries(
    fake: FakeOpenAIComputer, make_model: MakeModel, tmp_path: Path, sleeps: Sleeps
) -> None:
    screenshot = shot(tmp_path, (1024, 768), Rect(0, 0, 1024, 768))
    fake.push(Turn(status=429, headers={"retry-after": "2"}), Turn(refusal="I can't help."))
    completion = await make_model().complete(ask(screenshot))
    assert json.loads(completion.text)["result"] == "the model refused: I can't help."
    assert completion.extra["retried"] == ["429"] and sleeps.calls == [2.0]
    assert completion.usage.requests == 2
    fake.push(*[Turn(status=500)] * 2)
    with pytest.raises(ModelError, match=r"500 \(server error\).*gave up after 2 attempts"):
        await make_model(max_retries=1).complete(ask(screenshot))


def test_the_endpoint_and_key_are_checked_first() -> None:
    with pytest.raises(ModelError, match="non-loopback"):
        OpenAIComputerModel(
            "computer-use-preview",
            OpenAISettings(),
            env={"RH_LOOPBACK_ONLY": "1", "OPENAI_API_KEY": "k"},
        )
    with pytest.raises(ModelError, match="OPENAI_API_KEY"):
        OpenAIComputerModel(
            "computer-use-preview", OpenAISettings(base_url="http://127.0.0.1:9"), env={}
        )
