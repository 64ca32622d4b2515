"""The X11 display server: XTest input, the screen through mss and XComposite, and the
windows through EWMH, each on its own connection to the display."""

from __future__ import annotations

import contextlib

from Xlib import error as xerror  # type: ignore[import-untyped, unused-ignore]

from roundhouse.devices.linux.display.base import DisplayServer
from roundhouse.devices.linux.display.x11.input import XInput
from roundhouse.devices.linux.display.x11.screen import Screen
from roundhouse.devices.linux.display.x11.windows import WindowManager

# A display that died closed its connections: calls raise these.
LOST = (xerror.ConnectionClosedError, xerror.DisplayConnectionError)


def open_x11(display: str) -> DisplayServer:
    """Connect to the X display ":N" (three connections; all closed if one fails)."""
    with contextlib.ExitStack() as opened:
        screen = opened.enter_context(Screen(display))
        xinput = opened.enter_context(XInput(display))
        windows = opened.enter_context(WindowManager(display))
        opened.pop_all()
    routes = {"input": "XTest", "screenshots": "MIT-SHM (mss) and XComposite", "windows": "EWMH"}
    return DisplayServer("x11", xinput, screen, windows, lost=LOST, routes=routes)
