"""One JSON POST to a vendor's API, through the one retry loop (models/retrying.py
`retried`, which openai_client.py uses too): every attempt is counted, 429, 5xx and 529
(overloaded), timeouts, refused connections and bodies that are not JSON are tried again
after a backoff (Retry-After honoured) within a retry budget, and then end as a
ModelError naming what they met. Shared by the computer-use clients (models/anthropic/,
openai_computer/, gemini/, local/)."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx

from roundhouse.core.usage import Usage
from roundhouse.models.base import ModelError, ModelRequest
from roundhouse.models.retrying import (
    Attempts,
    Clock,
    Retry,
    Retrying,
    Sleep,
    retried,
    retry_after_seconds,
)

__all__ = ["Attempts", "Poster", "Retrying"]  # Retrying and Attempts: models/retrying.py

log = logging.getLogger(__name__)

RETRIED = {429: "rate limited", 500: "server error", 502: "bad gateway", 503: "unavailable",
           504: "gateway timeout", 529: "overloaded"}  # fmt: skip


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
        async def attempt(attempts: Attempts) -> dict[str, Any]:
            return await self._attempt(path, body, attempts)

        return await retried(
            attempt, name=self.name, retrying=self.retrying, request=request, sleep=self.sleep
        )

    async def _attempt(self, path: str, body: dict[str, Any], attempts: Attempts) -> dict[str, Any]:
        attempts.usage += Usage(requests=1)
        where = self.base_url
        try:
            response = await self.client.post(path, json=body)
        except httpx.TimeoutException:
            attempts.statuses.append("timeout")
            raise Retry(f"{where}: no answer within {self.retrying.timeout:g} s") from None
        except httpx.TransportError as error:
            attempts.statuses.append("connection")
            raise Retry(f"cannot connect to {where}: {error or type(error).__name__}") from None
        status = response.status_code
        if status in RETRIED:
            attempts.statuses.append(str(status))
            wait = retry_after_seconds(response.headers, self.clock())
            said = f"{where} answered {status} ({RETRIED[status]}): {detail(response)}"
            raise Retry(said, wait)
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
            raise Retry(f"{where}: the answer is not JSON: {response.text[:200]!r}") from None
        if not isinstance(answered, dict):
            attempts.statuses.append("malformed")
            raise Retry(f"{where}: the answer is not a JSON object")
        attempts.usage += self.tokens(answered.get(self.usage_key))
        return answered


def detail(response: httpx.Response) -> str:
    """The API's error ({"error": {"type", "message"}}, as Anthropic and OpenAI give it)."""
    try:
        error = response.json().get("error") or {}
        return f"{error.get('type') or 'error'}: {error.get('message', '')}".strip()
    except (json.JSONDecodeError, AttributeError):
        return response.text[:200] or response.reason_phrase
