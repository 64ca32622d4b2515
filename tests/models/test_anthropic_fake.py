"""The fake Anthropic server refuses what the API refuses: a fake that took anything
would prove nothing about the client. Each refusal is checked over real HTTP."""

from __future__ import annotations

import base64
import io
import os
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


def test_an_image_over_about_1600_tokens_is_refused(fake: FakeAnthropic) -> None:
    square = [{"role": "user", "content": [png(1200, 1100)]}]
    tools = [tool(width=1200, height=1100)]
    refused(post(fake, body(messages=square, tools=tools)), 400, "1760 tokens, over 1600")
    fits = [{"role": "user", "content": [png(1092, 1092)]}]  # the documented 1:1 size
    assert post(fake, body(messages=fits, tools=[tool(width=1092, height=1092)])).status_code == 200


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


# ------------------------------------------------------------------ refusals the audit added


def image_of(kind: str, width: int = 1280, height: int = 800, media: str = "") -> dict[str, Any]:
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), "white").save(buffer, format=kind)
    data = base64.b64encode(buffer.getvalue()).decode()
    source = {"type": "base64", "media_type": media or f"image/{kind.lower()}", "data": data}
    return {"type": "image", "source": source}


def answered(*results: dict[str, Any], after: list[dict[str, Any]] | None = None) -> Any:
    """The conversation of conversation() with the last user message's blocks given."""
    messages = conversation([])
    messages[-1] = {"role": "user", "content": [*results, *(after or [])]}
    return messages


def result(use_id: str, **extra: Any) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": use_id, "content": [png(1280, 800)], **extra}


def test_tool_results_come_first_in_their_message(fake: FakeAnthropic) -> None:
    text = {"type": "text", "text": "here they are"}
    late = conversation([])
    late[-1] = {"role": "user", "content": [text, result("toolu_1"), result("toolu_2")]}
    refused(post(fake, body(messages=late)), 400, "tool_result blocks must come first")
    after = answered(result("toolu_1"), result("toolu_2"), after=[text])
    assert post(fake, body(messages=after)).status_code == 200


def test_a_tool_use_is_answered_once(fake: FakeAnthropic) -> None:
    twice = answered(result("toolu_1"), result("toolu_2"), result("toolu_2"))
    refused(post(fake, body(messages=twice)), 400, "Found multiple `tool_result` blocks")


def test_is_error_is_a_boolean_and_a_results_blocks_are_its_kinds(fake: FakeAnthropic) -> None:
    said = answered(result("toolu_1", is_error="yes"), result("toolu_2"))
    refused(post(fake, body(messages=said)), 400, "is_error: Input should be a valid boolean")
    use = {"type": "tool_use", "id": "toolu_3", "name": "computer", "input": {}}
    odd = answered(result("toolu_1", content=[use]), result("toolu_2"))
    refused(post(fake, body(messages=odd)), 400, "Input tag 'tool_use'")
    failed = {"content": [{"type": "text", "text": "no window"}], "is_error": True}
    fine = answered(result("toolu_1", **failed), result("toolu_2"))
    assert post(fake, body(messages=fine)).status_code == 200


@pytest.mark.parametrize(
    ("messages", "words"),
    [
        ([{"role": "user", "content": []}], "must have non-empty content"),
        ([{"role": "user", "content": ""}], "must have non-empty content"),
        (
            [{"role": "user", "content": [{"type": "text", "text": ""}, png(1280, 800)]}],
            "text content blocks must be non-empty",
        ),
    ],
)
def test_empty_content_is_refused(fake: FakeAnthropic, messages: Any, words: str) -> None:
    refused(post(fake, body(messages=messages)), 400, words)


def test_an_empty_text_in_a_tool_result_is_refused(fake: FakeAnthropic) -> None:
    empty = {"content": [{"type": "text", "text": ""}, png(1280, 800)]}
    messages = answered(result("toolu_1", **empty), result("toolu_2"))
    refused(post(fake, body(messages=messages)), 400, "text content blocks must be non-empty")


def test_the_system_is_text(fake: FakeAnthropic) -> None:
    refused(post(fake, {**body(), "system": [{"type": "image"}]}), 400, "list of text blocks")
    refused(post(fake, {**body(), "system": [{"type": "text", "text": ""}]}), 400, "non-empty")


def test_images_are_the_media_type_they_name(fake: FakeAnthropic) -> None:
    def first(block: dict[str, Any]) -> list[dict[str, Any]]:
        return [{"role": "user", "content": [{"type": "text", "text": "go"}, block]}]

    assert post(fake, body(messages=first(image_of("JPEG")))).status_code == 200
    assert post(fake, body(messages=first(image_of("WEBP")))).status_code == 200
    mislabelled = first(image_of("JPEG", media="image/png"))
    refused(post(fake, body(messages=mislabelled)), 400, "does not match the provided media type")
    refused(post(fake, body(messages=first(image_of("BMP")))), 400, "media_type: Input should")
    junk = png(1280, 800)
    junk["source"]["data"] = base64.b64encode(b"not a picture").decode()
    refused(post(fake, body(messages=first(junk))), 400, "Could not process image")


