"""The OpenAI-compatible client against the fake server, over real HTTP on 127.0.0.1."""

from __future__ import annotations

import base64
import io
import json
import socket
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from roundhouse.config import OpenAISettings, Price
from roundhouse.core.limits import LimitReached
from roundhouse.core.messages import Message
from roundhouse.core.usage import Usage
from roundhouse.models.base import ModelError, ModelRequest
from roundhouse.models.fake_openai import FakeOpenAI, Reply
from roundhouse.models.openai_client import OpenAIModel, retry_after_seconds
from roundhouse.models.pricing import PriceTable
from roundhouse.models.vision import to_screen
from tests.models.fakes import Sleeps

MakeModel = Callable[..., OpenAIModel]
NOW = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)


@pytest.fixture
async def make_model(fake: FakeOpenAI, sleeps: Sleeps) -> AsyncIterator[MakeModel]:
    made: list[OpenAIModel] = []

    def make(name: str = "gpt-4o-mini", **settings: Any) -> OpenAIModel:
        options: dict[str, Any] = {"base_url": fake.base_url, "api_key": "test-key"}
        model = OpenAIModel(
            name, OpenAISettings(**{**options, **settings}), sleep=sleeps, clock=lambda: NOW
        )
        made.append(model)
        return model

    yield make
    for model in made:
        await model.aclose()


def ask(text: str = "hello", images: tuple[Path, ...] = (), **kwargs: Any) -> ModelRequest:
    messages = (Message("system", "be brief"), Message("user", text, images))
    return ModelRequest(agent="linux", messages=messages, **kwargs)


async def test_plain_completion_returns_text_usage_and_model(
    fake: FakeOpenAI, make_model: MakeModel
) -> None:
    fake.push(Reply.completion('{"status": "FINISH"}', prompt_tokens=120, completion_tokens=30))

    completion = await make_model().complete(ask())

    assert completion.text == '{"status": "FINISH"}'
    assert completion.usage == Usage(requests=1, input_tokens=120, output_tokens=30)
    assert completion.model == "gpt-4o-mini"
    assert completion.extra["finish_reason"] == "stop"
    sent = fake.requests[0]
    assert sent.path == "/v1/chat/completions"
    assert sent.headers["authorization"] == "Bearer test-key"
    assert sent.body["model"] == "gpt-4o-mini"
    assert sent.body["messages"] == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "hello"},
    ]


async def test_429_waits_the_retry_after_then_succeeds(
    fake: FakeOpenAI, make_model: MakeModel, sleeps: Sleeps
) -> None:
    fake.push(Reply.error(429, "slow down", {"Retry-After": "7"}), Reply.completion("ok", 50, 5))

    completion = await make_model().complete(ask())

    assert completion.text == "ok"
    assert sleeps.calls and sleeps.calls[0] >= 7
    assert completion.usage == Usage(requests=2, input_tokens=50, output_tokens=5)
    assert completion.extra["attempts"] == 2


def test_retry_after_reads_seconds_http_dates_and_milliseconds() -> None:
    assert retry_after_seconds({"retry-after": "3"}, NOW) == 3
    assert retry_after_seconds({"retry-after": "Thu, 01 Jan 2026 12:00:20 GMT"}, NOW) == 20
    assert retry_after_seconds({"retry-after": "Thu, 01 Jan 2026 11:00:00 GMT"}, NOW) == 0
    assert retry_after_seconds({"retry-after-ms": "1500"}, NOW) == 1.5
    assert retry_after_seconds({"retry-after": "soon"}, NOW) is None
    assert retry_after_seconds({}, NOW) is None


async def test_429_with_an_http_date_waits_until_that_date(
    fake: FakeOpenAI, make_model: MakeModel, sleeps: Sleeps
) -> None:
    later = "Thu, 01 Jan 2026 12:00:12 GMT"  # NOW + 12 s on the injected clock
    fake.push(Reply.error(429, headers={"Retry-After": later}), Reply.completion("ok"))

    await make_model().complete(ask())

    assert sleeps.calls == [12]


async def test_500_is_retried_with_backoff(
    fake: FakeOpenAI, make_model: MakeModel, sleeps: Sleeps
) -> None:
    fake.push(Reply.error(500), Reply.error(503), Reply.completion("ok", 10, 2))

    completion = await make_model().complete(ask())

    assert completion.text == "ok"
    assert sleeps.calls == [1.0, 2.0]
    assert completion.usage.requests == 3


