"""The fake server itself: its script file, and running it by hand."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from roundhouse.models.fake_openai import FakeOpenAI, Reply, load_script

SCRIPT = """\
replies:
  - text: '{"status": "FINISH"}'
    usage: {prompt_tokens: 120, completion_tokens: 30}
  - status: 429
    headers: {Retry-After: "2"}
    message: slow down
  - malformed: true
  - text: cut
    finish_reason: length
  - delay: 0.5
    text: late
"""


def post(url: str, body: dict[str, object]) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url, json.dumps(body).encode(), method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def test_a_yaml_script_reads_into_replies(tmp_path: Path) -> None:
    path = tmp_path / "answers.yaml"
    path.write_text(SCRIPT)
    assert load_script(path) == [
        Reply.completion('{"status": "FINISH"}', 120, 30),
        Reply.error(429, "slow down", {"Retry-After": "2"}),
        Reply.malformed(),
        Reply.truncated("cut"),
        Reply.slow(0.5, "late"),
    ]


def test_a_script_with_an_unknown_key_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "answers.yaml"
    path.write_text("- txt: hello\n")
    with pytest.raises(ValueError, match=r"unknown reply keys \['txt'\]"):
        load_script(path)


def test_the_server_speaks_the_chat_completion_shape() -> None:
    with FakeOpenAI([Reply.completion("hi", 7, 3)]) as server:
        status, _, body = post(
            f"{server.base_url}/chat/completions", {"model": "m", "messages": []}
        )
        again, _, refusal = post(f"http://127.0.0.1:{server.port}/chat/completions", {"model": "m"})
    answer = json.loads(body)
    assert status == 200
    assert answer["object"] == "chat.completion" and answer["model"] == "m"
    assert answer["choices"][0]["message"] == {"role": "assistant", "content": "hi"}
    assert answer["choices"][0]["finish_reason"] == "stop"
    assert answer["usage"] == {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}
    assert again == 400 and b"no reply left (request 2)" in refusal
    assert [request.path for request in server.requests] == [
        "/v1/chat/completions",
        "/chat/completions",
    ]


def test_it_runs_by_hand_from_a_script(tmp_path: Path) -> None:
    path = tmp_path / "answers.yaml"
    path.write_text(SCRIPT)
    command = [sys.executable, "-m", "roundhouse.models.fake_openai", "--port", "0"]
    process = subprocess.Popen([*command, "--script", str(path)], stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        banner = process.stdout.readline()
        assert "with 5 replies" in banner
        base_url = banner.split(" on ")[1].split()[0]
        status, headers, _ = post(f"{base_url}/chat/completions", {"model": "gpt-4o-mini"})
        assert status == 200
        status, headers, _ = post(f"{base_url}/chat/completions", {"model": "gpt-4o-mini"})
        assert (status, headers["Retry-After"]) == (429, "2")
    finally:
        process.terminate()
        process.wait(timeout=10)
        if process.stdout is not None:
            process.stdout.close()
