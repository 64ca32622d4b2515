"""The fake Gemini API refuses what the API refuses: a fake that took anything would prove
nothing about the client. Each refusal is checked over real HTTP."""

from __future__ import annotations

import base64
import io
import logging
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from PIL import Image

from roundhouse.models.gemini.fake import Call, FakeGemini, Turn, load_script

KEY = "test-key"
CU = "gemini-2.5-computer-use-preview-10-2025"
G3 = "gemini-3-flash-preview"
G35 = "gemini-3.5-flash"
CLICK = Call("click_at", {"x": 500, "y": 300})


def png(width: int = 64, height: int = 40, kind: str = "PNG") -> str:
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), "white").save(buffer, format=kind)
    return base64.b64encode(buffer.getvalue()).decode()


def shot(mime: str = "image/png", data: str | None = None) -> dict[str, Any]:
    return {"inlineData": {"mimeType": mime, "data": png() if data is None else data}}


def computer(**given: Any) -> dict[str, Any]:
    return {"computerUse": {"environment": "ENVIRONMENT_DESKTOP", **given}}


def declare(*declarations: dict[str, Any]) -> dict[str, Any]:
    return {"functionDeclarations": list(declarations)}


LAUNCH = {
    "name": "launch_application",
    "description": "Start an application by name.",
    "parameters": {
        "type": "OBJECT",
        "properties": {"name": {"type": "STRING"}},
        "required": ["name"],
    },
}
ASK = {"role": "user", "parts": [{"text": "type 'native hello' into gedit"}, shot()]}