async def test_server_errors_past_max_retries_give_a_model_error(
    fake: FakeOpenAI, make_model: MakeModel, sleeps: Sleeps
) -> None:
    fake.push(Reply.error(500, "boom"), Reply.error(500, "boom"))

    with pytest.raises(ModelError, match=r"answered 500: boom \(gave up after 2 attempts\)") as e:
        await make_model(max_retries=1).complete(ask())
    assert len(fake.requests) == 2
    assert e.value.usage == Usage(requests=2)  # failed attempts are still counted


async def test_malformed_json_body_is_retried(fake: FakeOpenAI, make_model: MakeModel) -> None:
    fake.push(Reply.malformed(), Reply.completion("ok", 10, 2))

    completion = await make_model().complete(ask())

    assert completion.text == "ok"
    assert completion.usage == Usage(requests=2, input_tokens=10, output_tokens=2)


async def test_malformed_json_body_every_time_names_the_body(
    fake: FakeOpenAI, make_model: MakeModel
) -> None:
    fake.push(Reply.malformed(), Reply.malformed())

    with pytest.raises(ModelError, match="not a chat completion: .*chatcmpl-broken"):
        await make_model(max_retries=1).complete(ask())


async def test_truncated_answer_still_returns_its_text_and_usage(
    fake: FakeOpenAI, make_model: MakeModel
) -> None:
    fake.push(Reply.truncated('{"status": "CONT', prompt_tokens=300, completion_tokens=4096))

    completion = await make_model().complete(ask())

    assert completion.text == '{"status": "CONT'
    assert completion.extra["finish_reason"] == "length"
    assert completion.usage == Usage(1, 300, 4096)


async def test_slow_answer_past_the_timeout_is_retried_then_fails(
    fake: FakeOpenAI, make_model: MakeModel, sleeps: Sleeps
) -> None:
    # The fake holds both answers until it stops; the client's timeout is real. What the
    # client did is asserted, never what the server saw by then: on a loaded machine the
    # second request may still be on its way when the timeout ends the attempt (the client
    # doing right), so a count taken at the server raced that timeout.
    fake.push(Reply.slow(30), Reply.slow(30))

    with pytest.raises(
        ModelError, match=r"no answer within 0.2 s \(gave up after 2 attempts\)"
    ) as e:
        await make_model(timeout=0.2, max_retries=1).complete(ask())
    assert e.value.usage == Usage(requests=2)  # each attempt counted as it was sent
    assert sleeps.calls == [1.0]


async def test_wrong_key_is_a_clear_error_and_not_retried(
    fake: FakeOpenAI, make_model: MakeModel
) -> None:
    fake.push(Reply.error(401, "Incorrect API key provided"))

    with pytest.raises(ModelError, match="refused the API key \\(401\\).*OPENAI_API_KEY") as e:
        await make_model().complete(ask())
    assert len(fake.requests) == 1
    assert e.value.usage == Usage(requests=1)


async def test_unknown_model_is_a_clear_error(fake: FakeOpenAI, make_model: MakeModel) -> None:
    fake.push(Reply.error(404, "The model `gpt-9` does not exist"))

    with pytest.raises(ModelError, match="does not know the model 'gpt-9' \\(404\\)"):
        await make_model("gpt-9").complete(ask())


async def test_refused_connection_names_the_url(sleeps: Sleeps) -> None:
    with socket.socket() as probe:  # a port nobody listens on once the probe is closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    model = OpenAIModel("gpt-4o-mini", OpenAISettings(base_url=url, max_retries=2), sleep=sleeps)

    with pytest.raises(
        ModelError, match=f"cannot connect to {url}: connection refused .gave up after 3 attempts"
    ):
        await model.complete(ask())
    assert sleeps.calls == [1.0, 2.0]
    await model.aclose()


def test_loopback_guard_refuses_a_remote_endpoint() -> None:
    for url in ("https://api.openai.com/v1", None, "http://10.0.0.5:8000/v1"):
        with pytest.raises(ModelError, match="RH_LOOPBACK_ONLY=1: refusing"):
            OpenAIModel("gpt-4o-mini", OpenAISettings(base_url=url, api_key="k"))


