"""Waiting for something to happen: the one polling primitive, in a sync and an async form.

A condition is asked again every `every` seconds until it gives a value (anything but None
and False) or the deadline passes. Then either the wait fails, naming what was awaited
(`until`, `until_async`: `error` says which exception, TimedOut by default), or the caller
gets None and looks again itself (`within`, `within_async`: a settle, or a read that
falls back to what is there).

    window = until(lambda: find_window(title), 10, f"a window titled {title!r}")
    # TimedOut: a window titled 'Notes' did not show within 10 s
    moved = await within_async(caret_moved, CARET_WAIT)  # None: it never moved

An async condition may be a coroutine function: its value is awaited. The condition is
asked at least once, even with a timeout of 0 or less; with `pause_first` (the caller has
just looked) only after one interval.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, overload

T = TypeVar("T")

EVERY = 0.02  # seconds between two asks, by default


class TimedOut(TimeoutError):
    """What was awaited did not happen in time; the message says what, and how long."""


def _wanted(value: object) -> bool:
    return value is not None and value is not False


def within(
    found: Callable[[], T | None], timeout: float, every: float = EVERY, pause_first: bool = False
) -> T | None:
    """What `found` gives once it gives something, else None after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    if pause_first:
        time.sleep(max(0.0, min(every, timeout)))
    while True:
        value = found()
        if _wanted(value):
            return value
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        time.sleep(min(every, left))


def until(
    found: Callable[[], T | None],
    timeout: float,
    what: str,
    every: float = EVERY,
    error: Callable[[str], Exception] = TimedOut,
) -> T:
    """What `found` gives once it gives something; `error` saying that `what` did not
    happen within `timeout` seconds otherwise."""
    value = within(found, timeout, every)
    if value is None:
        raise error(f"{what} within {timeout:g} s")
    return value


@overload
async def within_async(
    found: Callable[[], Awaitable[T | None]],
    timeout: float,
    every: float = EVERY,
    pause_first: bool = False,
) -> T | None: ...


@overload
async def within_async(
    found: Callable[[], T | None], timeout: float, every: float = EVERY, pause_first: bool = False
) -> T | None: ...


async def within_async(
    found: Callable[[], Any], timeout: float, every: float = EVERY, pause_first: bool = False
) -> Any:
    """As `within`, without blocking the loop; `found` may be async."""
    deadline = time.monotonic() + timeout
    if pause_first:
        await asyncio.sleep(max(0.0, min(every, timeout)))
    while True:
        value = found()
        if inspect.isawaitable(value):
            value = await value
        if _wanted(value):
            return value
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        await asyncio.sleep(min(every, left))


@overload
async def until_async(
    found: Callable[[], Awaitable[T | None]],
    timeout: float,
    what: str,
    every: float = EVERY,
    error: Callable[[str], Exception] = TimedOut,
) -> T: ...


@overload
async def until_async(
    found: Callable[[], T | None],
    timeout: float,
    what: str,
    every: float = EVERY,
    error: Callable[[str], Exception] = TimedOut,
) -> T: ...


async def until_async(
    found: Callable[[], Any],
    timeout: float,
    what: str,
    every: float = EVERY,
    error: Callable[[str], Exception] = TimedOut,
) -> Any:
    """As `until`, without blocking the loop; `found` may be async."""
    value = await within_async(found, timeout, every)
    if value is None:
        raise error(f"{what} within {timeout:g} s")
    return value
