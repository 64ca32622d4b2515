"""The fake Anthropic server refuses what the API refuses: a fake that took anything
would prove nothing about the client. Each refusal is checked over real HTTP."""

from __future__ import annotations

import base64
import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from PIL import Image

from roundhouse.models.anthropic.fake import FakeAnthropic, Turn, load_script

KEY = "test-key"
HEADERS = {
    "x-api-key": KEY,
    "anthropic-version": "2023-06-01",
    "anthropic-beta": "computer-use-2025-01-24",
}


def png(width: int, height: int) -> dict[str, Any]:
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), "white").save(buffer, format="PNG")
    data = base64.b64encode(buffer.getvalue()).decode()
    return {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}}


def tool(kind: str = "computer_20250124", width: int = 1280, height: int = 800) -> dict[str, Any]:
    return {
        "type": kind,
        "name": "computer",
        "display_width_px": width,
        "display_height_px": height,
    }


def body(
    messages: list[dict[str, Any]] | None = None,
    model: str = "claude-sonnet-4-5",
    tools: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    first = [{"role": "user", "content": [{"type": "text", "text": "go"}, png(1280, 800)]}]
    return {
        "model": model,
        "max_tokens": 1024,
        "tools": tools if tools is not None else [tool()],
        "messages": messages if messages is not None else first,
    }


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic([Turn(actions=({"action": "screenshot"},))] * 3, key=KEY) as server:
        yield server


def post(fake: FakeAnthropic, payload: dict[str, Any], **headers: str) -> httpx.Response:
    sent = {**HEADERS, **headers}
    sent = {name: value for name, value in sent.items() if value}
    return httpx.post(f"{fake.base_url}/v1/messages", json=payload, headers=sent, timeout=10)


def refused(response: httpx.Response, status: int, words: str) -> None:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert words in error["message"], error


def test_a_valid_request_gets_the_scripted_tool_use(fake: FakeAnthropic) -> None:
    response = post(fake, body())
    assert response.status_code == 200, response.text
    message = response.json()
    assert message["stop_reason"] == "tool_use"
    [use] = message["content"]
    assert use["type"] == "tool_use" and use["input"] == {"action": "screenshot"}
    assert fake.refusals == []


def test_a_missing_or_wrong_key_is_refused(fake: FakeAnthropic) -> None:
    refused(post(fake, body(), **{"x-api-key": ""}), 401, "x-api-key")
    refused(post(fake, body(), **{"x-api-key": "other"}), 401, "x-api-key")
    assert fake.remaining == 3  # nothing answered from the script


def test_a_wrong_anthropic_version_is_refused(fake: FakeAnthropic) -> None:
    refused(post(fake, body(), **{"anthropic-version": ""}), 400, "anthropic-version")
    refused(post(fake, body(), **{"anthropic-version": "2024-01-01"}), 400, "anthropic-version")


def test_a_beta_header_not_matching_the_tool_version_is_refused(fake: FakeAnthropic) -> None:
    refused(post(fake, body(), **{"anthropic-beta": ""}), 400, "computer-use-2025-01-24")
    wrong = {"anthropic-beta": "computer-use-2025-11-24"}
    refused(post(fake, body(), **wrong), 400, "needs the beta header")
    several = {"anthropic-beta": "prompt-caching-2024-07-31, computer-use-2025-01-24"}
    assert post(fake, body(), **several).status_code == 200


def test_a_tool_version_the_model_does_not_take_is_refused(fake: FakeAnthropic) -> None:
    newer = body(tools=[tool("computer_20251124")])
    beta = {"anthropic-beta": "computer-use-2025-11-24"}
    refused(post(fake, newer, **beta), 400, "does not support the tool type computer_20251124")
    refused(post(fake, body(tools=[tool("computer_20990101")])), 400, "unknown tool type")
    # The same tool is right for Opus 4.5.
    assert (
        post(
            fake, body(model="claude-opus-4-5", tools=[tool("computer_20251124")]), **beta
        ).status_code
        == 200
    )


def test_a_display_size_other_than_the_last_screenshot_is_refused(fake: FakeAnthropic) -> None:
    refused(post(fake, body(tools=[tool(width=1024, height=768)])), 400, "last screenshot sent")
    no_image = [{"role": "user", "content": "go"}]
    refused(post(fake, body(messages=no_image)), 400, "no screenshot was sent")


def test_an_image_over_1568_on_its_long_side_is_refused(fake: FakeAnthropic) -> None:
    large = [{"role": "user", "content": [png(1600, 900)]}]
    refused(post(fake, body(messages=large, tools=[tool(width=1600, height=900)])), 400, "1568")


def conversation(result_ids: list[str]) -> list[dict[str, Any]]:
    uses = [
        {
            "type": "tool_use",
            "id": "toolu_1",
            "name": "computer",
            "input": {"action": "screenshot"},
        },
        {
            "type": "tool_use",
            "id": "toolu_2",
            "name": "computer",
            "input": {"action": "screenshot"},
        },
    ]
    results = [
        {"type": "tool_result", "tool_use_id": use_id, "content": [png(1280, 800)]}
        for use_id in result_ids
    ]
    return [
        {"role": "user", "content": [{"type": "text", "text": "go"}, png(1280, 800)]},
        {"role": "assistant", "content": uses},
        {"role": "user", "content": results},
    ]


def test_every_tool_use_must_be_answered_by_its_id(fake: FakeAnthropic) -> None:
    assert post(fake, body(messages=conversation(["toolu_1", "toolu_2"]))).status_code == 200
    refused(post(fake, body(messages=conversation(["toolu_1"]))), 400, "toolu_2")
    unknown = conversation(["toolu_1", "toolu_2", "toolu_9"])
    refused(post(fake, body(messages=unknown)), 400, "unexpected tool_use_id 'toolu_9'")


def test_roles_must_alternate_from_the_user(fake: FakeAnthropic) -> None:
    messages = conversation(["toolu_1", "toolu_2"])
    refused(post(fake, body(messages=messages[:2])), 400, "last message")
    refused(post(fake, body(messages=messages[1:])), 400, "alternate")


def test_scripted_errors_and_the_script_file(fake: FakeAnthropic, tmp_path: Path) -> None:
    script = tmp_path / "turns.yaml"
    script.write_text(
        "- status: 529\n  headers: {retry-after: '0'}\n"
        "- text: The file is saved.\n"
        "- text: No.\n  stop_reason: refusal\n",
        encoding="utf-8",
    )
    with FakeAnthropic(load_script(script), key=KEY) as scripted:
        first = post(scripted, body())
        assert first.status_code == 529 and first.headers["retry-after"] == "0"
        assert first.json()["error"]["type"] == "overloaded_error"
        final = post(scripted, body()).json()
        assert final["stop_reason"] == "end_turn"
        assert final["content"] == [{"type": "text", "text": "The file is saved."}]
        assert post(scripted, body()).json()["stop_reason"] == "refusal"
        refused(post(scripted, body()), 400, "no turn left")


def custom(name: str = "launch_application", schema: Any = None) -> dict[str, Any]:
    given = schema if schema is not None else {"type": "object", "properties": {}}
    return {"name": name, "description": "start an app", "input_schema": given}


def test_custom_tools_need_unique_names_and_an_object_schema(fake: FakeAnthropic) -> None:
    assert post(fake, body(tools=[tool(), custom()])).status_code == 200
    refused(post(fake, body(tools=[tool(), custom("bad name!")])), 400, "name: must match")
    refused(post(fake, body(tools=[tool(), custom(), custom()])), 400, "unique")
    refused(post(fake, body(tools=[tool(), custom(schema={"type": "string"})])), 400, "object")
    refused(post(fake, body(tools=[tool(), custom("computer")])), 400, "unique")
