"""The watch's view of a desktop, opened without sending it anything: the screen (and what
says it drew) now, the person's input only at their first click or key.

The screen comes from display/backends.screen_alone: the display server opened whole where
that sends nothing (X11, wlroots, KWin), a screen of its own where it would (GNOME: a Mutter
remote desktop warms up with a Shift, which a run on that desktop would take for the
person's input and pause). The input opens with the person's first action, which is theirs
anyway.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from roundhouse.devices.linux.desktops.desktop import Desktop
from roundhouse.devices.linux.display.backends import screen_alone
from roundhouse.devices.linux.display.base import Button, Input, Screen
from roundhouse.devices.linux.display.changes import Changes


@contextmanager
def watched_screen(desktop: Desktop) -> Iterator[tuple[Screen, Changes | None]]:
    """The desktop's screen and its `drawn` witness, opened sending no input."""
    with screen_alone(desktop) as seen:
        yield seen


class InputWhenUsed:
    """The person's Input (display.base.Input), its display opened at the first call."""

    def __init__(self, opening: Callable[[], Input]) -> None:
        self._opening = opening
        self._input: Input | None = None
        self._lock = threading.Lock()

    def _opened(self) -> Input:
        with self._lock:
            if self._input is None:
                self._input = self._opening()
            return self._input

    def move(self, x: int, y: int) -> None:
        self._opened().move(x, y)

    def click(self, x: int, y: int, button: Button = "left", count: int = 1) -> None:
        self._opened().click(x, y, button, count)

    def scroll(self, x: int, y: int, dx: int = 0, dy: int = 0) -> None:
        self._opened().scroll(x, y, dx, dy)

    def drag(self, start: tuple[int, int], end: tuple[int, int], button: Button = "left") -> None:
        self._opened().drag(start, end, button)

    def type_text(self, text: str) -> None:
        self._opened().type_text(text)

    def press_keys(self, keys: str) -> None:
        self._opened().press_keys(keys)

    def button_down(self, button: Button = "left") -> None:
        self._opened().button_down(button)

    def button_up(self, button: Button = "left") -> None:
        self._opened().button_up(button)

    def position(self) -> tuple[int, int] | None:
        return self._opened().position()

    def keys_down(self, keys: str) -> None:
        self._opened().keys_down(keys)

    def keys_up(self, keys: str) -> None:
        self._opened().keys_up(keys)

    def close(self) -> None:
        return None  # the display it came with is closed by whoever opened it
