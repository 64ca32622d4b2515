"""The fake vLLM server refuses what vLLM refuses, and an image the model's processor would
resize: a fake that took anything would prove nothing about the clients. Each refusal is
checked over real HTTP."""

from __future__ import annotations

import base64
import io
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from PIL import Image

from roundhouse.models.local.fake import FakeLocal, Turn, Vision, load_script

KEY = "test-key"
UITARS = "ui-tars-1.5-7b"
QWEN3 = "qwen3-vl-8b-instruct"
SAY = "Thought: I type it.\nAction: type(content='native hello')"


def data_url(width: int, height: int, kind: str = "PNG", media: str | None = None) -> str:
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), "white").save(buffer, format=kind)
    media = media or f"image/{kind.lower()}"
    return f"data:{media};base64,{base64.b64encode(buffer.getvalue()).decode()}"


def image(url: str) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": url}}


def chat(*urls: str, model: str | None = UITARS, **extra: Any) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": "type 'native hello'"}]
    content += [image(url) for url in urls]
    body: dict[str, Any] = {"messages": [{"role": "user", "content": content}], **extra}
    if model is not None:
        body["model"] = model
    return body


# 1288x728: UI-TARS-1.5's smart_resize of a 1280x720 screen (multiples of 28).
RESIZED = data_url(1288, 728)


@pytest.fixture
def fake() -> Iterator[FakeLocal]:
    with FakeLocal([Turn(text=SAY)] * 3, key=KEY) as server:
        yield server


def post(fake: FakeLocal, payload: Any, key: str | None = KEY) -> httpx.Response:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return httpx.post(
        f"{fake.base_url}/chat/completions", json=payload, headers=headers, timeout=10
    )


