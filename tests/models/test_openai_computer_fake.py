"""The fake Responses API refuses what the API refuses, beyond what its first author checked
(tests/models/test_openai_computer.py): each refusal added in the audit against
openai-python's types and the API's published errors, over real HTTP."""

from __future__ import annotations

import base64
import io
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from PIL import Image

from roundhouse.models.openai_computer.fake import FakeOpenAIComputer, Turn

KEY = "sk-test-openai-key"
CLICK = {"type": "click", "x": 10, "y": 20, "button": "left"}


def data_url(width: int = 1024, height: int = 768, kind: str = "PNG", media: str = "") -> str:
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), "white").save(buffer, format=kind)
    media = media or f"image/{kind.lower()}"
    return f"data:{media};base64," + base64.b64encode(buffer.getvalue()).decode()


PREVIEW = {"type": "computer_use_preview", "display_width": 1024, "display_height": 768,
           "environment": "linux"}  # fmt: skip
ASK = {
    "role": "user",
    "content": [
        {"type": "input_text", "text": "save it"},
        {"type": "input_image", "image_url": data_url()},
    ],
}


def body(*items: dict[str, Any], **overrides: Any) -> dict[str, Any]:
    return {
        "model": "computer-use-preview",
        "tools": [PREVIEW],
        "input": list(items) or [ASK],
        "truncation": "auto",
        **overrides,
    }


def output(call_id: str, url: str | None = None, **extra: Any) -> dict[str, Any]:
    shot = {"type": "computer_screenshot", "image_url": url or data_url()}
    return {"type": "computer_call_output", "call_id": call_id, "output": shot, **extra}


@pytest.fixture
def fake() -> Iterator[FakeOpenAIComputer]:
    with FakeOpenAIComputer([Turn(action=CLICK)] * 4, key=KEY) as server:
        yield server


def post(fake: FakeOpenAIComputer, payload: dict[str, Any]) -> httpx.Response:
    headers = {"authorization": f"Bearer {KEY}"}
    return httpx.post(f"{fake.base_url}/responses", json=payload, headers=headers, timeout=10)


def refused(response: httpx.Response, words: str, param: str | None = None) -> None:
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert words in error["message"], error
    assert error["type"] == "invalid_request_error"
    if param is not None:
        assert error["param"] == param, error


def test_a_call_goes_out_after_its_reasoning_item(fake: FakeOpenAIComputer) -> None:
    answer = post(fake, body()).json()
    assert [item["type"] for item in answer["output"]] == ["reasoning", "computer_call"]
    assert answer["output"][1]["action"] == CLICK


def test_the_preview_tool_is_refused_with_gpt_5_4(fake: FakeOpenAIComputer) -> None:
    refused(
        post(fake, body(model="gpt-5.4")),
        "Tool 'computer_use_preview' is not supported with gpt-5.4.",
        "tools",
    )


def test_the_ga_tool_is_gpt_5_4_and_laters_and_its_call_batches_actions() -> None:
    actions = ({"type": "click", "x": 1, "y": 2, "button": "left"}, {"type": "type", "text": "hi"})
    with FakeOpenAIComputer([Turn(actions=actions), Turn(text="done")], key=KEY) as fake:
        refused(
            post(fake, body(tools=[{"type": "computer"}])),
            "Tool 'computer' is not supported with computer-use-preview.",
        )
        ga = {"model": "gpt-5.4", "tools": [{"type": "computer"}], "input": [ASK]}
        answer = post(fake, ga).json()
        [call] = [item for item in answer["output"] if item["type"] == "computer_call"]
        assert call["actions"] == list(actions) and "action" not in call
        # no display is declared: a screenshot of any size answers it
        then = {**ga, "previous_response_id": answer["id"]}
        then["input"] = [output(call["call_id"], data_url(1440, 900))]
        assert post(fake, then).status_code == 200


def test_a_call_output_is_a_computer_screenshot_not_an_input_image(
    fake: FakeOpenAIComputer,
) -> None:
    first = post(fake, body()).json()
    wrong = output("call_fake_1")
    wrong["output"] = {"type": "input_image", "image_url": data_url()}
    refused(
        post(fake, body(wrong, previous_response_id=first["id"])),
        "Invalid value: 'input_image'. Supported values are: 'computer_screenshot'.",
        "input[0].output.type",
    )


