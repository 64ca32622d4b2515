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
from roundhouse.devices.linux.action.settle import GAP, LOOK_AHEAD, Grab, Pixels, Watch, settle
from roundhouse.devices.linux.display.changes import Changes

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


async def test_a_look_ahead_stands_only_from_the_last_change() -> None:
    """Once a stretch of quiet has lasted LOOK_AHEAD the caller is asked to look ahead; a
    change after that begins a new stretch, and a look begun before it does not stand: the
    settle's quiet_from is later than it."""
    screen = Changes("screen")
    asked: list[float] = []
    changed: list[float] = []

    def change() -> None:
        changed.append(time.monotonic())
        screen.bump(WINDOW)

    def ahead() -> None:
        asked.append(time.monotonic())
        if len(asked) == 1:
            later(0.005, change)  # lands while the first look ahead reads

    later(0.01, change)
    done = await settle(Watch(screen=screen), (screen.mark(),), ahead=ahead)
    assert not done.timed_out and done.quiet_from is not None
    assert len(asked) == 2
    assert asked[0] < changed[-1] <= done.quiet_from <= asked[1]
    assert asked[1] - done.quiet_from >= LOOK_AHEAD


async def test_no_look_ahead_while_an_animation_draws() -> None:
    """An animation draws every frame: no stretch of quiet lasts LOOK_AHEAD until it stops,
    so the application is not asked to be read meanwhile."""
    screen = Changes("screen")
    asked: list[float] = []
    drawn: list[float] = []

    def frame() -> None:
        drawn.append(time.monotonic())
        screen.bump(WINDOW)

    for step in range(10):
        later(0.01 + step * 0.01, frame)
    done = await settle(
        Watch(screen=screen), (screen.mark(),), ahead=lambda: asked.append(time.monotonic())
    )
    assert len(drawn) == 10 and not done.timed_out
    assert asked and asked[0] > drawn[-1]


async def test_drawing_judged_no_answer_does_not_hold_it() -> None:
    """KWin names gedit's window damaged at every frame of its header bar's animation, and
    each look at the pixels (a screenshot of ~30 ms) finds nothing that matters: the settle
    ends after its gap, though the drawing goes on past the timeout."""
    screen = Changes("screen")
    still = Image.new("RGB", (200, 100), "white")

    def grab(_area: Rect | None) -> Image.Image:
        time.sleep(0.03)
        return still.copy()

    for step in range(100):
        later(0.01 + step * 0.015, lambda: screen.bump(WINDOW))
    watch = Watch(screen=screen, pixels=Pixels(grab))
    done = await settle(watch, (screen.mark(),), timeout=1.0)
    assert done.changed and not done.timed_out


async def test_it_gives_up_at_the_timeout() -> None:
    screen = Changes("screen")
    for step in range(40):
        later(0.01 + step * 0.015, lambda: screen.bump(WINDOW))
    _, changed, timed_out = await timed(Watch(screen=screen), timeout=0.3)
    assert changed and timed_out


async def test_pixels_tell_a_caret_fading_from_a_change() -> None:
    """Where the screen's rectangles are coarse (wlroots' whole output for GTK 4's caret
    fading), its pixels are compared: a sliver a caret wide is no change, more is one."""
    frames = [Image.new("RGB", (200, 100), "white") for _ in range(3)]
    ImageDraw.Draw(frames[1]).line([(50, 10), (50, 30)], fill="black")  # a caret drawn
    ImageDraw.Draw(frames[2]).rectangle([(40, 10), (90, 40)], fill="black")  # a digit shown
    shown = iter(frames)
    pixels = Pixels(lambda _area: next(shown))
    assert not await pixels.caret_only()  # nothing to compare with yet
    assert await pixels.caret_only()
    assert not await pixels.caret_only()


def looked_at() -> tuple[Image.Image, list[Rect | None], Grab]:
    """A white 400x300 desktop, the areas looked at (None: all of it), and its grab."""
    desktop = Image.new("RGB", (400, 300), "white")
    asked: list[Rect | None] = []

    def grab(area: Rect | None) -> Image.Image:
        asked.append(area)
        return desktop.copy() if area is None else desktop.crop(tuple(area.as_list()))

    return desktop, asked, grab


async def test_pixels_look_only_where_the_screen_said_it_changed() -> None:
    """KWin names the window damaged: the look is of that area alone (a screenshot of it
    costs half one of the desktop), compared with what the last look saw there."""
    desktop, asked, grab = looked_at()
    window = Rect(left=100, top=50, right=300, bottom=250)
    pixels = Pixels(grab, desktop.size, home=window)
    await pixels.prime()  # before any change: the window acted on
    assert await pixels.caret_only(within=window)  # nothing changed in the window
    ImageDraw.Draw(desktop).rectangle([(10, 10), (60, 40)], fill="black")  # outside it
    assert await pixels.caret_only(within=window)
    ImageDraw.Draw(desktop).rectangle([(150, 100), (200, 130)], fill="black")  # inside
    assert not await pixels.caret_only(within=window)
    assert asked == [window, window, window, window]
    # An area the last look did not see whole cannot be compared: a change, to be safe.
    assert not await pixels.caret_only(within=Rect(left=0, top=0, right=120, bottom=60))
    # The whole desktop's area is looked at as the desktop; one off it, likewise.
    assert not await pixels.caret_only(within=Rect(left=-5, top=-5, right=500, bottom=400))
    assert asked[-1] is None