def body(*contents: dict[str, Any], tools: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {
        "contents": list(contents) or [ASK],
        "tools": [computer(), declare(LAUNCH)] if tools is None else tools,
    }


def answered(name: str, with_shot: bool = True, **response: Any) -> dict[str, Any]:
    answer: dict[str, Any] = {"name": name, "response": {"url": "", **response}}
    if with_shot:
        answer["parts"] = [shot()]
    return {"functionResponse": answer}


def model_turn(*calls: dict[str, Any]) -> dict[str, Any]:
    return {"role": "model", "parts": [{"functionCall": call} for call in calls]}


def user(*parts: dict[str, Any]) -> dict[str, Any]:
    return {"role": "user", "parts": list(parts)}


def post(
    fake: FakeGemini, payload: Any, model: str = CU, key: str | None = KEY, query: str = ""
) -> httpx.Response:
    headers = {"x-goog-api-key": key} if key else {}
    url = f"{fake.base_url}/v1beta/models/{model}:generateContent{query}"
    return httpx.post(url, json=payload, headers=headers, timeout=10)


def refused(response: httpx.Response, code: int, status: str, words: str) -> None:
    assert response.status_code == code, response.text
    error = response.json()["error"]
    assert (error["code"], error["status"]) == (code, status), error
    assert words in error["message"], error


@pytest.fixture
def fake() -> Iterator[FakeGemini]:
    with FakeGemini([Turn(calls=(CLICK,))] * 4, key=KEY) as server:
        yield server


def test_a_valid_request_gets_the_scripted_call_with_usage(fake: FakeGemini) -> None:
    response = post(fake, body())
    assert response.status_code == 200, response.text
    answer = response.json()
    [candidate] = answer["candidates"]
    assert candidate["content"] == {
        "role": "model",
        "parts": [{"functionCall": {"name": "click_at", "args": {"x": 500, "y": 300}}}],
    }
    assert candidate["finishReason"] == "STOP"
    assert answer["usageMetadata"] == {
        "promptTokenCount": 1000,
        "candidatesTokenCount": 50,
        "totalTokenCount": 1050,
    }
    assert fake.refusals == [] and fake.received[-1].headers["x-goog-api-key"] == KEY


def test_a_whole_exchange_of_call_and_screenshot_goes_through(fake: FakeGemini) -> None:
    first = post(fake, body()).json()["candidates"][0]["content"]
    second = post(fake, body(ASK, first, user(answered("click_at"))))
    assert second.status_code == 200, second.text


def test_no_key_is_permission_denied(fake: FakeGemini) -> None:
    refused(post(fake, body(), key=None), 403, "PERMISSION_DENIED", "unregistered callers")


def test_another_key_is_not_valid(fake: FakeGemini) -> None:
    refused(post(fake, body(), key="wrong"), 400, "INVALID_ARGUMENT", "API key not valid")


def test_the_key_may_come_as_a_query_parameter(fake: FakeGemini) -> None:
    assert post(fake, body(), key=None, query=f"?key={KEY}").status_code == 200


def test_an_unknown_model_is_not_found(fake: FakeGemini) -> None:
    refused(post(fake, body(), model="gemini-9-ultra"), 404, "NOT_FOUND", "models/gemini-9-ultra")


@pytest.mark.parametrize(
    ("tool", "words"),
    [
        ({"computerUse": {}}, "environment: required"),
        ({"computerUse": {"environment": "ENVIRONMENT_LINUX"}}, "ENVIRONMENT_LINUX"),
        (computer(excludedPredefinedFunctions=["click_at", "rm_rf"]), "rm_rf is not a predefined"),
        (computer(excludedPredefinedFunctions="search"), "a list of names"),
    ],
)
def test_a_malformed_computer_use_tool_is_refused(
    fake: FakeGemini, tool: dict[str, Any], words: str
) -> None:
    refused(post(fake, body(tools=[tool])), 400, "INVALID_ARGUMENT", words)


def test_the_excluded_functions_are_the_models_own_set(fake: FakeGemini) -> None:
    legacy = [computer(excludedPredefinedFunctions=["click_at"])]
    refused(post(fake, body(tools=legacy), model=G35), 400, "INVALID_ARGUMENT", "click_at is not")
    current = [computer(excluded_predefined_functions=["open_web_browser"])]
    refused(post(fake, body(tools=current), model=G35), 400, "INVALID_ARGUMENT", "open_web_browser")
    # snake_case field names are read as the API reads them
    fine = [computer(excluded_predefined_functions=["navigate", "search", "open_web_browser"])]
    assert post(fake, body(tools=fine)).status_code == 200


def test_two_computer_use_tools_are_refused(fake: FakeGemini) -> None:
    refused(post(fake, body(tools=[computer(), computer()])), 400, "INVALID_ARGUMENT", "one")


@pytest.mark.parametrize(
    ("declarations", "words"),
    [
        ([LAUNCH, LAUNCH], "Duplicate function declaration found: launch_application"),
        ([{**LAUNCH, "name": "1launch"}], "must start with a letter"),
        ([{**LAUNCH, "name": "launch app"}], "must start with a letter"),
        ([{**LAUNCH, "parameters": {"type": "STRING"}}], "must be an OBJECT"),
        ([{**LAUNCH, "parameters": {"type": "OBJECT", "required": ["name"]}}], "not a property"),
        (
            [{**LAUNCH, "parameters": {"type": "OBJECT", "properties": {"k": {"type": "ARRAY"}}}}],
            "an ARRAY needs items",
        ),
        (
            [{**LAUNCH, "parameters": {"type": "OBJECT", "properties": {"k": {"type": "TEXT"}}}}],
            "'TEXT' is not a schema type",
        ),
        (
            [{**LAUNCH, "parametersJsonSchema": {"type": "object"}}],
            "mutually exclusive",
        ),
        ([{**LAUNCH, "name": "click_at"}], "click_at is a predefined computer use function"),
    ],
)
def test_invalid_function_declarations_are_refused(
    fake: FakeGemini, declarations: list[dict[str, Any]], words: str
) -> None:
    refused(
        post(fake, body(tools=[computer(), declare(*declarations)])), 400, "INVALID_ARGUMENT", words
    )


def test_a_predefined_function_may_be_declared_once_excluded(fake: FakeGemini) -> None:
    tools = [
        computer(excludedPredefinedFunctions=["click_at"]),
        declare({**LAUNCH, "name": "click_at"}),
    ]
    assert post(fake, body(tools=tools)).status_code == 200


@pytest.mark.parametrize(
    ("contents", "words"),
    [
        ([], "contents is not specified"),
        ([model_turn({"name": "click_at", "args": {}})], "alternate between user and model"),
        ([ASK, ASK], "alternate between user and model"),
        ([{"role": "system", "parts": [{"text": "hi"}]}], "valid role"),
        ([{"role": "user", "parts": []}], "must not be empty"),
        (
            [user({"text": "a", "inlineData": {"mimeType": "image/png", "data": png()}})],
            "exactly one",
        ),
        ([user({"functionCall": {"name": "click_at", "args": {}}})], "the model's"),
    ],
)
def test_malformed_contents_are_refused(fake: FakeGemini, contents: list[Any], words: str) -> None:
    payload = {"contents": contents, "tools": [computer()]}
    refused(post(fake, payload), 400, "INVALID_ARGUMENT", words)


def test_every_call_must_be_answered_in_the_next_user_turn(fake: FakeGemini) -> None:
    call = {"name": "click_at", "args": {"x": 1, "y": 2}}
    two = model_turn(call, {"name": "type_text_at", "args": {"x": 1, "y": 2, "text": "hi"}})
    for contents, words in [
        ([ASK, model_turn(call), user({"text": "go on"}, shot())], "number of function response"),
        ([ASK, two, user(answered("click_at"))], "1 for 2"),
        ([ASK, model_turn(call)], "click_at of the last model turn is unanswered"),
        ([ASK, model_turn(call), user(answered("type_text_at"))], "names must match"),
        ([user(answered("click_at"))], "immediately after a function call turn"),
    ]:
        refused(post(fake, body(*contents)), 400, "INVALID_ARGUMENT", words)
    assert fake.remaining == 4


def test_a_call_with_an_id_is_answered_with_its_id(fake: FakeGemini) -> None:
    call = {"name": "click_at", "args": {"x": 1, "y": 2}, "id": "fc-1"}
    wrong = {
        **answered("click_at"),
        "functionResponse": {**answered("click_at")["functionResponse"], "id": "fc-2"},
    }
    right = {
        **answered("click_at"),
        "functionResponse": {**answered("click_at")["functionResponse"], "id": "fc-1"},
    }
    refused(post(fake, body(ASK, model_turn(call), user(wrong))), 400, "INVALID_ARGUMENT", "'fc-1'")
    assert post(fake, body(ASK, model_turn(call), user(right))).status_code == 200


def test_scripted_calls_may_carry_ids() -> None:
    with FakeGemini([Turn(calls=(CLICK, Call("wait_5_seconds")), ids=True)]) as server:
        parts = post(server, body(), key="test-key").json()["candidates"][0]["content"]["parts"]
    assert [part["functionCall"]["id"] for part in parts] == ["fc-fake-1-1", "fc-fake-1-2"]


def test_a_safety_decision_must_be_acknowledged(fake: FakeGemini) -> None:
    safety = {"decision": "require_confirmation", "explanation": "It deletes files."}
    call = {
        "name": "type_text_at",
        "args": {"x": 1, "y": 2, "text": "rm", "safety_decision": safety},
    }
    refused(
        post(fake, body(ASK, model_turn(call), user(answered("type_text_at")))),
        400,
        "INVALID_ARGUMENT",
        'safety_acknowledgement: "true"',
    )
    refused(
        post(
            fake,
            body(
                ASK, model_turn(call), user(answered("type_text_at", safety_acknowledgement=True))
            ),
        ),
        400,
        "INVALID_ARGUMENT",
        "required confirmation",
    )
    acknowledged = user(answered("type_text_at", safety_acknowledgement="true"))
    assert post(fake, body(ASK, model_turn(call), acknowledged)).status_code == 200


def test_a_computer_use_response_without_a_screenshot_is_refused(fake: FakeGemini) -> None:
    call = {"name": "click_at", "args": {"x": 1, "y": 2}}
    blind = user(answered("click_at", with_shot=False))
    refused(
        post(fake, body(ASK, model_turn(call), blind)), 400, "INVALID_ARGUMENT", "no screenshot"
    )
    beside = user(answered("click_at", with_shot=False), shot())
    assert post(fake, body(ASK, model_turn(call), beside)).status_code == 200
    custom = model_turn({"name": "launch_application", "args": {"name": "gedit"}})
    own = user(answered("launch_application", with_shot=False))
    assert post(fake, body(ASK, custom, own)).status_code == 200
    # An older turn's screenshot may be gone (the reference client keeps the last 3 turns'):
    # only the request's last turn must show the screen.
    later = model_turn({"name": "key_combination", "args": {"keys": "ctrl+s"}})
    now = user(answered("key_combination"))
    assert post(fake, body(ASK, model_turn(call), blind, later, now)).status_code == 200
    refused(
        post(
            fake,
            body(
                ASK,
                model_turn(call),
                beside,
                later,
                user(answered("key_combination", with_shot=False)),
            ),
        ),
        400,
        "INVALID_ARGUMENT",
        "no screenshot",
    )


@pytest.mark.parametrize(
    ("part", "words"),
    [
        (shot("image/jpeg"), "the data is PNG, but mime_type says image/jpeg"),
        (shot("image/gif"), "'image/gif' is not image/png"),
        (shot(data="!!not base64!!"), "not base64"),
        (shot(data=base64.b64encode(b"not a picture").decode()), "Unable to process input image"),
    ],
)
def test_an_inline_image_must_be_what_it_says(
    fake: FakeGemini, part: dict[str, Any], words: str
) -> None:
    refused(post(fake, body(user({"text": "look"}, part))), 400, "INVALID_ARGUMENT", words)
    call = model_turn({"name": "click_at", "args": {"x": 1, "y": 2}})
    inner = {"functionResponse": {"name": "click_at", "response": {}, "parts": [part]}}
    refused(post(fake, body(ASK, call, user(inner))), 400, "INVALID_ARGUMENT", words)


def test_gemini_3_wants_its_thought_signatures_back() -> None:
    turns = [Turn(calls=(CLICK, Call("wait_5_seconds")))] + [Turn(text="done")] * 2
    with FakeGemini(turns, key=KEY) as server:
        given = post(server, body(), model=G3).json()["candidates"][0]["content"]
        first, second = given["parts"]
        assert "thoughtSignature" in first and "thoughtSignature" not in second
        answers = user(answered("click_at"), answered("wait_5_seconds"))
        stripped = {
            "role": "model",
            "parts": [{"functionCall": p["functionCall"]} for p in given["parts"]],
        }
        refused(
            post(server, body(ASK, stripped, answers), model=G3),
            400,
            "INVALID_ARGUMENT",
            "missing a thought_signature in functionCall parts",
        )
        forged = {"role": "model", "parts": [{**first, "thoughtSignature": "Zm9yZ2Vk"}, second]}
        refused(
            post(server, body(ASK, forged, answers), model=G3), 400, "INVALID_ARGUMENT", "Corrupted"
        )
        assert post(server, body(ASK, given, answers), model=G3).status_code == 200
        # an earlier turn (before the user's last message) is not checked
        later = [ASK, stripped, answers, {"role": "model", "parts": [{"text": "ok"}]}, ASK]
        assert post(server, body(*later), model=G3).status_code == 200


def test_scripted_http_errors_are_in_googles_format() -> None:
    turns = [Turn(status=429, headers={"retry-after": "2"}), Turn(status=500)]
    with FakeGemini(turns, key=KEY) as server:
        limited = post(server, body())
        broken = post(server, body())
        spent = post(server, body())
    refused(limited, 429, "RESOURCE_EXHAUSTED", "scripted 429")
    assert limited.headers["retry-after"] == "2"
    refused(broken, 500, "INTERNAL", "scripted 500")
    refused(spent, 400, "INVALID_ARGUMENT", "no turn left (request 3)")


def test_a_script_calling_what_the_request_excluded_is_said_so() -> None:
    with FakeGemini([Turn(calls=(CLICK,))], key=KEY) as server:
        response = post(server, body(tools=[computer(excludedPredefinedFunctions=["click_at"])]))
    refused(response, 400, "INVALID_ARGUMENT", "the script calls ['click_at']")


def test_scripted_coordinates_are_on_the_0_999_grid() -> None:
    with pytest.raises(ValueError, match="x=1000 is not on the 0-999 grid"):
        Call("click_at", {"x": 1000, "y": 5})


def test_a_yaml_script_reads_into_turns(tmp_path: Path) -> None:
    path = tmp_path / "turns.yaml"
    path.write_text(
        "- calls: [{name: click_at, args: {x: 500, y: 300}}]\n"
        "  text: I click Save\n"
        "- status: 429\n"
        "- text: done\n"
        "  usage: {promptTokenCount: 1200}\n"
    )
    assert load_script(path) == [
        Turn(calls=(CLICK,), text="I click Save"),
        Turn(status=429),
        Turn(text="done", usage={"promptTokenCount": 1200}),
    ]
    path.write_text("- call: []\n")
    with pytest.raises(ValueError, match=r"unknown turn keys \['call'\]"):
        load_script(path)


def test_it_runs_by_hand_from_a_script(tmp_path: Path) -> None:
    path = tmp_path / "turns.yaml"
    path.write_text("- text: done\n")
    command = [sys.executable, "-m", "roundhouse.models.gemini.fake", "--port", "0"]
    command += ["--script", str(path), "--key", KEY]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        banner = process.stdout.readline()
        assert "with 1 turns" in banner
        base_url = banner.split(" on ")[1].split()[0]
        url = f"{base_url}/v1beta/models/{CU}:generateContent"
        response = httpx.post(url, json=body(), headers={"x-goog-api-key": KEY}, timeout=10)
        assert response.status_code == 200
        line = process.stdout.readline()
        assert f"model={CU} refused=None left=0" in line and KEY not in line
    finally:
        process.terminate()
        process.wait(timeout=10)
        if process.stdout is not None:
            process.stdout.close()


def test_no_key_reaches_the_log(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    with FakeGemini([Turn(text="done")], key=KEY) as server:
        assert post(server, body(), key=None, query=f"?key={KEY}").status_code == 200
        assert post(server, body(), key="a-wrong-key").status_code == 400
    ours = "\n".join(r.getMessage() for r in caplog.records if r.name.startswith("roundhouse"))
    assert "generateContent" in ours  # the requests were logged, without their keys
    assert KEY not in ours and "a-wrong-key" not in ours