def test_loopback_guard_also_refuses_a_remote_url_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "https://example.com/v1")
    with pytest.raises(ModelError, match="refusing the non-loopback endpoint https://example"):
        OpenAIModel("gpt-4o-mini", OpenAISettings(api_key="k"))


def test_settings_win_over_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "https://example.com/v1")
    model = OpenAIModel("m", OpenAISettings(base_url="http://localhost:11434/v1/"))
    assert model.base_url == "http://localhost:11434/v1"


SCHEMA = {"type": "object", "properties": {"status": {"type": "string"}}}


async def test_structured_output_sends_the_json_schema(
    fake: FakeOpenAI, make_model: MakeModel
) -> None:
    fake.push(Reply.completion('{"status": "FINISH"}'))

    completion = await make_model().complete(ask(response_schema=SCHEMA))

    response_format = fake.requests[0].body["response_format"]
    assert response_format["type"] == "json_schema"
    assert response_format["json_schema"]["schema"] == SCHEMA
    assert completion.extra["structured_output"] is True


async def test_structured_output_refused_falls_back_to_text_and_remembers(
    fake: FakeOpenAI, make_model: MakeModel, sleeps: Sleeps
) -> None:
    refusal = "Invalid parameter: 'response_format' of type 'json_schema' is not supported."
    fake.push(Reply.error(400, refusal), Reply.completion("a", 10, 1), Reply.completion("b", 10, 1))
    model = make_model()

    first = await model.complete(ask(response_schema=SCHEMA))
    second = await model.complete(ask(response_schema=SCHEMA))

    assert [first.text, second.text] == ["a", "b"]
    assert "response_format" in fake.requests[0].body
    assert "response_format" not in fake.requests[1].body
    assert "response_format" not in fake.requests[2].body  # remembered for this model
    assert first.usage == Usage(requests=2, input_tokens=10, output_tokens=1)
    assert first.extra["structured_output"] is False
    assert sleeps.calls == []  # a fallback is not a retry


async def test_each_attempt_after_the_first_asks_the_limits_before_it_is_sent(
    fake: FakeOpenAI, make_model: MakeModel, sleeps: Sleeps
) -> None:
    """A fallback and a retry are requests too: `before_retry` is asked before each, with
    what the attempts spent, and its refusal ends the request before anything is sent."""
    asked: list[Usage] = []

    def before_retry(spent: Usage) -> None:
        asked.append(spent)
        if len(asked) == 2:
            raise LimitReached("max_requests reached: 2 requests of 2", spent)

    refusal = "Invalid parameter: 'response_format' of type 'json_schema' is not supported."
    fake.push(Reply.error(400, refusal), Reply.error(500), Reply.completion("never sent"))
    request = ask(response_schema=SCHEMA, before_retry=before_retry)

    with pytest.raises(LimitReached, match="max_requests reached") as refused:
        await make_model().complete(request)
    assert asked == [Usage(requests=1), Usage(requests=2)]
    assert refused.value.usage == Usage(requests=2)  # carried, so that the step counts them
    assert (len(fake.requests), fake.remaining) == (2, 1)
    assert sleeps.calls == []  # refused before waiting to retry


async def test_structured_output_off_in_settings_sends_no_schema(
    fake: FakeOpenAI, make_model: MakeModel
) -> None:
    fake.push(Reply.completion("x"))
    await make_model(structured_output=False).complete(ask(response_schema=SCHEMA))
    assert "response_format" not in fake.requests[0].body


async def test_other_400_is_not_taken_for_a_schema_refusal(
    fake: FakeOpenAI, make_model: MakeModel
) -> None:
    fake.push(Reply.error(400, "context_length_exceeded"))
    with pytest.raises(ModelError, match="refused the request \\(400\\): context_length"):
        await make_model().complete(ask(response_schema=SCHEMA))


@pytest.fixture
def screenshot(tmp_path: Path) -> Path:
    path = tmp_path / "action_step1.png"
    Image.new("RGB", (2560, 1600), "white").save(path)
    return path


