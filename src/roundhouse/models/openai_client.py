"""The OpenAI-compatible model: OpenAI, Azure OpenAI, vLLM, Ollama, LM Studio.

Through the official SDK, with the SDK's own retries off: we retry in the one loop every
client shares (models/retrying.py `retried`: 429, 5xx, connection errors, timeouts,
malformed bodies; Retry-After honoured) so that every HTTP attempt is seen and its usage
counted — UFO drops the cost of its retries, we don't. Each
attempt is a request the session's limits may refuse: a retry asks them first
(ModelRequest.before_retry), the first attempt was asked before the call (models/priced.py).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Self

import openai
from openai.types.chat import ChatCompletion
from pydantic import ValidationError

from roundhouse.config import OpenAISettings
from roundhouse.core.messages import Message
from roundhouse.core.usage import Usage
from roundhouse.endpoints import LOOPBACK_ENV, is_loopback_url
from roundhouse.models.base import Completion, ModelError, ModelRequest, OfferedTool
from roundhouse.models.retrying import (
    Attempts,
    Clock,
    Retry,
    Retrying,
    Sleep,
    retried,
    retry_after_seconds,
    send_again,
)
from roundhouse.models.vision import PreparedImage, prepare_image

log = logging.getLogger(__name__)

DEFAULT_BASE_URL = "https://api.openai.com/v1"
NO_KEY = "no-key"  # local servers (vLLM, Ollama, LM Studio) want a key, any key


# ---------------------------------------------------------------- pure helpers


def root_cause(error: BaseException) -> str:
    """The innermost cause ("connection refused"), not the SDK's "Connection error."."""
    for _ in range(20):  # a bound: exception chains can loop
        inner = error.__cause__ or error.__context__
        if inner is None:
            break
        error = inner
    if isinstance(error, ConnectionRefusedError):
        return "connection refused"
    return str(error) or type(error).__name__


def mentions_response_format(error: openai.APIStatusError) -> bool:
    text = f"{error.message} {json.dumps(error.body, default=str)}".lower()
    return "response_format" in text or "json_schema" in text


def tokens_of(completion: ChatCompletion) -> Usage:
    """The tokens one answer reports (a server that reports none: zero; the request is
    counted apart, when it is sent)."""
    if completion.usage is None:
        return Usage()
    return Usage(0, completion.usage.prompt_tokens, completion.usage.completion_tokens)


def chat_message(message: Message, images: list[PreparedImage]) -> dict[str, Any]:
    if not images:
        return {"role": message.role, "content": message.text}
    parts: list[dict[str, Any]] = [{"type": "text", "text": message.text}]
    parts += [{"type": "image_url", "image_url": {"url": image.data_url}} for image in images]
    return {"role": message.role, "content": parts}


def response_format(schema: Mapping[str, Any]) -> dict[str, Any]:
    # strict: False because pydantic schemas (optional fields, defaults) are not strict-mode
    # schemas; the answer is validated on our side anyway.
    return {
        "type": "json_schema",
        "json_schema": {"name": "answer", "schema": dict(schema), "strict": False},
    }


def tool_definitions(tools: tuple[OfferedTool, ...]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {
                "name": tool.name,
                "description": tool.description,
                "parameters": tool.parameters,
            },
        }
        for tool in tools
    ]


def mentions_tools(error: openai.APIStatusError) -> bool:
    text = f"{error.message} {json.dumps(error.body, default=str)}".lower()
    return "tools" in text or "tool_choice" in text or "function" in text


def answer_text(content: str | None, calls: list[tuple[str, str]]) -> str:
    """The answer as the one parser reads it. Without a tool call: the content. With calls:
    the content's JSON answer (or an empty one) with the calls as its action (name, and the
    arguments' JSON, which the parser checks like any): one call is one action; several
    are a list of actions in their order, as a JSON answer's list would be (the agent
    refuses more than it allows). The content's status goes to the last, CONTINUE where
    none was given; the ones before it go on (CONTINUE)."""
    if not calls:
        return content or ""
    try:
        answer = json.loads(content) if content and content.strip() else {}
    except json.JSONDecodeError:
        answer = {"observation": content}  # prose beside the call: kept as what it saw
    if not isinstance(answer, dict):
        answer = {}
    found = answer.get("action")
    action: dict[str, Any] = found if isinstance(found, dict) else {}
    actions = []
    for number, (name, arguments) in enumerate(calls, 1):
        try:
            parsed: Any = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError:
            parsed = arguments  # not JSON: the parser says so and the model is asked again
        last = number == len(calls)
        status = (action.get("status") or "CONTINUE") if last else "CONTINUE"
        actions.append(
            {**(action if last else {}), "function": name, "arguments": parsed, "status": status}
        )
    answer["action"] = actions[0] if len(actions) == 1 else actions
    return json.dumps(answer, ensure_ascii=False)


