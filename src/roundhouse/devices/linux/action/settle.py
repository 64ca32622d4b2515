"""Settle instead of sleep: after an action, wait until the application is done with it.

UFO sleeps a fixed second after every action and OSWorld two. Here the settle ends when
what the session offers says the application is done (`settle`, with a Watch):

- the screen's own account of what it draws (changes.py): X11's damage, wlroots' screen
  copies with damage, the frames of GNOME's screen cast, KWin's window damage;
- what the application announces over AT-SPI (atspi/events.py), and a question asked of it
  through the bus, answered once it has handled everything sent to it before;
- the control acted on, where it says it is still pressed.

What is drawn only on the control acted on (`Watch.feedback`: its hover, press and focus
animations, GTK's ~200 ms transitions) is its own feedback, not the application's answer:
it is a first sign, but once that came it holds nothing. The application's answer is
what it announces, its answer to the question, and what is drawn anywhere else: a menu
sliding in, a dialog, a label that counts the clicks. X11's rectangles are exact, but GTK 4
reports a frame's damage as one box around all it drew (a caret and the button), so a
rectangle that reaches past the control is told by its pixels, compared outside it.

The action is seen to have started once either witness reports a change (a caret's blink
is none); it is done once neither has reported one for `gap` (an animation draws every
frame, ~17 ms apart), the application has answered, what it last announced has been
drawn (a compositor draws a frame or two after the application), and the control is no
longer pressed: Qt's click through its accessibility action
holds the button down for 100 ms, drawing and announcing nothing, before it clicks. An
action that shows no sign within `grace` changed nothing to be seen. `timeout` caps it all
(an animation that never stops).

The caller's look after the action need not wait for the end: once a stretch of quiet has
lasted LOOK_AHEAD, `ahead` is called, and a look begun then stands if the settle ends done
with that stretch (`Settled.quiet_from`: nothing of the answer came since). The pixel looks
are taken off the event loop, so that the read goes on while one waits for a frame.

Where the screen reports nothing (a display server without such an account: the fake
display, GNOME without GStreamer's PipeWire source), `wait_quiet` compares its pixels and
waits for `quiet` seconds of stillness, as every settle did before: a raw grab costs ~1.5 ms
on X11 and comparing two is a memcmp. Pass it a frame taken before the action (`frame()`),
so that a change that happened before we started watching still counts.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from PIL import Image, ImageChops

from roundhouse.devices.contract import Rect, bounding
from roundhouse.devices.linux.display.base import RouteRefused, Screen, clip
from roundhouse.devices.linux.display.changes import Changes, any_change, caret_like

GAP = 0.04  # seconds without a sign that end the settle: over two frames at 60 Hz
GRACE = 0.15  # seconds an action gets to show a first sign
QUIET = 0.12  # seconds of stillness where only pixels tell (it outlasts Qt's press animation)
# Pixels around a control's accessible rectangle still drawn as its own: GTK 4 draws a
# keypad button's hover 4 px past it on each side.
FEEDBACK_MARGIN = 8
DRAWN_WAIT = 0.1  # seconds after the first sign an announced change gets to be drawn
HELD_POLL = 0.02  # seconds between two questions to a control still pressed
# Seconds of quiet after which the look after the action is begun, while the settle waits
# out the rest of its gap: an animation draws every ~17 ms, so a look is not begun (and
# the application not asked) while one runs.
LOOK_AHEAD = 0.02


@dataclass(frozen=True)
class Settled:
    elapsed_ms: float
    changed: bool  # the screen changed after the action
    timed_out: bool  # still changing at `timeout`
    # When the last stretch of quiet began (time.monotonic()): nothing of the application's
    # answer came since. None where the settle did not end done after one.
    quiet_from: float | None = None


Grab = Callable[[Rect | None], Image.Image]  # a region's pixels; None: the whole desktop's


class Pixels:
    """The screen's pixels, looked at where its account of a change is too coarse to tell a
    caret's blink from a change (changes.Changes.exact): GTK 4 fades its text caret out and
    in, drawing ~200 ms of frames every half second, which wlroots reports as the whole
    output damaged, GNOME as painted frames, KWin as the window damaged. Each look compares
    the screen with the previous look's, only where the screen said it changed: a KWin
    screenshot of a window's area costs ~16 ms, of the whole desktop 35-40."""

    def __init__(
        self, grab: Grab, size: tuple[int, int] | None = None, home: Rect | None = None
    ) -> None:
        """`size` is the desktop's: without it every look is of the whole desktop. `home`
        is the window acted on: the first look (`prime`'s too) takes it in."""
        self._grab = grab
        self._size = size
        self._home = home
        self._last: tuple[Image.Image, Rect | None] | None = None  # a look, and its area

    async def caret_only(self, beyond: Rect | None = None, within: Rect | None = None) -> bool:
        """Whether the screen differs from the last look only in a caret-sized sliver, or
        not at all, outside `beyond` (what is drawn inside it does not count), looking only
        `within` where given (where the screen said it changed); False where there is no
        earlier look of that area to compare with. The look is taken off the event loop:
        a wlroots copy or a KWin screenshot waits for a frame, and the look after the
        action is read meanwhile (settle's `ahead`)."""
        return await asyncio.to_thread(self._caret_only, beyond, within)

    def _caret_only(self, beyond: Rect | None, within: Rect | None) -> bool:
        if self._last is None and within is not None and self._home is not None:
            # The first look sets what the next are compared with: the window acted on too,
            # where the next changes are likely to be (a look at more than was seen before
            # cannot be compared, and counts as a change).
            within = bounding([within, self._home])
        area = self._area(within)
        try:
            now = self._grab(area)
        except RouteRefused:
            return False
        last, self._last = self._last, (now, area)
        before = _cropped(last, area) if last is not None else None
        if before is None or before.size != now.size or before.mode != now.mode:
            return False
        difference = ImageChops.difference(before, now)
        if beyond is not None:
            left, top = (area.left, area.top) if area is not None else (0, 0)
            width, height = now.size
            box = (
                max(beyond.left - left, 0),
                max(beyond.top - top, 0),
                min(beyond.right - left, width),
                min(beyond.bottom - top, height),
            )
            if box[0] < box[2] and box[1] < box[3]:
                difference.paste(0, box)
        changed = difference.getbbox()
        return changed is None or caret_like(Rect(*changed))

    async def prime(self) -> None:
        """Look now, where there is no look to compare the next with."""
        if self._last is None:
            area = self._area(self._home)
            with contextlib.suppress(RouteRefused):
                self._last = (await asyncio.to_thread(self._grab, area), area)

    def _area(self, within: Rect | None) -> Rect | None:
        """The part of the desktop to look at: None for all of it."""
        if within is None or self._size is None:
            return None
        try:
            area = clip(within, self._size)
        except ValueError:  # off the desktop
            return None
        return None if area == Rect(0, 0, *self._size) else area