def test_the_apis_image_limits(fake: FakeAnthropic) -> None:
    noise = Image.frombytes("RGB", (1500, 1200), os.urandom(1500 * 1200 * 3))
    buffer = io.BytesIO()
    noise.save(buffer, format="PNG")
    big = png(1, 1)
    big["source"]["data"] = base64.b64encode(buffer.getvalue()).decode()
    heavy = [{"role": "user", "content": [big]}]
    refused(post(fake, body(messages=heavy, tools=[])), 400, "image exceeds 5 MB maximum")
    wide = [{"role": "user", "content": [png(8001, 2)]}]
    refused(post(fake, body(messages=wide, tools=[])), 400, "exceed max allowed size: 8000")
    many = [{"role": "user", "content": [png(8, 8)] * 101}]
    refused(post(fake, body(messages=many, tools=[])), 400, "Too many images: 101 > 100")


def test_at_most_four_cache_breakpoints(fake: FakeAnthropic) -> None:
    mark = {"type": "ephemeral"}
    system = [{"type": "text", "text": f"part {n}", "cache_control": mark} for n in range(4)]
    assert post(fake, {**body(), "system": system}).status_code == 200
    marked = body()
    marked["messages"][0]["content"][-1]["cache_control"] = mark
    refused(
        post(fake, {**marked, "system": system}),
        400,
        "A maximum of 4 blocks with cache_control may be provided. Found 5.",
    )
    odd = [{"type": "text", "text": "s", "cache_control": {"type": "persistent"}}]
    refused(post(fake, {**body(), "system": odd}), 400, "type must be 'ephemeral'")
    long = [{"type": "text", "text": "s", "cache_control": {"type": "ephemeral", "ttl": "1d"}}]
    refused(post(fake, {**body(), "system": long}), 400, "ttl: must be '5m' or '1h'")


def test_enable_zoom_is_the_newest_tools_only(fake: FakeAnthropic) -> None:
    zoom = body(tools=[{**tool(), "enable_zoom": True}])
    refused(post(fake, zoom), 400, "computer_20250124.enable_zoom: Extra inputs are not permitted")
    newest = body(
        model="claude-opus-4-5", tools=[{**tool("computer_20251124"), "enable_zoom": True}]
    )
    beta = {"anthropic-beta": "computer-use-2025-11-24"}
    assert post(fake, newest, **beta).status_code == 200


def scripted(turn: Turn, payload: dict[str, Any], **headers: str) -> httpx.Response:
    with FakeAnthropic([turn], key=KEY) as server:
        return post(server, payload, **headers)


ZOOM: dict[str, Any] = {"action": "zoom", "region": [0, 0, 100, 100]}
OPUS: dict[str, Any] = {
    "model": "claude-opus-4-5",
    "tools": [{**tool("computer_20251124"), "enable_zoom": True}],
}
NEWEST = {"anthropic-beta": "computer-use-2025-11-24"}


def test_a_script_answers_only_the_actions_of_the_version_declared() -> None:
    # zoom is computer_20251124's, and only with enable_zoom.
    refused(scripted(Turn(actions=(ZOOM,)), body()), 400, "'zoom' is not an action of")
    no_zoom: dict[str, Any] = {**OPUS, "tools": [tool("computer_20251124")]}
    refused(scripted(Turn(actions=(ZOOM,)), body(**no_zoom), **NEWEST), 400, "enable_zoom")
    assert scripted(Turn(actions=(ZOOM,)), body(**OPUS), **NEWEST).status_code == 200
    # computer_20241022 has no triple_click, and clicks where mouse_move put the pointer.
    old: dict[str, Any] = {
        "model": "claude-3-5-sonnet-20241022",
        "tools": [tool("computer_20241022")],
    }
    beta = {"anthropic-beta": "computer-use-2024-10-22"}
    triple = {"action": "triple_click", "coordinate": [5, 5]}
    refused(scripted(Turn(actions=(triple,)), body(**old), **beta), 400, "not an action of")
    click = {"action": "left_click", "coordinate": [5, 5]}
    refused(scripted(Turn(actions=(click,)), body(**old), **beta), 400, "no input 'coordinate'")
    assert scripted(Turn(actions=({"action": "left_click"},)), body(**old), **beta).is_success


def test_a_script_answers_each_action_with_the_inputs_it_takes() -> None:
    cases: list[tuple[dict[str, Any], str]] = [
        ({"action": "left_mouse_down", "coordinate": [5, 5]}, "no input 'coordinate'"),
        ({"action": "hold_key", "text": "shift"}, "hold_key without duration"),
        ({"action": "scroll", "coordinate": [5, 5]}, "scroll without scroll_amount"),
        ({"action": "mouse_move"}, "mouse_move without coordinate"),
    ]
    for action, words in cases:
        refused(scripted(Turn(actions=(action,)), body()), 400, words)
    taken: list[dict[str, Any]] = [
        {"action": "left_mouse_down"},
        {"action": "mouse_move", "coordinate": [5, 5]},
        {"action": "hold_key", "text": "shift", "duration": 1},
        {"action": "triple_click", "coordinate": [5, 5], "text": "shift"},
        {"action": "cursor_position"},
    ]
    for action in taken:
        assert scripted(Turn(actions=(action,)), body()).is_success, action


def test_enable_zoom_is_a_boolean_of_computer_20251124_only() -> None:
    zooming = {**tool(), "enable_zoom": True}
    refused(scripted(Turn(text="hi"), body(tools=[zooming])), 400, "enable_zoom")
    odd: dict[str, Any] = {**OPUS, "tools": [{**tool("computer_20251124"), "enable_zoom": "yes"}]}
    refused(scripted(Turn(text="hi"), body(**odd), **NEWEST), 400, "valid boolean")