def endpoint(settings: OpenAISettings, env: Mapping[str, str]) -> str:
    """The base URL: the settings, else the standard environment, else OpenAI itself."""
    if settings.base_url:
        return settings.base_url.rstrip("/")
    if settings.api_version:  # Azure has no default endpoint: each resource has its own
        found = env.get("AZURE_OPENAI_ENDPOINT") or env.get("OPENAI_BASE_URL")
        if not found:
            raise ModelError(
                "Azure OpenAI (openai.api_version is set) needs openai.base_url "
                "(https://<resource>.openai.azure.com) or AZURE_OPENAI_ENDPOINT"
            )
        return found.rstrip("/")
    return (env.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")


# ---------------------------------------------------------------- the model


class OpenAIModel:
    """A LanguageModel over any OpenAI-compatible chat-completions endpoint."""

    def __init__(
        self,
        model: str,
        settings: OpenAISettings,
        *,
        http_client: Any = None,  # an httpx(2).AsyncClient for the SDK; None: the SDK's own
        env: Mapping[str, str] | None = None,
        sleep: Sleep = asyncio.sleep,
        clock: Clock | None = None,
    ) -> None:
        env = os.environ if env is None else env
        self.name = f"openai:{model}"
        self.model = model
        self.settings = settings
        self.base_url = endpoint(settings, env)
        if env.get(LOOPBACK_ENV) == "1" and not is_loopback_url(self.base_url):
            raise ModelError(
                f"{LOOPBACK_ENV}=1: refusing the non-loopback endpoint {self.base_url} "
                "(tests must use the fake server on 127.0.0.1)"
            )
        self._structured = settings.structured_output  # off for good once the endpoint refuses
        self._native_tools = settings.native_tools  # the same
        self._sleep = sleep
        self._clock = clock or (lambda: datetime.now(UTC))
        self._retrying = Retrying(
            settings.timeout,
            settings.max_retries,
            settings.retry_budget,
            "openai.retry_budget",
            "Check OPENAI_API_KEY or openai.api_key in roundhouse.yaml.",
        )
        self._client = self._make_client(env, http_client)

    def _make_client(self, env: Mapping[str, str], http_client: Any) -> openai.AsyncOpenAI:
        settings = self.settings
        key = settings.api_key or env.get("OPENAI_API_KEY")
        if settings.api_version:
            key = key or env.get("AZURE_OPENAI_API_KEY")
        if key is None:
            if self.base_url == DEFAULT_BASE_URL:
                raise ModelError(
                    "no API key for OpenAI: set OPENAI_API_KEY or openai.api_key in roundhouse.yaml"
                )
            key = NO_KEY
        common: dict[str, Any] = {
            "api_key": key,
            "timeout": settings.timeout,
            "max_retries": 0,  # ours, so that every attempt is seen and counted
            "http_client": http_client,
        }
        if settings.api_version:
            return openai.AsyncAzureOpenAI(
                azure_endpoint=self.base_url, api_version=settings.api_version, **common
            )
        return openai.AsyncOpenAI(base_url=self.base_url, **common)

    async def aclose(self) -> None:
        await self._client.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def complete(self, request: ModelRequest) -> Completion:
        messages, images = await asyncio.to_thread(self._messages, request.messages)

        async def attempt(attempts: Attempts) -> ChatCompletion:
            return await self._timed_attempt(messages, request, attempts)

        completion, attempts = await retried(
            attempt, name=self.name, retrying=self._retrying, request=request, sleep=self._sleep
        )
        structured = request.response_schema is not None and self._structured
        return self._completion(completion, attempts, images, structured)

    def _messages(
        self, messages: tuple[Message, ...]
    ) -> tuple[list[dict[str, Any]], list[PreparedImage]]:
        chat, sent = [], []
        for message in messages:
            images: list[PreparedImage] = []
            if self.settings.vision and message.images:
                if message.role == "user":
                    images = [
                        prepare_image(f, self.settings.image_max_side) for f in message.images
                    ]
                else:
                    log.debug(
                        "images on a %s message are not sent (user messages only)", message.role
                    )
            chat.append(chat_message(message, images))
            sent += images
        return chat, sent

    async def _timed_attempt(
        self, messages: list[dict[str, Any]], request: ModelRequest, attempts: Attempts
    ) -> ChatCompletion:
        """One attempt within openai.timeout as a whole: the SDK's timeout bounds each read,
        so a body that trickles in forever would never end without this."""
        timeout = self.settings.timeout
        try:
            async with asyncio.timeout(timeout):
                return await self._attempt(messages, request, attempts)
        except TimeoutError:
            raise Retry(f"{self.base_url}: no answer within {timeout:g} s") from None

    async def _attempt(
        self, messages: list[dict[str, Any]], request: ModelRequest, attempts: Attempts
    ) -> ChatCompletion:
        """One HTTP request: a completion, a Retry, or a ModelError. Counts itself."""
        extra: dict[str, Any] = {}
        schema = request.response_schema
        structured = schema is not None and self._structured
        if structured and schema is not None:
            extra["response_format"] = response_format(schema)
        native = self._native_tools and bool(request.tools)
        if native:
            extra["tools"] = tool_definitions(request.tools)
            extra["tool_choice"] = "auto"
        attempts.usage += Usage(requests=1)
        try:
            raw = await self._client.chat.completions.with_raw_response.create(
                model=self.model,
                messages=messages,  # type: ignore[arg-type]  # plain dicts of the same shape
                **extra,
            )
        except openai.APITimeoutError:
            raise Retry(f"{self.base_url}: no answer within {self.settings.timeout:g} s") from None
        except openai.APIConnectionError as error:
            raise Retry(f"cannot connect to {self.base_url}: {root_cause(error)}") from None
        except openai.APIStatusError as error:
            if structured and error.status_code in (400, 422) and mentions_response_format(error):
                log.warning(
                    "%s refuses response_format; asking in plain text from now on", self.name
                )
                self._structured = False
                send_again(request, attempts)
                return await self._attempt(messages, request, attempts)
            if native and error.status_code in (400, 422) and mentions_tools(error):
                log.warning("%s refuses native tools; asking in plain JSON from now on", self.name)
                self._native_tools = False
                send_again(request, attempts)
                return await self._attempt(messages, request, attempts)
            raise self._status_problem(error, attempts.usage) from None
        try:
            completion = raw.parse()
        except (json.JSONDecodeError, ValidationError, openai.APIResponseValidationError):
            body = raw.http_response.text[:200]
            raise Retry(f"{self.base_url}: the answer is not a chat completion: {body!r}") from None
        if not completion.choices:
            raise Retry(f"{self.base_url}: the answer has no choices")
        attempts.usage += tokens_of(completion)
        return completion

    def _status_problem(self, error: openai.APIStatusError, usage: Usage) -> Exception:
        status, detail = error.status_code, _detail(error)
        if status == 429 or status >= 500:
            wait = retry_after_seconds(error.response.headers, self._clock())
            return Retry(f"{self.base_url} answered {status}: {detail}", wait)
        if status == 401:
            return ModelError(
                f"{self.base_url} refused the API key (401): {detail}. "
                "Check OPENAI_API_KEY or openai.api_key in roundhouse.yaml.",
                usage,
            )
        if status == 404:
            return ModelError(
                f"{self.base_url} does not know the model '{self.model}' (404): {detail}", usage
            )
        return ModelError(f"{self.base_url} refused the request ({status}): {detail}", usage)

    def _completion(
        self,
        completion: ChatCompletion,
        attempts: Attempts,
        images: list[PreparedImage],
        structured: bool,
    ) -> Completion:
        choice = completion.choices[0]
        if choice.finish_reason == "length":
            # Returned all the same: the engine's parser rejects it and asks again.
            log.warning("%s: the answer was cut at the token limit", self.name)
        calls = [
            (call.function.name, call.function.arguments or "")
            for call in choice.message.tool_calls or []
            if call.type == "function"
        ]
        return Completion(
            text=answer_text(choice.message.content, calls),
            usage=attempts.usage,
            model=self.model,
            extra={
                "finish_reason": choice.finish_reason,
                "attempts": attempts.retries + 1,
                "structured_output": structured,
                "tool_calls": len(calls),
                "image_files": [str(image.file) for image in images],
                "image_scales": [image.scale for image in images],
            },
        )


def _detail(error: openai.APIStatusError) -> str:
    body = error.body
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        return str(body["message"])
    return error.message