def _cropped(look: tuple[Image.Image, Rect | None], area: Rect | None) -> Image.Image | None:
    """What the earlier `look` saw of `area` (None: the whole desktop); None where it did
    not see all of it."""
    image, seen = look
    if area is None:
        return image if seen is None else None
    left, top = (seen.left, seen.top) if seen is not None else (0, 0)
    if seen is not None and not seen.contains(area):
        return None
    return image.crop((area.left - left, area.top - top, area.right - left, area.bottom - top))


@dataclass(frozen=True)
class Watch:
    """What tells that the application acted on is done: `screen` reports what is drawn,
    `app` what the application announces, `caught_up` returns once it has handled what was
    sent to it before (False: it did not answer), `held` says the control acted on is still
    pressed, `feedback` is where that control draws its own feedback (own_feedback)."""

    screen: Changes | None = None
    app: Changes | None = None
    caught_up: Callable[[], Awaitable[bool]] | None = None
    held: Callable[[], Awaitable[bool]] | None = None
    pixels: Pixels | None = None  # looked at where the screen's rectangles do not tell
    feedback: Rect | None = None

    @property
    def witnesses(self) -> list[Changes]:
        return [w for w in (self.screen, self.app) if w is not None]

    def marks(self) -> tuple[int, ...]:
        return tuple(witness.mark() for witness in self.witnesses)

    async def changed_since(self, marks: tuple[int, ...], *, answer: bool = False) -> bool:
        """Whether a change that matters came after `marks` (a caret's blink does not);
        with `answer`, only the application's answer does: not the control's feedback."""
        own = self.feedback if answer else None
        for witness, mark in zip(self.witnesses, marks, strict=True):
            if witness is not self.screen:
                if witness.since(mark):
                    return True
            elif await self._drawn_since(witness, mark, own):
                return True
        return False

    async def _drawn_since(self, screen: Changes, mark: int, own: Rect | None) -> bool:
        if screen.exact:
            if own is None:
                return screen.since(mark, caret_like)
            if not screen.since(mark, lambda rect: caret_like(rect) or own.contains(rect)):
                return False
            # A rectangle past the control may be a box around it and a caret (GTK 4).
        if self.pixels is None:
            return screen.since(mark, caret_like)
        return screen.since(mark) and not await self.pixels.caret_only(own, screen.extent(mark))

    def undrawn(self, before: tuple[int, ...]) -> bool:
        """Whether the application announced something since `before` and the screen has
        drawn nothing since (a compositor draws a frame or two after the application)."""
        if self.app is None or self.screen is None:
            return False
        screen, app = before
        return self.app.since(app) and not self.screen.since(screen, caret_like)