async def test_vision_sends_the_screenshot_as_a_resized_image_url(
    fake: FakeOpenAI, make_model: MakeModel, screenshot: Path
) -> None:
    fake.push(Reply.completion("ok"))

    completion = await make_model(image_max_side=1280).complete(ask(images=(screenshot,)))

    [url] = fake.requests[0].image_urls()
    assert url.startswith("data:image/png;base64,")
    sent = Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1])))
    assert sent.size == (1280, 800)
    assert completion.extra["image_scales"] == [0.5]
    assert completion.extra["image_files"] == [str(screenshot)]
    text_part = fake.requests[0].body["messages"][1]["content"][0]
    assert text_part == {"type": "text", "text": "hello"}


async def test_small_images_are_sent_at_full_size(
    fake: FakeOpenAI, make_model: MakeModel, tmp_path: Path
) -> None:
    small = tmp_path / "small.png"
    Image.new("RGB", (640, 400)).save(small)
    fake.push(Reply.completion("ok"))

    completion = await make_model(image_max_side=1280).complete(ask(images=(small,)))

    assert completion.extra["image_scales"] == [1.0]


async def test_vision_off_sends_text_only(
    fake: FakeOpenAI, make_model: MakeModel, screenshot: Path
) -> None:
    fake.push(Reply.completion("ok"))

    completion = await make_model(vision=False).complete(ask(images=(screenshot,)))

    assert fake.requests[0].image_urls() == []
    assert fake.requests[0].body["messages"][1] == {"role": "user", "content": "hello"}
    assert completion.extra["image_scales"] == []


def test_model_coordinates_map_back_to_the_screen() -> None:
    assert to_screen(640, 400, 0.5) == (1280, 800)
    assert to_screen(100, 50, 1.0) == (100, 50)
    with pytest.raises(ValueError):
        to_screen(1, 1, 0)


async def test_usage_and_cost_add_up_across_attempts(
    fake: FakeOpenAI, make_model: MakeModel
) -> None:
    # A truncated answer is still a paid answer; the retry after a 500 is a request too.
    fake.push(
        Reply.error(500),
        Reply.completion("first", prompt_tokens=1000, completion_tokens=100),
        Reply.completion("second", prompt_tokens=2000, completion_tokens=200),
    )
    model = make_model()
    prices = PriceTable({"gpt-4o-mini": Price(input_per_mtok=1.0, output_per_mtok=10.0)})

    completions = [await model.complete(ask()), await model.complete(ask())]

    total = completions[0].usage + completions[1].usage
    assert total == Usage(requests=3, input_tokens=3000, output_tokens=300)
    priced = [prices.priced(c.model, c.usage) for c in completions]
    assert priced[0].cost == pytest.approx((1000 * 1 + 100 * 10) / 1e6)
    assert (priced[0] + priced[1]).cost == pytest.approx(prices.priced("gpt-4o-mini", total).cost)


def test_openai_without_a_key_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RH_LOOPBACK_ONLY")  # constructing does not connect
    with pytest.raises(ModelError, match="no API key for OpenAI: set OPENAI_API_KEY"):
        OpenAIModel("gpt-4o-mini", OpenAISettings())


async def test_azure_is_used_when_api_version_is_set(fake: FakeOpenAI, sleeps: Sleeps) -> None:
    fake.push(Reply.completion("azure ok"))
    settings = OpenAISettings(
        base_url=f"http://127.0.0.1:{fake.port}", api_key="k", api_version="2024-10-21"
    )
    model = OpenAIModel("my-deployment", settings, sleep=sleeps)

    # The fake serves /v1 paths only: what matters is which URL the Azure client calls.
    with pytest.raises(ModelError, match="404"):
        await model.complete(ask())
    await model.aclose()

    request = fake.requests[0]
    assert (
        request.path == "/openai/deployments/my-deployment/chat/completions?api-version=2024-10-21"
    )
    assert request.headers["api-key"] == "k"


def test_azure_takes_its_endpoint_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", "http://127.0.0.1:9/")
    model = OpenAIModel("dep", OpenAISettings(api_key="k", api_version="2024-10-21"))
    assert model.base_url == "http://127.0.0.1:9"


def test_azure_without_an_endpoint_is_a_clear_error() -> None:
    with pytest.raises(ModelError, match="Azure OpenAI .* needs openai.base_url"):
        OpenAIModel("dep", OpenAISettings(api_key="k", api_version="2024-10-21"))