def test_a_call_output_needs_its_call_id_and_acknowledgements_their_ids(
    fake: FakeOpenAIComputer,
) -> None:
    first = post(fake, body()).json()
    nameless = {k: v for k, v in output("call_fake_1").items() if k != "call_id"}
    refused(post(fake, body(nameless, previous_response_id=first["id"])), "'input[0].call_id'")
    unnamed = output("call_fake_1", acknowledged_safety_checks=[{"code": "x"}])
    refused(post(fake, body(unnamed, previous_response_id=first["id"])), "checks[].id")


def test_a_response_not_stored_cannot_be_chained_to(fake: FakeOpenAIComputer) -> None:
    first = post(fake, body(store=False)).json()
    refused(
        post(fake, body(output("call_fake_1"), previous_response_id=first["id"])),
        f"Previous response with id '{first['id']}' not found.",
        "previous_response_id",
    )


def test_items_the_chain_holds_are_not_sent_again(fake: FakeOpenAIComputer) -> None:
    first = post(fake, body()).json()
    reasoning, call = first["output"]
    again = body(reasoning, call, output("call_fake_1"), previous_response_id=first["id"])
    refused(post(fake, again), "Duplicate item found with id rs_fake_1.")
    second = post(fake, body(output("call_fake_1"), previous_response_id=first["id"])).json()
    # two links back is still the chain
    older = body(call, output("call_fake_2"), previous_response_id=second["id"])
    refused(post(fake, older), "Duplicate item found with id cu_fake_1.")


def test_items_sent_again_by_hand_keep_their_reasoning(fake: FakeOpenAIComputer) -> None:
    first = post(fake, body(store=False)).json()
    reasoning, call = first["output"]
    refused(
        post(fake, body(ASK, call, output("call_fake_1"))),
        "Item 'cu_fake_1' of type 'computer_call' was provided without its required "
        "'reasoning' item: 'rs_fake_1'.",
    )
    refused(
        post(fake, body(ASK, reasoning, output("call_fake_1"))),
        "Item 'rs_fake_1' of type 'reasoning' was provided without its required following item.",
    )
    assert post(fake, body(ASK, reasoning, call, output("call_fake_1"))).status_code == 200


@pytest.mark.parametrize(
    ("item", "words"),
    [
        ({"role": "user", "content": [{"type": "text", "text": "hi"}]}, "Invalid value: 'text'"),
        (
            {"role": "assistant", "content": [{"type": "input_text", "text": "hi"}]},
            "Invalid value: 'input_text'",
        ),
        ({"role": "tool", "content": "hi"}, "Invalid value: 'tool'"),
        ({"role": "user", "content": {"text": "hi"}}, "a string or a list of parts"),
    ],
)
def test_message_parts_are_the_roles_kinds(
    fake: FakeOpenAIComputer, item: dict[str, Any], words: str
) -> None:
    refused(post(fake, body(ASK, item)), words)


@pytest.mark.parametrize(
    ("url", "words"),
    [
        (data_url(kind="JPEG", media="image/png"), "the image is JPEG, but its data URL says"),
        (data_url(kind="GIF"), "image/gif is not PNG, JPEG or WebP"),
        ("data:image/png;base64,@@@", "not base64"),
        ("data:image/png;base64," + base64.b64encode(b"nothing").decode(), "not a valid image"),
        ("https://example.com/shot.png", "data URLs only"),
    ],
)
def test_a_screenshot_is_what_its_data_url_says(
    fake: FakeOpenAIComputer, url: str, words: str
) -> None:
    first = post(fake, body()).json()
    refused(post(fake, body(output("call_fake_1", url), previous_response_id=first["id"])), words)


def test_a_jpeg_screenshot_of_the_declared_size_is_taken(fake: FakeOpenAIComputer) -> None:
    first = post(fake, body()).json()
    jpeg = output("call_fake_1", data_url(kind="JPEG"))
    assert post(fake, body(jpeg, previous_response_id=first["id"])).status_code == 200


def test_the_record_reads_as_the_tuples_it_was(fake: FakeOpenAIComputer) -> None:
    post(fake, body())
    headers, sent, why = fake.received[-1]
    assert sent == fake.received[-1][1] == fake.received[-1].body
    assert why is None and headers["authorization"] == f"Bearer {KEY}"