async def settle(
    watch: Watch,
    before: tuple[int, ...],
    *,
    timeout: float = 2.0,
    floor: float = 0.0,
    grace: float = GRACE,
    gap: float = GAP,
    ahead: Callable[[], object] | None = None,
) -> Settled:
    """Wait until the application is done with an action (see the module docstring);
    `before` are the watch's marks taken before the action. `ahead` is called each time a
    stretch of quiet has lasted LOOK_AHEAD: the caller may read what shows then, and that
    read stands if it began at or after the `quiet_from` of a settle that ended done."""
    start = time.monotonic()
    deadline = start + timeout
    if floor > 0:
        await asyncio.sleep(floor)
    if not await _first_sign(watch, before, min(start + grace, deadline)):
        return Settled(_ms(start), changed=False, timed_out=False)
    if watch.feedback is not None and watch.pixels is not None:
        await watch.pixels.prime()  # X11's first look at pixels: the next is compared with this
    drawn_by = time.monotonic() + DRAWN_WAIT
    while True:
        quiet_from = await _quiet_for(watch, gap, deadline, ahead)
        if quiet_from is None:
            return Settled(_ms(start), changed=True, timed_out=True)
        marks = watch.marks()
        if watch.caught_up is not None and not await _answered(watch.caught_up, deadline):
            return Settled(_ms(start), changed=True, timed_out=True)
        if await watch.changed_since(marks, answer=True):
            continue
        if watch.undrawn(before) and time.monotonic() < drawn_by:
            await any_change(watch.witnesses, marks, min(drawn_by, deadline) - time.monotonic())
            continue
        if watch.held is not None and await watch.held():
            # Asked again until it is let go, or something changes (the click, as a rule).
            while not await watch.changed_since(marks, answer=True) and await watch.held():
                if time.monotonic() >= deadline:
                    return Settled(_ms(start), changed=True, timed_out=True)
                await any_change(watch.witnesses, marks, HELD_POLL)
            continue
        return Settled(_ms(start), changed=True, timed_out=False, quiet_from=quiet_from)


async def _first_sign(watch: Watch, before: tuple[int, ...], until: float) -> bool:
    """Whether a change that matters comes after `before` by `until`."""
    while True:
        counts = watch.marks()  # read first: a change after this wakes the wait below
        if await watch.changed_since(before):
            return True
        remaining = until - time.monotonic()
        if remaining <= 0:
            return False
        await any_change(watch.witnesses, counts, remaining)


