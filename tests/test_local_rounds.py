"""--agent computer with the open families (`uitars:`, `qwen-vl:`, `opencua:`): rounds
through the real client against the fake vLLM server (models/local/fake.py, written apart
from the client: it refuses what vLLM refuses and any image the model's processor would
resize), on the fake desktop. The round's ends come out as for every agent, named."""

from __future__ import annotations

import json
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import httpx
import pytest

from roundhouse.config import LocalSettings, OpenAISettings, Settings
from roundhouse.core.states import AgentKind, RoundState
from roundhouse.devices.contract import Rect
from roundhouse.engine.session import Session
from roundhouse.models.base import DOUBT, ModelRequest
from roundhouse.models.computer.observation import ComputerObservation, Screenshot
from roundhouse.models.computer.screen import ScreenMap, smart_resize
from roundhouse.models.local.client import LocalModel
from roundhouse.models.local.fake import FakeLocal, Turn
from roundhouse.testing.display import FakeDesktop
from tests.computer_rounds import computer_session, editor

KEY = "test-key"
SIZE = (1920, 1080)  # smart-resized to 1932x1092 (factor 28), 1920x1088 (factor 32)
UITARS = "ui-tars-1.5-7b"
QWEN25 = "qwen2.5-vl-7b-instruct"
QWEN3 = "qwen3-vl-8b-instruct"
OPENCUA = "opencua-7b"


@pytest.fixture(autouse=True)
def loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RH_LOOPBACK_ONLY", "1")
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def local_session(
    tmp_path: Path, fake: FakeDesktop, server: FakeLocal, spec: str, **settings: Any
) -> AbstractAsyncContextManager[Session]:
    vendor = {"openai": {"base_url": server.base_url, "api_key": KEY, "max_retries": 1}}
    return computer_session(tmp_path, fake, spec, vendor, **settings)


def on_image(x: int, y: int, factor: int = 28, grid: int | None = None) -> tuple[int, int]:
    """Where the model sees the desktop's logical point (x, y) on the image it is sent."""
    sent = smart_resize(*SIZE, factor, 4 * factor * factor, 16384 * factor * factor)
    mx, my = ScreenMap(Rect(0, 0, *SIZE), sent, grid).to_model(x, y)
    return round(mx), round(my)


def tool_call(action: str, **arguments: Any) -> str:
    body = {"name": "computer_use", "arguments": {"action": action, **arguments}}
    return f"<tool_call>\n{json.dumps(body)}\n</tool_call>"


def opencua_code(*lines: str) -> str:
    code = "\n".join(lines)
    return (
        f"## Thought\nThe editor is open.\n\n## Action\nGo on.\n\n## Code\n```python\n{code}\n```"
    )


def user_texts(body: dict[str, Any]) -> list[str]:
    content = body["messages"][-1]["content"]
    return [part["text"] for part in content if part["type"] == "text"]


X, Y = on_image(950, 550)
FAMILIES = {
    "uitars": (
        UITARS,
        [
            "Thought: I click the editor.\n"
            f"Action: click(start_box='<|box_start|>({X},{Y})<|box_end|>')",
            "Thought: I type and save.\n"
            "Action: type(content='native hello')\n\nhotkey(key='ctrl s')",
            "Thought: It is saved.\nAction: finished(content='The text is typed and saved.')",
        ],
    ),
    "qwen-vl": (
        QWEN25,
        [
            "I click the editor.\n" + tool_call("left_click", coordinate=[X, Y]),
            tool_call("type", text="native hello") + tool_call("key", keys=["ctrl", "s"]),
            "The text is typed and saved.\n" + tool_call("terminate", status="success"),
        ],
    ),
    "opencua": (
        OPENCUA,
        [
            opencua_code(f"pyautogui.click(x={X}, y={Y})"),
            opencua_code(
                "pyautogui.write(message='native hello')", "pyautogui.hotkey('ctrl', 's')"
            ),
            opencua_code(
                "computer.terminate(status='success', answer='The text is typed and saved.')"
            ),
        ],
    ),
}


