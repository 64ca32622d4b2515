"""The one polling primitive (core/polling.py): a value as soon as there is one, None or the
named error at the deadline, the condition asked at least once, async conditions awaited."""

from __future__ import annotations

import itertools
import time

import pytest

from roundhouse.core.polling import TimedOut, until, until_async, within, within_async


def test_the_value_comes_back_once_the_condition_gives_one() -> None:
    asked = itertools.count(1)
    assert until(lambda: _third(asked), 5, "three asks", every=0) == 3


def _third(asked: itertools.count[int]) -> int | None:
    number = next(asked)
    return number if number >= 3 else None


def test_none_and_false_are_no_value_but_zero_and_empty_are() -> None:
    assert within(lambda: 0, 0) == 0 and within(lambda: "", 0) == ""
    assert within(lambda: None, 0) is None and within(lambda: False, 0) is None


def test_the_deadline_names_what_was_awaited() -> None:
    with pytest.raises(TimedOut, match=r"^the window did not show within 0.05 s$"):
        until(lambda: None, 0.05, "the window did not show")


def test_the_error_is_the_callers_own() -> None:
    class Gone(RuntimeError):
        pass

    with pytest.raises(Gone, match="no socket within 0 s"):
        until(lambda: None, 0, "no socket", error=Gone)


def test_the_condition_is_asked_once_even_with_no_time() -> None:
    asked = []
    assert within(lambda: asked.append(1), -1) is None
    assert asked == [1]
    assert until(lambda: "there", 0, "it") == "there"


async def test_async_conditions_are_awaited_and_plain_ones_taken() -> None:
    asked = itertools.count(1)

    async def later() -> int | None:
        return _third(asked)

    assert await until_async(later, 5, "three asks", every=0) == 3
    assert await within_async(lambda: "now", 0) == "now"
    assert await within_async(lambda: None, 0.02) is None
    with pytest.raises(TimedOut, match="nothing within 0 s"):
        await until_async(lambda: None, 0, "nothing")


def test_pause_first_asks_only_after_one_interval() -> None:
    # The caller has just looked (the app did not answer): the first ask comes one pause
    # later, never at once. (A lower bound: sleep never wakes early.)
    started = time.monotonic()
    asked: list[float] = []
    assert within(lambda: asked.append(time.monotonic() - started), 0.2, 0.05, True) is None
    assert asked[0] >= 0.05 and len(asked) >= 2