async def _quiet_for(
    watch: Watch, gap: float, deadline: float, ahead: Callable[[], object] | None
) -> float | None:
    """Wait until `gap` seconds pass with nothing of the application's answer (the
    control's own feedback goes on as it will): when that stretch of quiet began, or None
    when the deadline comes first. `ahead` is called once a stretch has lasted LOOK_AHEAD."""
    quiet_since = time.monotonic()
    counts = watch.marks()
    looked_ahead = ahead is None
    while True:
        now = time.monotonic()
        if now >= deadline:
            return None
        if watch.marks() != counts:  # judged first: its wake may still be queued
            fresh = watch.marks()
            if await watch.changed_since(counts, answer=True):
                quiet_since = now
                looked_ahead = ahead is None
            counts = fresh
            now = time.monotonic()  # judging may have taken a grab
        if not looked_ahead and now - quiet_since >= LOOK_AHEAD and ahead is not None:
            ahead()  # in every stretch that ends the settle, however late the loop woke
            looked_ahead = True
        if now - quiet_since >= gap:
            # What came while the last grab was taken is not judged: drawing that goes on
            # (a header bar's animation, judged no answer at each look) cannot hold it. A
            # look begun ahead may not see it either: looking again there cost the look
            # ahead's gain wherever a GTK 4 caret fades (docs/design.md, "the settle").
            return quiet_since
        wake = quiet_since + (gap if looked_ahead else LOOK_AHEAD)
        await any_change(watch.witnesses, counts, min(wake, deadline) - now)


async def _answered(caught_up: Callable[[], Awaitable[bool]], deadline: float) -> bool:
    """Whether the application answered before the deadline."""
    try:
        return await asyncio.wait_for(caught_up(), max(deadline - time.monotonic(), 0.001))
    except TimeoutError:
        return False


def own_feedback(control: Rect) -> Rect:
    """Where a control acted on draws its own feedback: its rectangle and a margin."""
    grow = FEEDBACK_MARGIN
    return Rect(
        control.left - grow, control.top - grow, control.right + grow, control.bottom + grow
    )


# ------------------------------------------------------------ where only pixels tell


def frame(screen: Screen, region: Rect | None = None) -> bytes:
    """The screen's (or a region's) pixels now, to compare with later ones; nothing where
    the session refuses its screen (a person's KWin before `roundhouse setup kde`): the
    settle then waits out its grace, and the action itself goes on."""
    try:
        return screen.raw(region)
    except RouteRefused:
        return b""


async def wait_quiet(
    screen: Screen,
    *,
    before: bytes | None = None,
    region: Rect | None = None,
    timeout: float = 2.0,
    floor: float = 0.0,
    quiet: float = QUIET,
    grace: float = GRACE,
    interval: float = 0.015,
) -> Settled:
    """Wait until the screen's pixels have been still for `quiet` seconds: once they have
    changed and then held still, or after `grace` when they do not change at all."""
    start = time.monotonic()
    if floor > 0:
        await asyncio.sleep(floor)
    last = before if before is not None else frame(screen, region)
    changed = False
    still_since = time.monotonic()
    # A loop of its own, not core/polling.py: this is the settle itself, whose end is when
    # the pixels have held still long enough, not a condition asked once.
    while True:
        now = time.monotonic()
        if now - start >= timeout:
            return Settled(_ms(start), changed, timed_out=True)
        # Before any change, give the application `grace` to react; after one, `quiet`.
        if now - still_since >= (quiet if changed else max(grace, quiet)):
            return Settled(_ms(start), changed, timed_out=False)
        await asyncio.sleep(interval)
        current = frame(screen, region)
        if current != last:
            changed = True
            still_since = time.monotonic()
        last = current


def _ms(start: float) -> float:
    return (time.monotonic() - start) * 1000