@pytest.mark.parametrize("kind", FAMILIES)
async def test_a_round_clicks_types_saves_and_finishes_for_each_family(
    tmp_path: Path, kind: str
) -> None:
    model, answers = FAMILIES[kind]
    fake = FakeDesktop(size=SIZE)
    field, saved = editor(fake)
    # The FINISH after ctrl+s (which shows nothing on the fake desktop) is asked about once,
    # with a fresh screenshot (agents/base.py): the same end stands.
    turns = [
        Turn(text=text, usage={"prompt_tokens": 1500, "completion_tokens": 40}) for text in answers
    ]
    with FakeLocal([*turns, turns[-1]], key=KEY) as server:
        async with local_session(tmp_path, fake, server, f"{kind}:{model}") as session:
            outcome = await session.run_round("type 'native hello' and save it")
            steps = session.store.read_steps()
    assert server.refusals == []  # every request one vLLM takes, every image left as it is
    assert server.remaining == 0
    assert outcome.state is RoundState.FINISH
    assert outcome.result == "The text is typed and saved."
    [(x, y, button)] = fake.clicks
    assert abs(x - 950) <= 1 and abs(y - 550) <= 1 and button == "left"
    assert field.text == "native hello" and saved == ["native hello"]
    assert [s.agent for s in steps] == [AgentKind.COMPUTER] * 3
    assert [a.function for a in steps[1].actions] == ["type_text", "press_keys"]
    assert server.image_sizes(0) == [(1932, 1092)]
    assert any(DOUBT in text for text in user_texts(server.received[-1].body))
    # Tokens counted; a model on one's own server costs nothing unless priced.
    assert outcome.usage.requests == 4 and outcome.usage.input_tokens == 6000
    assert outcome.usage.cost == 0


async def test_qwen3_points_on_its_1000_grid_over_an_image_of_factor_32(tmp_path: Path) -> None:
    fake = FakeDesktop(size=SIZE)
    editor(fake)
    gx, gy = on_image(950, 550, 32, grid=1000)
    turns = [
        Turn(text=tool_call("left_click", coordinate=[gx, gy])),
        Turn(text=tool_call("answer", text="clicked")),
    ]
    with FakeLocal(turns, key=KEY) as server:
        async with local_session(tmp_path, fake, server, f"qwen-vl:{QWEN3}") as session:
            outcome = await session.run_round("click the editor")
    assert server.refusals == []
    assert outcome.state is RoundState.FINISH and outcome.result == "clicked"
    [(x, y, _)] = fake.clicks
    assert abs(x - 950) <= 1 and abs(y - 550) <= 1
    assert server.image_sizes(0) == [(1920, 1088)]
    system = server.received[0].body["messages"][0]
    assert (
        system["role"] == "system" and "The screen's resolution is 1000x1000." in system["content"]
    )


async def test_an_answer_outside_the_grammar_goes_back_to_the_model_saying_why(
    tmp_path: Path,
) -> None:
    fake = FakeDesktop(size=SIZE)
    field, _ = editor(fake)
    turns = [
        Turn(text="I will type the text now."),  # no Action: line
        Turn(text="Thought: I type.\nAction: type(content='x')"),
        Turn(text="Thought: done\nAction: finished(content='typed')"),
        Turn(text="Thought: done\nAction: finished(content='typed')"),
    ]
    with FakeLocal(turns, key=KEY) as server:
        async with local_session(tmp_path, fake, server, f"uitars:{UITARS}") as session:
            outcome = await session.run_round("type x")
            steps = session.store.read_steps()
    assert server.refusals == []
    assert outcome.state is RoundState.FINISH and fake.typed == "x"
    assert steps[0].retries == 1
    [said] = user_texts(server.received[1].body)
    assert "no 'Action:' line" in said and "Thought: ..." in said
    # The broken answer stays in the transcript, as the model wrote it.
    assert server.received[1].body["messages"][-2]["content"] == "I will type the text now."


async def test_a_grammar_broken_past_the_retries_ends_the_round_naming_it(tmp_path: Path) -> None:
    fake = FakeDesktop(size=SIZE)
    editor(fake)
    turns = [Turn(text=opencua_code("os.system('rm -rf ~')"))] * 3
    with FakeLocal(turns, key=KEY) as server:
        async with local_session(
            tmp_path, fake, server, f"opencua:{OPENCUA}", answer_retries=2
        ) as session:
            outcome = await session.run_round("type x")
    assert server.refusals == [] and server.remaining == 0
    assert outcome.state is RoundState.ERROR
    assert "no valid answer in 3 attempts" in (outcome.error or "")
    assert fake.typed == "" and fake.clicks == []


async def test_429_past_the_retries_ends_the_round_in_error_naming_it(tmp_path: Path) -> None:
    fake = FakeDesktop(size=SIZE)
    editor(fake)
    turns = [Turn(status=429, headers={"retry-after": "0"})] * 2
    with FakeLocal(turns, key=KEY) as server:
        async with local_session(tmp_path, fake, server, f"uitars:{UITARS}") as session:
            outcome = await session.run_round("type x")
    assert outcome.state is RoundState.ERROR
    assert "429 (rate limited)" in (outcome.error or "")
    assert outcome.usage.requests == 2


