"""Which display server a desktop has, opened: X11 now; the Wayland families join here."""

from __future__ import annotations

from roundhouse.devices.contract import WindowInfo
from roundhouse.devices.linux.desktops.desktop import Desktop
from roundhouse.devices.linux.display.base import DisplayServer
from roundhouse.devices.linux.display.x11.server import open_x11


def open_display(desktop: Desktop) -> DisplayServer:
    """The display server of `desktop`, connected."""
    return open_x11(desktop.display)


def list_windows(desktop: Desktop) -> list[WindowInfo]:
    """One-off listing (connects and disconnects); keep a DisplayServer for more."""
    with open_display(desktop) as display:
        return display.windows.list_windows()