def refused(response: httpx.Response, status: int, words: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    error: dict[str, Any] = response.json()["error"]
    assert words in error["message"], error
    assert error["code"] == status and error["type"]
    return error


def test_a_valid_request_gets_the_scripted_text_with_usage(fake: FakeLocal) -> None:
    response = post(fake, chat(RESIZED, max_tokens=500))
    assert response.status_code == 200, response.text
    answer = response.json()
    assert answer["object"] == "chat.completion" and answer["model"] == UITARS
    assert answer["choices"][0]["message"]["content"] == SAY
    assert answer["choices"][0]["finish_reason"] == "stop"
    assert answer["usage"] == {"prompt_tokens": 1000, "completion_tokens": 50, "total_tokens": 1050}
    assert fake.refusals == [] and fake.remaining == 2
    assert fake.image_sizes() == [(1288, 728)]
    assert fake.received[-1].body["max_tokens"] == 500


def test_the_model_list_names_the_served_models(fake: FakeLocal) -> None:
    response = httpx.get(f"{fake.base_url}/models", headers={"Authorization": f"Bearer {KEY}"})
    assert response.status_code == 200
    assert [card["id"] for card in response.json()["data"]] == [
        "ui-tars-1.5-7b",
        "qwen2.5-vl-7b-instruct",
        "qwen3-vl-8b-instruct",
        "opencua-7b",
    ]


@pytest.mark.parametrize("key", [None, "wrong"])
def test_a_missing_or_wrong_key_is_unauthorized(fake: FakeLocal, key: str | None) -> None:
    response = post(fake, chat(RESIZED), key=key)
    assert (response.status_code, response.json()) == (401, {"error": "Unauthorized"})
    listing = httpx.get(f"{fake.base_url}/models")
    assert listing.status_code == 401
    assert fake.remaining == 3  # nothing was answered from the script


def test_the_bearer_scheme_is_read_in_any_case(fake: FakeLocal) -> None:
    response = httpx.post(
        f"{fake.base_url}/chat/completions",
        json=chat(RESIZED),
        headers={"Authorization": f"bearer {KEY}"},
    )
    assert response.status_code == 200


def test_without_a_configured_key_any_key_goes() -> None:
    with FakeLocal([Turn(text=SAY)]) as server:
        assert post(server, chat(RESIZED), key=None).status_code == 200


def test_an_unknown_model_is_not_found_in_vllms_words(fake: FakeLocal) -> None:
    error = refused(post(fake, chat(RESIZED, model="gpt-4o")), 404, "does not exist")
    assert error == {
        "message": "The model `gpt-4o` does not exist.",
        "type": "NotFoundError",
        "param": "model",
        "code": 404,
    }


def test_no_model_named_means_the_first_served_one(fake: FakeLocal) -> None:
    response = post(fake, chat(RESIZED, model=None))
    assert response.status_code == 200 and response.json()["model"] == UITARS


@pytest.mark.parametrize(
    ("messages", "words"),
    [
        (None, "non-empty list"),
        ([], "non-empty list"),
        (["hello"], "must be an object"),
        ([{"role": "robot", "content": "hi"}], "'robot' is not one of"),
        ([{"role": "user", "content": {"text": "hi"}}], "a string or a list of parts"),
        ([{"role": "user", "content": [{"type": "text"}]}], "a string is required"),
        ([{"role": "user", "content": [{"type": "image_url", "image_url": "x"}]}], "url"),
        ([{"role": "user", "content": [{"type": "input_image", "url": "x"}]}], "'input_image'"),
    ],
)
def test_malformed_messages_are_bad_requests(fake: FakeLocal, messages: Any, words: str) -> None:
    error = refused(post(fake, {"model": UITARS, "messages": messages}), 400, words)
    assert error["type"] == "Bad Request"  # the schema's refusal, before the model is looked up


def test_a_body_that_is_not_json_is_a_bad_request(fake: FakeLocal) -> None:
    response = httpx.post(
        f"{fake.base_url}/chat/completions",
        content=b"{not json",
        headers={"Authorization": f"Bearer {KEY}"},
    )
    refused(response, 400, "not a JSON object")


def test_max_tokens_under_one_is_refused(fake: FakeLocal) -> None:
    refused(post(fake, chat(RESIZED, max_tokens=0)), 400, "max_tokens must be at least 1")


def test_streaming_is_refused_as_not_faked(fake: FakeLocal) -> None:
    refused(post(fake, chat(RESIZED, stream=True)), 400, "does not stream")


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("https://example.com/shot.png", "fetches nothing"),
        ("data:image/png,abc", "not a data URL"),
        (data_url(1288, 728, "GIF", "image/gif"), "not image/png or image/jpeg"),
        ("data:image/png;base64,!!!not base64!!!", "not base64"),
        ("data:image/png;base64," + base64.b64encode(b"no picture at all").decode(), "identify"),
        (data_url(1288, 728, "JPEG", "image/png"), "the data is JPEG"),
    ],
)
def test_an_image_that_is_not_a_png_or_jpeg_data_url_is_refused(
    fake: FakeLocal, url: str, words: str
) -> None:
    assert refused(post(fake, chat(url)), 400, words)["type"] == "BadRequestError"
    assert fake.remaining == 3


def test_a_jpeg_data_url_is_taken(fake: FakeLocal) -> None:
    assert post(fake, chat(data_url(1288, 728, "JPEG"))).status_code == 200


def test_more_images_than_the_server_allows_are_refused() -> None:
    with FakeLocal([Turn(text=SAY)] * 2, max_images=2) as server:
        assert post(server, chat(RESIZED, RESIZED), key=None).status_code == 200
        response = post(server, chat(RESIZED, RESIZED, RESIZED), key=None)
    refused(response, 400, "At most 2 image(s) may be provided in one prompt.")


def test_an_unresized_screenshot_is_refused_naming_the_size_to_send(fake: FakeLocal) -> None:
    error = refused(post(fake, chat(data_url(1280, 720))), 400, "image 1 is 1280x720")
    assert "not multiples of 28" in error["message"]
    assert "smart_resize gives 1288x728" in error["message"]


def test_every_image_of_the_conversation_is_checked(fake: FakeLocal) -> None:
    refused(post(fake, chat(RESIZED, data_url(1920, 1080))), 400, "image 2 is 1920x1080")


