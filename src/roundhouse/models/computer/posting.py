"""One JSON POST to a vendor's API, retried as openai_client.py retries: every attempt is
counted (a request the session's limits may refuse: ModelRequest.before_retry is asked
before each retry), 429, 5xx and 529 (overloaded), timeouts, refused connections and
bodies that are not JSON are tried again after a backoff (Retry-After honoured) within a
retry budget, and then end as a ModelError naming what they met. Shared by the
computer-use clients (models/anthropic/, models/openai_computer/)."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from roundhouse.core.usage import Usage
from roundhouse.models.base import ModelError, ModelRequest
from roundhouse.models.retrying import Clock, Sleep, backoff_seconds, retry_after_seconds

log = logging.getLogger(__name__)

RETRIED = {429: "rate limited", 500: "server error", 502: "bad gateway", 503: "unavailable",
           504: "gateway timeout", 529: "overloaded"}  # fmt: skip


@dataclass(frozen=True)
class Retrying:
    """How one client retries, and what its messages tell the person to check."""

    timeout: float
    max_retries: int
    retry_budget: float
    budget_setting: str  # "anthropic.retry_budget"
    key_hint: str  # "Check ANTHROPIC_API_KEY or anthropic.api_key in roundhouse.yaml."


@dataclass
class Attempts:
    """What the attempts of one request cost, and what each retried one met."""

    usage: Usage = Usage()
    retries: int = 0
    spent: float = 0.0  # seconds of attempts and waits, against the retry budget
    statuses: list[str] = field(default_factory=list)  # "429", "529", "timeout", ...


class _Retry(Exception):
    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


@dataclass
class Poster:
    name: str  # the model's spec, for the log
    client: httpx.AsyncClient  # its base URL and headers (the key) set
    retrying: Retrying
    sleep: Sleep
    clock: Clock
    tokens: Callable[[Any], Usage]  # what an answer's usage comes to
    usage_key: str = "usage"  # where an answer holds it (Gemini: usageMetadata)

    @property
    def base_url(self) -> str:
        return str(self.client.base_url).rstrip("/")

    async def post(
        self, path: str, body: dict[str, Any], request: ModelRequest
    ) -> tuple[dict[str, Any], Attempts]:
        attempts = Attempts()
        budget = self.retrying.retry_budget
        while True:
            started = time.monotonic()
            try:
                return await self._attempt(path, body, attempts), attempts
            except _Retry as problem:
                attempts.spent += time.monotonic() - started
                tries = attempts.retries + 1
                if attempts.retries >= self.retrying.max_retries:
                    message = f"{problem} (gave up after {tries} attempts)"
                    raise ModelError(message, attempts.usage) from None
                delay = backoff_seconds(attempts.retries, problem.retry_after)
                if attempts.spent + delay > budget:
                    message = (
                        f"{problem} (gave up after {tries} attempts: waiting {delay:g} s more "
                        f"would pass the retry budget of {budget:g} s, "
                        f"{self.retrying.budget_setting})"
                    )
                    raise ModelError(message, attempts.usage) from None
                if request.before_retry is not None:
                    request.before_retry(attempts.usage)
                log.warning("%s: %s; retrying in %.1f s", self.name, problem, delay)
                await self.sleep(delay)
                attempts.spent += delay  # as asked for: a test's instant sleep spends it too
                attempts.retries += 1

    async def _attempt(self, path: str, body: dict[str, Any], attempts: Attempts) -> dict[str, Any]:
        attempts.usage += Usage(requests=1)
        where = self.base_url
        try:
            response = await self.client.post(path, json=body)
        except httpx.TimeoutException:
            attempts.statuses.append("timeout")
            raise _Retry(f"{where}: no answer within {self.retrying.timeout:g} s") from None
        except httpx.TransportError as error:
            attempts.statuses.append("connection")
            raise _Retry(f"cannot connect to {where}: {error or type(error).__name__}") from None
        status = response.status_code
        if status in RETRIED:
            attempts.statuses.append(str(status))
            wait = retry_after_seconds(response.headers, self.clock())
            said = f"{where} answered {status} ({RETRIED[status]}): {detail(response)}"
            raise _Retry(said, wait)
        if status == 401:
            said = f"{where} refused the API key (401): {detail(response)}. "
            raise ModelError(said + self.retrying.key_hint, attempts.usage)
        if status != 200:
            said = f"{where} refused the request ({status}): {detail(response)}"
            raise ModelError(said, attempts.usage)
        try:
            answered = response.json()
        except json.JSONDecodeError:
            attempts.statuses.append("malformed")
            raise _Retry(f"{where}: the answer is not JSON: {response.text[:200]!r}") from None
        if not isinstance(answered, dict):
            attempts.statuses.append("malformed")
            raise _Retry(f"{where}: the answer is not a JSON object")
        attempts.usage += self.tokens(answered.get(self.usage_key))
        return answered


def detail(response: httpx.Response) -> str:
    """The API's error ({"error": {"type", "message"}}, as Anthropic and OpenAI give it)."""
    try:
        error = response.json().get("error") or {}
        return f"{error.get('type') or 'error'}: {error.get('message', '')}".strip()
    except (json.JSONDecodeError, AttributeError):
        return response.text[:200] or response.reason_phrase