async def test_a_known_model_through_the_fake_has_a_known_non_zero_cost(
    fake: FakeOpenAI, make_model: MakeModel
) -> None:
    # What the acceptance step shows: gpt-4o-mini priced by genai-prices, no override.
    fake.push(Reply.completion('{"status": "FINISH"}', prompt_tokens=1200, completion_tokens=80))

    completion = await make_model("gpt-4o-mini").complete(ask())

    priced = PriceTable().priced(completion.model, completion.usage)
    assert priced.cost is not None and priced.cost > 0


async def test_the_model_closes_as_an_async_context_manager(fake: FakeOpenAI) -> None:
    fake.push(Reply.completion("ok"))
    settings = OpenAISettings(base_url=fake.base_url, api_key="k")
    async with OpenAIModel("gpt-4o-mini", settings) as model:
        assert (await model.complete(ask())).text == "ok"


async def test_a_connection_reset_mid_body_is_retried(
    fake: FakeOpenAI, make_model: MakeModel, sleeps: Sleeps
) -> None:
    fake.push(Reply.reset_mid_body(), Reply.completion("ok", 10, 2))

    completion = await make_model().complete(ask())

    assert completion.text == "ok"
    assert completion.usage == Usage(requests=2, input_tokens=10, output_tokens=2)
    assert sleeps.calls == [1.0]


async def test_a_body_that_never_ends_is_cut_at_the_timeout(
    fake: FakeOpenAI, make_model: MakeModel, sleeps: Sleeps
) -> None:
    # Each read gets a byte well within the SDK's read timeout: only the whole-attempt
    # timeout can end this.
    fake.push(Reply.never_ending(), Reply.never_ending())

    with pytest.raises(ModelError, match=r"no answer within 1 s \(gave up after 2 attempts\)") as e:
        await make_model(timeout=1.0, max_retries=1).complete(ask())
    assert e.value.usage == Usage(requests=2)  # as sent: the server's count races the timeout


async def test_a_storm_of_429s_ends_when_the_retry_budget_is_spent(
    fake: FakeOpenAI, make_model: MakeModel, sleeps: Sleeps
) -> None:
    fake.push(*[Reply.error(429, "slow down", {"Retry-After": "2"}) for _ in range(20)])

    with pytest.raises(ModelError, match=r"retry budget of 11 s") as raised:
        await make_model(max_retries=50, retry_budget=11).complete(ask())
    # 2 s per wait: five waits (10 s) fit the budget, a sixth would not.
    assert sleeps.calls == [2.0] * 5
    assert len(fake.requests) == 6
    assert raised.value.usage == Usage(requests=6)  # every attempt counted
    assert "gave up after 6 attempts" in str(raised.value)


async def test_server_errors_then_broken_bodies_end_with_the_last_reason(
    fake: FakeOpenAI, make_model: MakeModel, sleeps: Sleeps
) -> None:
    fake.push(Reply.error(500), Reply.error(502), Reply.reset_mid_body(), Reply.malformed())

    with pytest.raises(ModelError, match="not a chat completion") as raised:
        await make_model(max_retries=3).complete(ask())
    assert raised.value.usage == Usage(requests=4)
    assert sleeps.calls == [1.0, 2.0, 4.0]


def test_a_tool_call_becomes_the_answers_action() -> None:
    from roundhouse.models.openai_client import answer_text

    assert answer_text('{"status": "x"}', []) == '{"status": "x"}'
    merged = json.loads(
        answer_text(
            '{"observation": "o", "action": {"status": "CONFIRM"}}',
            [("click_control", '{"id": 3}')],
        )
    )
    assert merged["observation"] == "o"
    assert merged["action"] == {
        "function": "click_control",
        "arguments": {"id": 3},
        "status": "CONFIRM",  # the content's status is kept
    }
    bare = json.loads(answer_text(None, [("wait", ""), ("press_keys", '{"keys": "a"}')]))
    assert bare["action"] == [  # calls made together: one answer's actions, in order
        {"function": "wait", "arguments": {}, "status": "CONTINUE"},
        {"function": "press_keys", "arguments": {"keys": "a"}, "status": "CONTINUE"},
    ]
    ending = answer_text('{"action": {"status": "FINISH"}}', [("wait", ""), ("wait", "")])
    assert [a["status"] for a in json.loads(ending)["action"]] == ["CONTINUE", "FINISH"]
    prose = json.loads(answer_text("I will press it.", [("wait", "{oops")]))
    assert prose["observation"] == "I will press it." and prose["action"]["arguments"] == "{oops"