async def test_a_refusal_ends_the_round_fail_naming_it(tmp_path: Path) -> None:
    """A server that fills in the message's refusal (OpenAI's field): FAIL, named."""

    def refusing(request: httpx.Request) -> httpx.Response:
        message = {"role": "assistant", "content": None, "refusal": "I cannot help with that."}
        body = {"choices": [{"message": message, "finish_reason": "stop"}], "usage": {}}
        return httpx.Response(200, json=body)

    shot = tmp_path / "shot.png"
    from PIL import Image

    Image.new("RGB", SIZE, "white").save(shot)
    model = LocalModel(
        "uitars",
        UITARS,
        OpenAISettings(base_url="http://127.0.0.1:9/v1"),
        LocalSettings(),
        transport=httpx.MockTransport(refusing),
    )
    seen = ComputerObservation("round-1", Screenshot(shot, Rect(0, 0, *SIZE), SIZE))
    async with model:
        completion = await model.complete(ModelRequest("computer", (), seen))
    answer = json.loads(completion.text)
    assert answer["action"] == {"status": "FAIL"}
    assert answer["result"] == "the model refused: I cannot help with that."


def test_a_local_model_needs_an_endpoint_of_its_own() -> None:
    from roundhouse.config import ConfigError
    from roundhouse.models import make_model

    with pytest.raises(ConfigError, match="server of your own"):
        make_model(f"uitars:{UITARS}", Settings())
    with pytest.raises(ConfigError, match="neither Qwen2.5-VL nor Qwen3-VL"):
        make_model(
            "qwen-vl:llava",
            Settings.model_validate({"openai": {"base_url": "http://127.0.0.1:1/v1"}}),
        )


async def test_a_request_that_failed_leaves_the_transcript_as_it_was(tmp_path: Path) -> None:
    from PIL import Image

    from roundhouse.models.base import ModelError

    shot = tmp_path / "shot.png"
    Image.new("RGB", SIZE, "white").save(shot)
    seen = ComputerObservation("round-1", Screenshot(shot, Rect(0, 0, *SIZE), SIZE))
    turns = [Turn(status=500), Turn(text="Thought: t\nAction: wait()")]
    with FakeLocal(turns, key=KEY) as server:
        settings = OpenAISettings(base_url=server.base_url, api_key=KEY, max_retries=0)
        async with LocalModel("uitars", UITARS, settings, LocalSettings()) as model:
            with pytest.raises(ModelError, match="500"):
                await model.complete(ModelRequest("computer", (), seen))
            completion = await model.complete(ModelRequest("computer", (), seen))
    assert json.loads(completion.text)["action"][0]["function"] == "wait"
    assert [m["role"] for m in server.received[-1].body["messages"]] == ["user"]


async def test_qwen_may_use_roundhouse_tools_beside_computer_use(tmp_path: Path) -> None:
    """get_controls and set_text declared beside computer_use: their calls run as they are,
    and what they give back comes to the model as a <tool_response>."""
    fake = FakeDesktop(size=SIZE)
    field, _ = editor(fake)
    get = {"name": "get_controls", "arguments": {}}
    put = {"name": "set_text", "arguments": {"label": 1, "text": "native hello"}}
    turns = [
        Turn(text=f"<tool_call>\n{json.dumps(get)}\n</tool_call>"),
        Turn(text=f"<tool_call>\n{json.dumps(put)}\n</tool_call>"),
        Turn(text="Set.\n" + tool_call("terminate", status="success")),
    ]
    with FakeLocal(turns, key=KEY) as server:
        async with local_session(tmp_path, fake, server, f"qwen-vl:{QWEN25}") as session:
            outcome = await session.run_round("put native hello in the text")
    assert server.refusals == []
    assert outcome.state is RoundState.FINISH and field.text == "native hello"
    system = server.received[0].body["messages"][0]["content"]
    assert '"name": "launch_application"' in system and '"name": "set_text"' in system
    assert '"name": "click_coordinates"' not in system  # computer_use does the pixels
    [said] = user_texts(server.received[1].body)
    assert said.startswith("<tool_response>") and '"Text"' in said  # the controls, as text


async def test_ui_tars_is_offered_only_its_own_action_space(tmp_path: Path) -> None:
    fake = FakeDesktop(size=SIZE)
    editor(fake)
    turns = [
        Turn(text="Thought: t\nAction: get_controls()"),
        Turn(text="Thought: t\nAction: wait()"),
    ]
    with FakeLocal(
        [*turns, Turn(text="Thought: done\nAction: finished(content='ok')")], key=KEY
    ) as server:
        async with local_session(tmp_path, fake, server, f"uitars:{UITARS}") as session:
            await session.run_round("look")
    [said] = user_texts(server.received[1].body)
    assert "'get_controls' is not an action" in said