async def test_the_first_look_takes_in_the_window_acted_on() -> None:
    """The first change a look sees (a button's hover) sets what the next are compared with:
    a look at the window too, so that a change elsewhere in it next is compared, not
    counted as a change because the first look did not see that part."""
    desktop, asked, grab = looked_at()
    window = Rect(left=100, top=50, right=300, bottom=250)
    button = Rect(left=150, top=200, right=200, bottom=230)
    pixels = Pixels(grab, desktop.size, home=window)
    assert not await pixels.caret_only(within=button)  # nothing to compare with yet
    assert await pixels.caret_only(within=Rect(left=110, top=60, right=290, bottom=240))
    assert asked[0] == window


def test_the_extent_of_changes_is_the_box_around_their_rectangles() -> None:
    screen = Changes("screen")
    mark = screen.mark()
    assert screen.extent(mark) is None  # nothing came
    screen.bump(Rect(left=10, top=20, right=30, bottom=40))
    screen.bump(Rect(left=5, top=25, right=20, bottom=60))
    assert screen.extent(mark) == Rect(left=5, top=20, right=30, bottom=60)
    screen.bump()  # a change without a rectangle may have been anywhere
    assert screen.extent(mark) is None


BUTTON = Rect(left=300, top=300, right=360, bottom=340)  # the control clicked
LABEL = Rect(left=300, top=100, right=400, bottom=120)  # where the click's answer shows


def hover(screen: Changes, frames: int, drawn: list[int]) -> None:
    """GTK's hover transition: a frame on the button every 20 ms, counted as drawn."""

    def frame() -> None:
        drawn.append(1)
        screen.bump(BUTTON)

    for step in range(frames):
        later(0.01 + step * 0.02, frame)


async def test_the_control_s_own_feedback_does_not_hold_it() -> None:
    """A button's hover fades for a second: its frames are a first sign, then nothing
    the settle waits on once the application has answered (the label, its Ping)."""
    screen, app = Changes("screen", exact=True), Changes("app")
    drawn: list[int] = []
    hover(screen, 50, drawn)
    later(0.03, app.bump)
    later(0.04, lambda: screen.bump(LABEL))
    watch = Watch(screen=screen, app=app, caught_up=answering(), feedback=BUTTON)
    elapsed, changed, timed_out = await timed(watch)
    assert changed and not timed_out and elapsed >= 0.04 + GAP
    assert len(drawn) < 50  # it ended with the fading still under way


async def test_without_the_control_s_rectangle_its_feedback_is_waited_out() -> None:
    screen = Changes("screen", exact=True)
    drawn: list[int] = []
    hover(screen, 10, drawn)
    elapsed, changed, _ = await timed(Watch(screen=screen))
    assert changed and len(drawn) == 10 and elapsed >= 0.19 + GAP


async def test_the_feedback_alone_is_a_sign() -> None:
    """A click whose answer is its own button (a toggle drawn pressed) changed something."""
    screen = Changes("screen", exact=True)
    later(0.01, lambda: screen.bump(BUTTON))
    _, changed, _ = await timed(Watch(screen=screen, feedback=BUTTON), grace=0.1)
    assert changed


async def test_what_is_drawn_outside_the_control_still_holds_it() -> None:
    """A menu sliding in below the button it opens from: every frame is waited on."""
    screen = Changes("screen", exact=True)
    menu = Rect(left=300, top=340, right=500, bottom=600)
    for step in range(10):
        later(0.01 + step * 0.02, lambda: screen.bump(menu))
    elapsed, changed, _ = await timed(Watch(screen=screen, feedback=BUTTON))
    assert changed and elapsed >= 0.19 + GAP


async def test_a_control_held_pressed_is_waited_on_though_drawn_on_itself() -> None:
    """Qt's click through its action: drawn pressed on the button, 100 ms of nothing,
    then the click's answer in the label."""
    screen = Changes("screen", exact=True)
    released = [False]

    def click() -> None:
        released[0] = True
        screen.bump(BUTTON)
        screen.bump(LABEL)

    async def held() -> bool:
        return not released[0]

    later(0.01, lambda: screen.bump(BUTTON))
    later(0.15, click)
    elapsed, changed, _ = await timed(Watch(screen=screen, held=held, feedback=BUTTON))
    assert changed and elapsed >= 0.15 + GAP


async def test_pixels_outside_the_control_tell_a_box_around_it_and_a_caret() -> None:
    """GTK 4 on X11 reports a frame as one box around a caret and the button: compared
    outside the button, only the caret differs; a digit shown outside it is a change."""
    frames = [Image.new("RGB", (500, 400), "white") for _ in range(3)]
    ImageDraw.Draw(frames[1]).rectangle([(305, 305), (350, 330)], fill="grey")  # hover
    ImageDraw.Draw(frames[1]).line([(50, 10), (50, 30)], fill="black")  # a caret
    ImageDraw.Draw(frames[2]).rectangle([(305, 305), (350, 330)], fill="white")
    ImageDraw.Draw(frames[2]).rectangle([(40, 10), (90, 40)], fill="black")  # a digit
    shown = iter(frames)
    pixels = Pixels(lambda _area: next(shown))
    await pixels.prime()
    assert await pixels.caret_only(BUTTON)
    assert not await pixels.caret_only(BUTTON)


async def test_a_box_around_the_control_and_elsewhere_is_told_by_pixels() -> None:
    """X11's exact rectangles, where a frame's box reaches past the button: the pixels
    outside it decide, and a still screen there lets the settle end."""
    screen = Changes("screen", exact=True)
    still = Image.new("RGB", (500, 400), "white")
    around = Rect(left=40, top=10, right=360, bottom=340)
    drawn: list[int] = []

    def frame() -> None:
        drawn.append(1)
        screen.bump(around)

    for step in range(50):
        later(0.01 + step * 0.02, frame)
    watch = Watch(screen=screen, pixels=Pixels(lambda _area: still), feedback=BUTTON)
    _, changed, timed_out = await timed(watch)
    assert changed and not timed_out and len(drawn) < 50
