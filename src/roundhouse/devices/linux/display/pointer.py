"""The pointer, written once: move, click, scroll and drag, a button pressed or released
where the pointer is, and where it is; the screen's bounds checked before anything is sent.

A backend says only how one motion, one button and one wheel step reach its server
(`_motion`, `_button`, `_axis`) and what the screen's size is; its quirks are hooks:
`_points` (where the pointer passes on its way to a point: Wayland's approach, in
wayland/pointer.py), `_flush` (X11's sync, a Wayland roundtrip, Mutter's calls sent in
one go).
"""

from __future__ import annotations

import threading
import time
from abc import ABC, abstractmethod

from roundhouse.devices.linux.display.base import Button
from roundhouse.devices.linux.display.keys import InputError

# evdev's button codes (linux/input-event-codes.h, BTN_LEFT...): what wlroots' virtual
# pointer, Mutter's remote desktop and KWin's fake input take.
EVDEV_BUTTONS: dict[Button, int] = {"left": 0x110, "right": 0x111, "middle": 0x112}
# wl_pointer's axes, numbered alike by Mutter's remote desktop and KWin's fake input.
VERTICAL, HORIZONTAL = 0, 1
WHEEL_STEP = 15.0  # one wheel notch in wl_pointer axis units, as libinput reports one

# A toolkit starts a drag only once the pointer moves with the button held: a drag presses,
# moves in steps a little apart in time, and releases.
DRAG_STEPS = 12
DRAG_PAUSE = 0.01  # seconds between two steps
# Qt 6 missed a triple click whose presses reached it in one burst (it saw one click, the
# caret placed); xdotool's `click --repeat 3` waits 10 ms between clicks, as this does.
CLICK_PAUSE = 0.01


class OffScreen(InputError):
    """A point outside the screen: nothing was sent."""


def drag_path(
    start: tuple[int, int], end: tuple[int, int], steps: int = DRAG_STEPS
) -> list[tuple[int, int]]:
    """The points a drag pressed at `start` moves through, `end` last."""
    (x0, y0), (x1, y1) = start, end
    return [(x0 + (x1 - x0) * i // steps, y0 + (y1 - y0) * i // steps) for i in range(1, steps + 1)]


class Pointer(ABC):
    """move, click, scroll and drag (a display.base.Input's pointer half), serialised on the
    backend's `_lock`. Every point is checked against the screen first: a point off it is
    refused (OffScreen) before any event is sent, so a drag never leaves a button held."""

    _lock: threading.Lock
    _at: tuple[int, int] | None = None  # where this pointer last sent it

    def move(self, x: int, y: int) -> None:
        self._check((x, y))
        with self._lock:
            self._move_to(x, y)
            self._flush()

    def click(self, x: int, y: int, button: Button = "left", count: int = 1) -> None:
        """Click `count` times (2 = double click) at screen coordinates."""
        self._check((x, y))
        with self._lock:
            self._move_to(x, y)
            for number in range(count):
                if number:  # each click of a double or triple one a moment after the last
                    self._flush()
                    time.sleep(CLICK_PAUSE)
                self._button(button, True)
                self._button(button, False)
            self._flush()

    def scroll(self, x: int, y: int, dx: int = 0, dy: int = 0) -> None:
        """Scroll at (x, y): dy > 0 scrolls down, dx > 0 right, one wheel notch per unit."""
        self._check((x, y))
        with self._lock:
            self._move_to(x, y)
            for axis, steps in ((VERTICAL, dy), (HORIZONTAL, dx)):
                if steps:
                    self._axis(axis, steps)
            self._flush()

    def drag(self, start: tuple[int, int], end: tuple[int, int], button: Button = "left") -> None:
        """Press at `start`, move in steps (toolkits need motion to start a drag), release."""
        self._check(start, end)
        with self._lock:
            self._move_to(*start)
            self._button(button, True)
            self._flush()
            for x, y in drag_path(start, end):
                self._move_to(x, y)
                self._flush()
                time.sleep(DRAG_PAUSE)
            self._button(button, False)
            self._flush()

    def button_down(self, button: Button = "left") -> None:
        """Press `button` where the pointer is, and keep it down (until button_up): a
        drag whose moves are the caller's."""
        with self._lock:
            self._button(button, True)
            self._flush()

    def button_up(self, button: Button = "left") -> None:
        """Release `button` where the pointer is."""
        with self._lock:
            self._button(button, False)
            self._flush()

    def position(self) -> tuple[int, int] | None:
        """Where the pointer is: here, where it was last sent (None before it was); a
        backend whose server says where it is now (a person's moves too) says that."""
        return self._at

    def _check(self, *points: tuple[int, int]) -> None:
        width, height = self._screen_size()
        for x, y in points:
            if not (0 <= x < width and 0 <= y < height):
                raise OffScreen(f"({x}, {y}) is outside the {width}x{height} screen")

    def _move_to(self, x: int, y: int) -> None:
        for point in self._points(x, y):
            self._motion(*point)
        self._at = (x, y)

    def _points(self, x: int, y: int) -> list[tuple[int, int]]:
        """The positions the pointer moves through to reach (x, y), the point last."""
        return [(x, y)]

    def _flush(self) -> None:  # noqa: B027 (a hook: a backend without one needs none)
        """Make sure what was sent has reached the server (X11's sync, a Wayland roundtrip)."""

    @abstractmethod
    def _screen_size(self) -> tuple[int, int]:
        """The screen's width and height, in the coordinates `_motion` takes."""

    @abstractmethod
    def _motion(self, x: int, y: int) -> None:
        """Move the pointer to (x, y), a point on the screen."""

    @abstractmethod
    def _button(self, button: Button, pressed: bool) -> None: ...

    @abstractmethod
    def _axis(self, axis: int, steps: int) -> None:
        """Turn the wheel `steps` notches along `axis` (VERTICAL or HORIZONTAL); a positive
        step scrolls down or right."""
