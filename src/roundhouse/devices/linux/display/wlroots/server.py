"""A wlroots compositor as a display server: virtual input, screencopy, sway's windows."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping

from roundhouse.devices.linux.display.base import DisplayServer
from roundhouse.devices.linux.display.wayland.wire import WaylandGone
from roundhouse.devices.linux.display.wlroots.input import WlrootsInput
from roundhouse.devices.linux.display.wlroots.screen import Screencopy
from roundhouse.devices.linux.display.wlroots.sway import SwayGone, SwayWindows


def open_wlroots(env: Mapping[str, str]) -> DisplayServer:
    """Connect to the compositor of `env` (three connections; all closed if one fails)."""
    with contextlib.ExitStack() as opened:
        windows = opened.enter_context(SwayWindows(env))
        screen = opened.enter_context(Screencopy(env))
        pointer = opened.enter_context(WlrootsInput(env))
        opened.pop_all()
    routes = {
        "input": "zwlr_virtual_pointer_v1 + zwp_virtual_keyboard_v1 (Wayland)",
        "screenshots": "zwlr_screencopy_manager_v1 (Wayland)",
        "windows": "sway IPC",
    }
    return DisplayServer(
        "sway", pointer, screen, windows, lost=(WaylandGone, SwayGone), routes=routes
    )
