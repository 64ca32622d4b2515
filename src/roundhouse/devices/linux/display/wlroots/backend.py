"""sway: wlroots' virtual pointer and keyboard, its screencopy, and sway's IPC for the
windows; a virtual desktop is sway headless."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Mapping
from pathlib import Path

from roundhouse.devices.linux.display.backend import Backend, Route, taken
from roundhouse.devices.linux.display.base import DisplayServer
from roundhouse.devices.linux.display.compositor import (
    BACKGROUND,
    NOBODY,
    Compositor,
    CompositorUnavailable,
    Spawner,
    Started,
    answers,
    compositor_env,
    wait_for_socket,
)
from roundhouse.devices.linux.display.wayland.wire import WaylandGone
from roundhouse.devices.linux.display.wlroots.damage import DamageWatch
from roundhouse.devices.linux.display.wlroots.input import WlrootsInput
from roundhouse.devices.linux.display.wlroots.screen import Screencopy
from roundhouse.devices.linux.display.wlroots.sway import SwayGone, SwayWindows

OPEN_TO_EVERY_CLIENT = "none: wlroots offers it to every client of the compositor"
# The routes every wlroots compositor offers (labwc's backend takes them too).
INPUT = Route(
    "input",
    "zwlr_virtual_pointer_v1 + zwp_virtual_keyboard_v1 (Wayland)",
    OPEN_TO_EVERY_CLIENT,
    "use a wlroots compositor that offers virtual input (sway, labwc, Hyprland, river)",
)
SCREENCOPY = Route(
    "screenshots",
    "zwlr_screencopy_manager_v1 (Wayland)",
    OPEN_TO_EVERY_CLIENT,
    "use a wlroots compositor that offers screencopy (sway, labwc, Hyprland, river)",
)
ROUTES = (
    INPUT,
    SCREENCOPY,
    Route("windows", "sway IPC", "none: sway's IPC socket is the session user's", "run sway"),
)


def open_sway(env: Mapping[str, str]) -> DisplayServer:
    """Connect to the compositor of `env` (three connections; all closed if one fails)."""
    with contextlib.ExitStack() as opened:
        windows = opened.enter_context(SwayWindows(env))
        screen = opened.enter_context(Screencopy(env))
        pointer = opened.enter_context(WlrootsInput(env))
        damage = DamageWatch.start(env)
        opened.pop_all()
    routes = taken(*ROUTES)
    shared = (damage,) if damage is not None else ()
    drawn = damage.changes if damage is not None else None
    return DisplayServer(
        "sway",
        pointer,
        screen,
        windows,
        lost=(WaylandGone, SwayGone),
        routes=routes,
        shared=shared,
        drawn=drawn,
    )


class Sway(Compositor):
    """sway 1.7+: the headless wlroots backend with the pixman renderer. sway will not run
    as root, so as root it runs as nobody, in a runtime folder given to nobody (root's
    clients may still connect: root passes any permission)."""

    def programs(self) -> list[str]:
        return ["sway"] + (["setpriv"] if os.geteuid() == 0 else [])

    def start(
        self, spawner: Spawner, base: Mapping[str, str], runtime_dir: Path, size: tuple[int, int]
    ) -> Started:
        width, height = size
        config = runtime_dir / "sway.conf"
        red, green, blue = BACKGROUND
        # No XWayland: X11-only programs then fail to start, rather than land on a server
        # nothing here can see.
        config.write_text(
            f"output HEADLESS-1 resolution {width}x{height}\n"
            f"output * bg #{red:02x}{green:02x}{blue:02x} solid_color\n"  # swaybg paints it
            "xwayland disable\n"
        )
        argv = ["sway", "-c", str(config)]
        if os.geteuid() == 0:
            os.chown(runtime_dir, NOBODY, NOBODY)
            os.chown(config, NOBODY, NOBODY)
            argv = as_nobody(argv)
        env = compositor_env(base, HOME=str(runtime_dir), **HEADLESS_WLROOTS)
        spawner.spawn("sway", argv, env)
        return Started(wait_for_socket(runtime_dir, READY_WAIT))

    def ready(self, env: Mapping[str, str], timeout: float) -> dict[str, str]:
        runtime = Path(env["XDG_RUNTIME_DIR"])
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for path in runtime.glob("sway-ipc.*.sock"):
                if answers(path):
                    return {"SWAYSOCK": str(path)}
            time.sleep(0.02)
        raise CompositorUnavailable(f"sway's IPC socket did not appear within {timeout:g} s")


READY_WAIT = 15.0  # seconds for a headless wlroots compositor's socket
# A wlroots compositor drawing into memory: no GPU, no input devices, one output.
HEADLESS_WLROOTS = {
    "WLR_BACKENDS": "headless",
    "WLR_LIBINPUT_NO_DEVICES": "1",
    "WLR_RENDERER": "pixman",
    "WLR_HEADLESS_OUTPUTS": "1",
}


def as_nobody(argv: list[str]) -> list[str]:
    """The command run as nobody (wlroots compositors refuse to run as root)."""
    return ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", *argv]


SWAY = Backend(
    kind="sway",
    family="wlroots",
    wayland=True,
    desktop_names=("sway",),
    marks=("SWAYSOCK",),
    offers=frozenset(),
    routes=ROUTES,
    open=open_sway,
    compositor=Sway(packages="sway", server="sway"),
    current_desktop="sway",
    exports=("SWAYSOCK",),
)