def test_qwen3_vl_wants_multiples_of_32(fake: FakeLocal) -> None:
    error = refused(post(fake, chat(RESIZED, model=QWEN3)), 400, "Qwen3-VL")
    assert "not multiples of 32" in error["message"]
    assert "1280x736" in error["message"]
    assert post(fake, chat(data_url(1280, 736), model=QWEN3)).status_code == 200


def test_pixels_outside_the_configured_bounds_are_refused() -> None:
    small = Vision("tight", 28, 100 * 28 * 28, 200 * 28 * 28)  # as --mm-processor-kwargs
    with FakeLocal([Turn(text=SAY)], models={"m": small}) as server:
        too_many = post(server, chat(data_url(28 * 20, 28 * 15), model="m"), key=None)
        too_few = post(server, chat(data_url(28 * 5, 28 * 5), model="m"), key=None)
        right = post(server, chat(data_url(28 * 15, 28 * 10), model="m"), key=None)
    refused(too_many, 400, "outside [78400, 156800]")
    refused(too_few, 400, "outside [78400, 156800]")
    assert right.status_code == 200


def test_an_aspect_over_200_is_refused(fake: FakeLocal) -> None:
    refused(post(fake, chat(data_url(28 * 201, 28))), 400, "aspect ratio is over 200")


def test_scripted_http_errors_keep_their_headers() -> None:
    turns = [Turn(status=429, headers={"retry-after": "3"}), Turn(status=500), Turn(text=SAY)]
    with FakeLocal(turns) as server:
        limited = post(server, chat(RESIZED), key=None)
        broken = post(server, chat(RESIZED), key=None)
        fine = post(server, chat(RESIZED), key=None)
        spent = post(server, chat(RESIZED), key=None)
    assert (limited.status_code, limited.headers["retry-after"]) == (429, "3")
    assert limited.json()["error"]["code"] == 429
    assert broken.status_code == 500 and fine.status_code == 200
    refused(spent, 400, "no turn left (request 4)")


def test_unknown_paths_and_methods_are_refused(fake: FakeLocal) -> None:
    auth = {"Authorization": f"Bearer {KEY}"}
    assert httpx.post(f"{fake.base_url}/completions", json={}, headers=auth).status_code == 404
    assert httpx.get(f"{fake.base_url}/chat/completions", headers=auth).status_code == 405


def test_a_yaml_script_reads_into_turns(tmp_path: Path) -> None:
    path = tmp_path / "turns.yaml"
    path.write_text(
        "turns:\n"
        "  - text: \"Thought: t\\nAction: finished(content='done')\"\n"
        "    usage: {prompt_tokens: 1500, completion_tokens: 40}\n"
        "  - status: 429\n"
        "    headers: {retry-after: '1'}\n"
    )
    assert load_script(path) == [
        Turn(
            text="Thought: t\nAction: finished(content='done')",
            usage={"prompt_tokens": 1500, "completion_tokens": 40},
        ),
        Turn(status=429, headers={"retry-after": "1"}),
    ]
    path.write_text("- txt: hello\n")
    with pytest.raises(ValueError, match=r"unknown turn keys \['txt'\]"):
        load_script(path)


def test_it_runs_by_hand_from_a_script(tmp_path: Path) -> None:
    path = tmp_path / "turns.yaml"
    path.write_text(f"- text: {SAY!r}\n")
    command = [sys.executable, "-m", "roundhouse.models.local.fake", "--port", "0"]
    command += ["--script", str(path), "--model", "qwen=qwen2.5-vl", "--key", KEY]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        banner = process.stdout.readline()
        assert "with 1 turns" in banner and KEY not in banner
        base_url = banner.split(" on ")[1].split()[0]
        response = httpx.post(
            f"{base_url}/chat/completions",
            json=chat(RESIZED, model="qwen"),
            headers={"Authorization": f"Bearer {KEY}"},
            timeout=10,
        )
        assert response.status_code == 200
        assert response.json()["choices"][0]["message"]["content"] == SAY
        line = process.stdout.readline()
        assert "model=qwen refused=None left=0" in line and KEY not in line
    finally:
        process.terminate()
        process.wait(timeout=10)
        if process.stdout is not None:
            process.stdout.close()
