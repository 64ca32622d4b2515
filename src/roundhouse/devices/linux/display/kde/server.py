"""KDE as a display server: KWin's fake input on a Wayland connection, its screenshots
and scripts on one session-bus connection."""

from __future__ import annotations

from collections.abc import Mapping

from roundhouse.devices.linux.display.base import DisplayServer, DisplayUnavailable
from roundhouse.devices.linux.display.kde.fakeinput import FakeInput
from roundhouse.devices.linux.display.kde.kwin import (
    KWinRefused,
    KWinScreen,
    KWinScripts,
    KWinWindows,
)
from roundhouse.devices.linux.display.wayland.dbus import (
    BusGone,
    SyncBus,
    opening_on_bus,
    session_bus_address,
)
from roundhouse.devices.linux.display.wayland.wire import WaylandGone


def open_kde(env: Mapping[str, str]) -> DisplayServer:
    bus = SyncBus(session_bus_address(env, "KWin"), unix_fds=True)
    with opening_on_bus(bus, KWinRefused):
        if not bus.has_name("org.kde.KWin"):
            raise DisplayUnavailable("no KWin on this session's bus (org.kde.KWin)")
        windows = KWinWindows(KWinScripts(bus))
        windows.list_windows()  # scripting refused or broken: say so now
        pointer = FakeInput(env)
        screen = KWinScreen(bus, windows, pointer.output.logical_size)
    routes = {
        "input": "org_kde_kwin_fake_input (Wayland)",
        "screenshots": "KWin ScreenShot2 (D-Bus)",
        "windows": "KWin scripting (D-Bus)",
    }
    return DisplayServer(
        "kde", pointer, screen, windows, lost=(BusGone, WaylandGone), shared=(bus,), routes=routes
    )
