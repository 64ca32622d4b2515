"""GNOME's screen alone: a Mutter screen cast of the caller's own, with no remote desktop
session and so no input (Backend.screen_alone). Mutter's remote desktop warms up with a
Shift (remote.py), and its idle monitor reports that like any input: a viewer that opened
the display whole would be taken for the person by a run on that desktop. Any client of the
session bus may start a screen cast (LINUX_DESKTOP.md)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from dbus_fast import Variant

from roundhouse.devices.linux.display.base import DisplayUnavailable, Screen
from roundhouse.devices.linux.display.changes import Changes
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
def screen_alone(env: Mapping[str, str]) -> Iterator[tuple[Screen, Changes | None]]:
    """The screen, and what says it drew, of the GNOME session of `env`."""
    with gnome_cast(env) as screen:
        yield screen, screen.drawn


@contextmanager
def gnome_cast(env: Mapping[str, str]) -> Iterator[CastScreen]:
    """GNOME's screen through a Mutter screen cast of the watch's own (no remote desktop)."""
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
