"""GNOME: Mutter's remote desktop for input, its screen cast (or GNOME Shell's Screenshot)
for the screen, and GNOME Shell's Eval for the windows, on one session-bus connection; a
virtual desktop is GNOME Shell headless on a virtual monitor."""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path

from roundhouse.devices.linux.display.backend import Backend, Route, taken
from roundhouse.devices.linux.display.base import DisplayServer
from roundhouse.devices.linux.display.compositor import (
    Compositor,
    CompositorUnavailable,
    Spawner,
    Started,
    compositor_env,
    wait_for_socket,
)
from roundhouse.devices.linux.display.gnome import cast
from roundhouse.devices.linux.display.gnome.cast import CastScreen
from roundhouse.devices.linux.display.gnome.remote import MutterInput
from roundhouse.devices.linux.display.gnome.shell import (
    Shell,
    ShellRefused,
    ShellScreen,
    ShellWindows,
    pointer_position,
    prepare_shell,
    shell_paints,
)
from roundhouse.devices.linux.display.wayland.dbus import (
    BusGone,
    SyncBus,
    opening_on_bus,
    session_bus_address,
)
from roundhouse.devices.linux.display.wayland.globals import bind_output
from roundhouse.devices.linux.display.wayland.wire import Connection, WaylandGone

UNSAFE_MODE_FIX = (
    "run GNOME Shell with --unsafe-mode (a virtual desktop does: roundhouse desktop start "
    "--session gnome), or use --desktop virtual --session gnome"
)
INPUT = Route(
    "input",
    "Mutter RemoteDesktop (D-Bus)",
    "none: any client of the session bus (GNOME shows its screen-sharing icon)",
    "start pipewire and wireplumber in the session (Mutter's remote desktop needs them)",
)
SCREEN_CAST = Route(
    "screenshots",
    "Mutter ScreenCast through PipeWire (GStreamer)",
    "none: any client of the session bus",
    f"sudo apt-get install {cast.PACKAGES}",
)
SHELL_SCREENSHOT = Route(
    "screenshots",
    f"GNOME Shell Screenshot (D-Bus; faster with {cast.PACKAGES})",
    "GNOME Shell in unsafe mode",
    UNSAFE_MODE_FIX,
)
SHELL_EVAL = Route("windows", "GNOME Shell Eval (unsafe mode)", "GNOME Shell in unsafe mode",
                   UNSAFE_MODE_FIX)  # fmt: skip
ROUTES = (INPUT, SCREEN_CAST, SHELL_SCREENSHOT, SHELL_EVAL)


def open_gnome(env: Mapping[str, str]) -> DisplayServer:
    address = session_bus_address(env, "GNOME")
    with Connection.open(env) as wayland:
        size = bind_output(wayland).logical_size
    bus = SyncBus(address)
    with opening_on_bus(bus, ShellRefused, SHELL_EVAL.fix) as opened:
        shell = Shell(bus)
        windows = ShellWindows(shell)
        windows.list_windows()  # refused outside unsafe mode: say so now
        pointer = MutterInput(bus, env, size, lambda: pointer_position(shell))
        opened.callback(pointer.close)
        windows.on_activated = pointer.wake
        screen: CastScreen | ShellScreen
        if cast.available():
            screen, shots = CastScreen(pointer.node, env, size), SCREEN_CAST
        else:  # GNOME Shell's own, ~100 ms a PNG, where GStreamer's PipeWire source is not
            screen = ShellScreen(shell, size, env.get("XDG_RUNTIME_DIR", ""))
            shots = SHELL_SCREENSHOT
        # The stage's own paints, else the cast's frames (later, and the same changes).
        drawn = shell_paints(shell) or (screen.drawn if isinstance(screen, CastScreen) else None)
    routes = taken(INPUT, shots, SHELL_EVAL)
    return DisplayServer(
        "gnome",
        pointer,
        screen,
        windows,
        lost=(BusGone, WaylandGone),
        shared=(bus,),
        routes=routes,
        drawn=drawn,
    )


class GnomeShell(Compositor):
    """GNOME Shell 43+ headless on a virtual monitor, in unsafe mode (its Eval gives the
    windows' positions, its Screenshot serves other programs). It needs a system bus
    (without one it exits at start: a private bus stands in for it), and Mutter's remote
    desktop needs PipeWire (and WirePlumber) for its screen cast."""

    def programs(self) -> list[str]:
        return ["gnome-shell", "pipewire", "wireplumber"]

    def start(
        self, spawner: Spawner, base: Mapping[str, str], runtime_dir: Path, size: tuple[int, int]
    ) -> Started:
        width, height = size
        system_bus = spawner.spawn_reading(
            "dbus-daemon",
            [
                "dbus-daemon",
                "--session",
                "--nofork",
                f"--address=unix:path={runtime_dir}/system_bus",
            ],
            "--print-address=",
            compositor_env(base),
        )
        env = compositor_env(base, DBUS_SYSTEM_BUS_ADDRESS=system_bus)
        spawner.spawn("pipewire", ["pipewire"], env)
        spawner.spawn("wireplumber", ["wireplumber"], env)
        shell = [
            *("gnome-shell", "--headless", "--unsafe-mode"),
            *("--virtual-monitor", f"{width}x{height}", "--wayland", "--no-x11"),
            *("--wayland-display", "wayland-0"),
        ]
        spawner.spawn(
            "gnome-shell",
            shell,
            {
                **env,
                "LIBGL_ALWAYS_SOFTWARE": "1",
                "XDG_SESSION_TYPE": "wayland",
                "XDG_CURRENT_DESKTOP": "GNOME",
                "GSETTINGS_BACKEND": "memory",
            },
        )
        socket = wait_for_socket(runtime_dir, READY_WAIT)
        return Started(socket, {"DBUS_SYSTEM_BUS_ADDRESS": system_bus})

    def ready(self, env: Mapping[str, str], timeout: float) -> dict[str, str]:
        """Once the Shell's D-Bus services are up: prepared (display.gnome.shell)."""
        bus = SyncBus(env["DBUS_SESSION_BUS_ADDRESS"], timeout)
        try:
            deadline = time.monotonic() + timeout
            wanted = ("org.gnome.Shell.Screenshot", "org.gnome.Mutter.RemoteDesktop")
            while not all(bus.has_name(name) for name in wanted):
                if time.monotonic() > deadline:
                    raise CompositorUnavailable(
                        f"GNOME Shell's D-Bus services did not appear within {timeout:g} s"
                    )
                time.sleep(0.05)
            prepare_shell(Shell(bus), timeout)
        finally:
            bus.close()
        return {}


READY_WAIT = 15.0  # seconds for GNOME Shell's Wayland socket

GNOME = Backend(
    kind="gnome",
    family="gnome",
    wayland=True,
    desktop_names=("gnome", "gnome-classic", "ubuntu", "pop"),
    marks=(),
    offers=frozenset({"gtk_shell1"}),
    routes=ROUTES,
    open=open_gnome,
    compositor=GnomeShell(packages="gnome-shell pipewire wireplumber", server="gnome-shell"),
    current_desktop="GNOME",
    settings=(
        (
            "org.gnome.desktop.interface",
            "toolkit-accessibility",
            "true",
            "GNOME's toolkit-accessibility is off",
        ),
    ),
)
