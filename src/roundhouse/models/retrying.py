"""When to send a model request again: what the server asked for, else a doubling wait.
Pure; shared by the HTTP model clients (openai_client.py, anthropic/)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

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
