"""The settle (settle.py) on witnesses the test bumps on a timeline: it never ends before
the application is done (no time is asserted beyond that); it waits while changes keep coming,
while the application has not answered, while an announced change is not drawn, and while
the control acted on is held pressed; an action that shows nothing ends it after the grace;
a caret's blink is no sign."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

from PIL import Image, ImageDraw

from roundhouse.devices.contract import Rect
from roundhouse.devices.linux.changes import Changes
from roundhouse.devices.linux.settle import GAP, Pixels, Watch, settle

WINDOW = Rect(left=0, top=0, right=800, bottom=600)
CARET = Rect(left=10, top=10, right=12, bottom=30)


def later(seconds: float, action: Callable[[], object]) -> asyncio.TimerHandle:
    return asyncio.get_running_loop().call_later(seconds, action)


def answering(delay: float = 0.0) -> Callable[[], Awaitable[bool]]:
    async def caught_up() -> bool:
        await asyncio.sleep(delay)
        return True

    return caught_up


async def timed(watch: Watch, **options: float) -> tuple[float, bool, bool]:
    marks = watch.marks()
    started = time.monotonic()
    done = await settle(watch, marks, **options)
    return time.monotonic() - started, done.changed, done.timed_out


async def test_a_change_drawn_once_ends_after_the_gap() -> None:
    screen = Changes("screen")
    later(0.01, lambda: screen.bump(WINDOW))
    elapsed, changed, timed_out = await timed(Watch(screen=screen))
    assert changed and not timed_out and elapsed >= 0.01 + GAP


async def test_changes_that_keep_coming_hold_it_until_they_stop() -> None:
    screen = Changes("screen")
    for step in range(10):  # an animation: a frame every 20 ms for 200 ms
        later(0.01 + step * 0.02, lambda: screen.bump(WINDOW))
    elapsed, changed, _ = await timed(Watch(screen=screen))
    assert changed and elapsed >= 0.19 + GAP


async def test_nothing_shown_ends_after_the_grace() -> None:
    screen, app = Changes("screen"), Changes("app")
    later(0.02, lambda: screen.bump(CARET))  # a caret's blink: no sign of the action
    elapsed, changed, timed_out = await timed(Watch(screen=screen, app=app), grace=0.1)
    assert not changed and not timed_out and elapsed >= 0.1


async def test_it_waits_for_the_application_to_answer() -> None:
    screen, app = Changes("screen"), Changes("app")
    later(0.01, app.bump)
    later(0.02, lambda: screen.bump(WINDOW))
    watch = Watch(screen=screen, app=app, caught_up=answering(0.15))
    elapsed, changed, _ = await timed(watch)
    assert changed and elapsed >= 0.02 + GAP + 0.15


async def test_an_announced_change_is_waited_for_until_drawn() -> None:
    """A compositor draws a frame or two after the application announced."""
    screen, app = Changes("screen"), Changes("app")
    later(0.01, app.bump)
    later(0.08, lambda: screen.bump(WINDOW))  # past the gap after the announcement
    elapsed, changed, _ = await timed(Watch(screen=screen, app=app, caught_up=answering()))
    assert changed and elapsed >= 0.08 + GAP


async def test_a_control_held_pressed_is_waited_on() -> None:
    """Qt's click through its action: the button drawn pressed, then 100 ms of nothing,
    then the click."""
    screen = Changes("screen")
    released = [False]

    def click() -> None:
        released[0] = True
        screen.bump(WINDOW)

    async def held() -> bool:
        return not released[0]

    later(0.01, lambda: screen.bump(WINDOW))
    later(0.15, click)
    elapsed, changed, _ = await timed(Watch(screen=screen, held=held))
    assert changed and elapsed >= 0.15 + GAP


async def test_it_gives_up_at_the_timeout() -> None:
    screen = Changes("screen")
    for step in range(40):
        later(0.01 + step * 0.015, lambda: screen.bump(WINDOW))
    _, changed, timed_out = await timed(Watch(screen=screen), timeout=0.3)
    assert changed and timed_out


def test_pixels_tell_a_caret_fading_from_a_change() -> None:
    """Where the screen's rectangles are coarse (wlroots' whole output for GTK 4's caret
    fading), its pixels are compared: a sliver a caret wide is no change, more is one."""
    frames = [Image.new("RGB", (200, 100), "white") for _ in range(3)]
    ImageDraw.Draw(frames[1]).line([(50, 10), (50, 30)], fill="black")  # a caret drawn
    ImageDraw.Draw(frames[2]).rectangle([(40, 10), (90, 40)], fill="black")  # a digit shown
    shown = iter(frames)
    pixels = Pixels(lambda: next(shown))
    assert not pixels.caret_only()  # nothing to compare with yet
    assert pixels.caret_only()
    assert not pixels.caret_only()
