"""When to send a model request again, and the one loop that does: what the server asked
for, else a doubling wait, within a number of retries and a retry budget. Shared by every
HTTP model client (openai_client.py, and through computer/posting.py the computer-use
families); the waits are pure, `retried` sleeps through the Sleep it is given.

Every attempt is counted (Attempts.usage: a failed one is a request too), and another one
is a request the session's limits may refuse: ModelRequest.before_retry is asked before
each retry, and its LimitReached ends the loop. Out of retries or budget, the last problem
becomes a ModelError that names it and says how many attempts were made."""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import TypeVar

from roundhouse.core.usage import Usage
from roundhouse.models.base import ModelError, ModelRequest

log = logging.getLogger(__name__)

BACKOFF_BASE = 1.0  # seconds before the first retry when the server gives no Retry-After
BACKOFF_CAP = 30.0
RETRY_AFTER_CAP = 120.0  # a server asking for more is retried after this anyway

Sleep = Callable[[float], Awaitable[None]]
Clock = Callable[[], datetime]


def retry_after_seconds(headers: Mapping[str, str], now: datetime) -> float | None:
    """What the server asked us to wait: retry-after-ms, Retry-After seconds or HTTP date."""
    milliseconds = headers.get("retry-after-ms")
    if milliseconds is not None:
        try:
            return max(0.0, float(milliseconds) / 1000)
        except ValueError:
            log.debug("ignoring an unreadable retry-after-ms header %r", milliseconds)
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass  # not seconds: try the HTTP-date form below
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        log.debug("ignoring an unreadable Retry-After header %r", value)
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - now).total_seconds())


def backoff_seconds(attempt: int, retry_after: float | None) -> float:
    """Wait before retry number attempt+1: the server's word if it gave one, else 1, 2, 4 …"""
    if retry_after is not None:
        return min(retry_after, RETRY_AFTER_CAP)
    return min(BACKOFF_BASE * float(2**attempt), BACKOFF_CAP)


# ------------------------------------------------------------------ the loop

T = TypeVar("T")


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


class Retry(Exception):
    """An attempt failed in a way worth another try; the message says why."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


async def retried(
    attempt: Callable[[Attempts], Awaitable[T]],
    *,
    name: str,
    retrying: Retrying,
    request: ModelRequest,
    sleep: Sleep,
) -> tuple[T, Attempts]:
    """`attempt` until it returns, retried on Retry after the backoff, within
    retrying.max_retries and retrying.retry_budget; a ModelError naming the last problem
    when they are spent. `name`: the model's spec, for the log."""
    attempts = Attempts()
    budget = retrying.retry_budget
    while True:
        started = time.monotonic()
        try:
            return await attempt(attempts), attempts
        except Retry as problem:
            attempts.spent += time.monotonic() - started
            tries = attempts.retries + 1
            if attempts.retries >= retrying.max_retries:
                message = f"{problem} (gave up after {tries} attempts)"
                raise ModelError(message, attempts.usage) from None
            delay = backoff_seconds(attempts.retries, problem.retry_after)
            if attempts.spent + delay > budget:
                message = (
                    f"{problem} (gave up after {tries} attempts: waiting {delay:g} s more "
                    f"would pass the retry budget of {budget:g} s, {retrying.budget_setting})"
                )
                raise ModelError(message, attempts.usage) from None
            send_again(request, attempts)  # before the wait: a refusal need not wait
            log.warning("%s: %s; retrying in %.1f s", name, problem, delay)
            await sleep(delay)
            attempts.spent += delay  # as asked for: a test's instant sleep spends it too
            attempts.retries += 1


def send_again(request: ModelRequest, attempts: Attempts) -> None:
    """Another HTTP attempt of `request` is a request too: the session's limits may refuse
    it (LimitReached, carrying what the attempts spent), as they refused none before it."""
    if request.before_retry is not None:
        request.before_retry(attempts.usage)
