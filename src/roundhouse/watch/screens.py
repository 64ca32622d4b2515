"""The watch's view of a desktop, opened without sending it anything: the screen (and what
says it drew) now, the person's input only at their first click or key.

Opening a display server whole is harmless on X11, wlroots and KWin, but not on GNOME: its
input is a Mutter remote desktop session, which warms up with a Shift (gnome/remote.py), and
Mutter's idle monitor reports that like any input, so a run on that desktop would take it
for the person and pause. There the screen is a screen cast of its own (Mutter's
ScreenCast alone, no remote desktop: any client of the session bus may start one, as
LINUX_DESKTOP.md measured), and the input opens with the person's first action, which is
theirs anyway.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from dbus_fast import Variant

from roundhouse.devices.linux.changes import Changes
from roundhouse.devices.linux.desktops.desktop import Desktop
from roundhouse.devices.linux.display.backends import open_display
from roundhouse.devices.linux.display.base import Button, DisplayUnavailable, Input, Screen
from roundhouse.devices.linux.display.gnome.cast import CastScreen
from roundhouse.devices.linux.display.gnome.remote import (
    CAST,
    CAST_PATH,
    CAST_SESSION,
    CAST_STREAM,
    START_TIMEOUT,
)
from roundhouse.devices.linux.display.wayland.dbus import (
    DBusCallError,
    SyncBus,
    session_bus_address,
)
from roundhouse.devices.linux.display.wayland.globals import bind_output
from roundhouse.devices.linux.display.wayland.wire import Connection


@contextmanager
def watched_screen(desktop: Desktop) -> Iterator[tuple[Screen, Changes | None]]:
    """The desktop's screen and its `drawn` witness, opened sending no input."""
    if desktop.kind == "gnome":
        with gnome_cast(desktop) as screen:
            yield screen, screen.drawn
        return
    with open_display(desktop) as display:
        yield display.screen, display.drawn


@contextmanager
def gnome_cast(desktop: Desktop) -> Iterator[CastScreen]:
    """GNOME's screen through a Mutter screen cast of the watch's own (no remote desktop)."""
    env = desktop.env
    with Connection.open(env) as wayland:
        size = bind_output(wayland).logical_size
    bus = SyncBus(session_bus_address(env, "GNOME"))
    try:
        try:
            (session,) = bus.call(CAST, CAST_PATH, CAST, "CreateSession", "a{sv}", [{}])
            (stream,) = bus.call(
                CAST, session, CAST_SESSION, "RecordMonitor", "sa{sv}",
                ["", {"cursor-mode": Variant("u", 1)}],
            )  # fmt: skip
            added = bus.watch(CAST_STREAM, "PipeWireStreamAdded", stream)
            bus.call(CAST, session, CAST_SESSION, "Start")
            (node,) = added.next(START_TIMEOUT)
        except (DBusCallError, TimeoutError) as error:
            raise DisplayUnavailable(f"GNOME's screen cast did not start: {error}") from None
        screen = CastScreen(node, env, size)
        try:
            yield screen
        finally:
            screen.close()
            with contextlib.suppress(DBusCallError, RuntimeError, TimeoutError):
                bus.call(CAST, session, CAST_SESSION, "Stop")
    finally:
        bus.close()


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

    def close(self) -> None:
        return None  # the display it came with is closed by whoever opened it
