"""GNOME as a display server: one session-bus connection for the input session, the
Shell's screenshots and its windows."""

from __future__ import annotations

from collections.abc import Mapping

from roundhouse.devices.linux.display.base import DisplayServer
from roundhouse.devices.linux.display.gnome import cast
from roundhouse.devices.linux.display.gnome.cast import CastScreen
from roundhouse.devices.linux.display.gnome.remote import MutterInput
from roundhouse.devices.linux.display.gnome.shell import (
    Shell,
    ShellRefused,
    ShellScreen,
    ShellWindows,
    pointer_position,
)
from roundhouse.devices.linux.display.wayland.dbus import (
    BusGone,
    SyncBus,
    opening_on_bus,
    session_bus_address,
)
from roundhouse.devices.linux.display.wayland.globals import bind_output
from roundhouse.devices.linux.display.wayland.wire import Connection, WaylandGone


def open_gnome(env: Mapping[str, str]) -> DisplayServer:
    address = session_bus_address(env, "GNOME")
    with Connection.open(env) as wayland:
        size = bind_output(wayland).logical_size
    bus = SyncBus(address)
    with opening_on_bus(bus, ShellRefused) as opened:
        shell = Shell(bus)
        windows = ShellWindows(shell)
        windows.list_windows()  # refused outside unsafe mode: say so now
        pointer = MutterInput(bus, env, size, lambda: pointer_position(shell))
        opened.callback(pointer.close)
        windows.on_activated = pointer.wake
        screen: CastScreen | ShellScreen
        if cast.available():
            screen = CastScreen(pointer.node, env, size)
            shots = "Mutter ScreenCast through PipeWire (GStreamer)"
        else:  # GNOME Shell's own, ~100 ms a PNG, where GStreamer's PipeWire source is not
            screen = ShellScreen(shell, size, env.get("XDG_RUNTIME_DIR", ""))
            shots = f"GNOME Shell Screenshot (D-Bus; faster with {cast.PACKAGES})"
    routes = {
        "input": "Mutter RemoteDesktop (D-Bus)",
        "screenshots": shots,
        "windows": "GNOME Shell Eval (unsafe mode)",
    }
    return DisplayServer(
        "gnome", pointer, screen, windows, lost=(BusGone, WaylandGone), shared=(bus,), routes=routes
    )
