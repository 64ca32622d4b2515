"""labwc: the wlroots routes for input and the screen, the windows through
wlr-foreign-toplevel-management (labwc has no IPC like sway's); a virtual desktop is labwc
headless, every window maximized (toplevels.py says why)."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
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
    compositor_env,
    wait_for_socket,
)
from roundhouse.devices.linux.display.labwc.toplevels import MANAGER, ForeignToplevels
from roundhouse.devices.linux.display.wayland.globals import bind_output
from roundhouse.devices.linux.display.wayland.wire import Connection, WaylandGone
from roundhouse.devices.linux.display.wlroots.backend import (
    HEADLESS_WLROOTS,
    INPUT,
    READY_WAIT,
    SCREENCOPY,
    as_nobody,
)
from roundhouse.devices.linux.display.wlroots.damage import DamageWatch
from roundhouse.devices.linux.display.wlroots.input import WlrootsInput
from roundhouse.devices.linux.display.wlroots.screen import Screencopy

FOREIGN_TOPLEVEL = Route(
    "windows",
    "wlr-foreign-toplevel-management (Wayland; windows kept maximized)",
    "none: wlroots offers it to every client of the compositor",
    "use a compositor that offers zwlr_foreign_toplevel_manager_v1 (labwc, Hyprland, river)",
)
ROUTES = (INPUT, SCREENCOPY, FOREIGN_TOPLEVEL)
RANDR_TIMEOUT = 5.0  # seconds for wlr-randr to set the output's size

# The virtual session's labwc: clients draw their own decorations (so a maximized window's
# content is the whole output), and every window opens maximized.
RC_XML = """<?xml version="1.0"?>
<labwc_config>
  <core><decoration>client</decoration></core>
  <windowRules>
    <windowRule identifier="*"><action name="Maximize"/></windowRule>
  </windowRules>
</labwc_config>
"""


def open_labwc(env: Mapping[str, str]) -> DisplayServer:
    """Connect to the compositor of `env` (three connections; all closed if one fails)."""
    with contextlib.ExitStack() as opened:
        windows = opened.enter_context(ForeignToplevels(env))
        screen = opened.enter_context(Screencopy(env))
        pointer = opened.enter_context(WlrootsInput(env))
        damage = DamageWatch.start(env)
        opened.pop_all()
    routes = taken(*ROUTES)
    shared = (damage,) if damage is not None else ()
    drawn = damage.changes if damage is not None else None
    return DisplayServer(
        "labwc",
        pointer,
        screen,
        windows,
        lost=(WaylandGone,),
        routes=routes,
        shared=shared,
        drawn=drawn,
    )


class Labwc(Compositor):
    """labwc 0.8+ on the headless wlroots backend with the pixman renderer, as nobody when
    we are root (wlroots compositors refuse root). Its one output is given the desktop's
    size with wlr-randr (labwc has no output settings of its own), and swaybg paints it."""

    def programs(self) -> list[str]:
        return ["labwc", "wlr-randr"] + (["setpriv"] if os.geteuid() == 0 else [])

    def start(
        self, spawner: Spawner, base: Mapping[str, str], runtime_dir: Path, size: tuple[int, int]
    ) -> Started:
        config = runtime_dir / "labwc"
        config.mkdir()
        (config / "rc.xml").write_text(RC_XML)
        if shutil.which("swaybg"):
            red, green, blue = BACKGROUND
            (config / "autostart").write_text(f"swaybg -c '#{red:02x}{green:02x}{blue:02x}' &\n")
        argv = ["labwc", "--config-dir", str(config)]
        if os.geteuid() == 0:
            for path in (runtime_dir, config, *config.iterdir()):
                os.chown(path, NOBODY, NOBODY)
            argv = as_nobody(argv)
        env = compositor_env(base, HOME=str(runtime_dir), **HEADLESS_WLROOTS)
        spawner.spawn("labwc", argv, env)
        display = wait_for_socket(runtime_dir, READY_WAIT)
        _set_size({**env, "WAYLAND_DISPLAY": display}, size)
        return Started(display)

    def ready(self, env: Mapping[str, str], timeout: float) -> dict[str, str]:
        """Once it lists windows to a foreign-toplevel client."""
        deadline = time.monotonic() + timeout
        while True:
            with Connection.open(env) as wayland:
                if wayland.find(MANAGER) is not None:
                    return {}
            if time.monotonic() > deadline:
                raise CompositorUnavailable(f"labwc offered no {MANAGER} within {timeout:g} s")
            time.sleep(0.05)


def _set_size(env: Mapping[str, str], size: tuple[int, int]) -> None:
    """Give the headless output `size` (wlroots makes it 1280x720), and wait until it has it."""
    with Connection.open(env) as wayland:
        output = bind_output(wayland)
    if output.logical_size == size:
        return
    width, height = size
    command = ["wlr-randr", "--output", output.name, "--custom-mode", f"{width}x{height}"]
    try:
        done = subprocess.run(
            command, env=dict(env), capture_output=True, text=True, timeout=RANDR_TIMEOUT
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise CompositorUnavailable(f"wlr-randr could not size the output: {error}") from None
    if done.returncode != 0:
        raise CompositorUnavailable(f"wlr-randr refused {width}x{height}: {done.stderr.strip()}")
    deadline = time.monotonic() + RANDR_TIMEOUT
    while time.monotonic() < deadline:
        with Connection.open(env) as wayland:
            if bind_output(wayland).logical_size == size:
                return
        time.sleep(0.05)
    raise CompositorUnavailable(f"labwc's output did not become {width}x{height}")


LABWC = Backend(
    kind="labwc",
    family="wlroots",
    wayland=True,
    desktop_names=("labwc",),
    marks=("LABWC_PID",),
    offers=frozenset({"zwlr_foreign_toplevel_manager_v1"}),
    routes=ROUTES,
    open=open_labwc,
    compositor=Labwc(packages="labwc wlr-randr swaybg", server="labwc"),
    current_desktop="labwc:wlroots",
)
