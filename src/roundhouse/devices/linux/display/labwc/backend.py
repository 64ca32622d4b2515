"""labwc: the wlroots routes for input and the screen, the windows through
wlr-foreign-toplevel-management (labwc has no IPC like sway's); a virtual desktop is labwc
headless, every window maximized (toplevels.py says why)."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping

from roundhouse.core.polling import until
from roundhouse.devices.linux.display import compositor
from roundhouse.devices.linux.display.backend import Backend, Route
from roundhouse.devices.linux.display.base import DisplayServer
from roundhouse.devices.linux.display.compositor import Compositor, Headless, Spawner, Started
from roundhouse.devices.linux.display.labwc.toplevels import MANAGER, ForeignToplevels
from roundhouse.devices.linux.display.wayland.globals import bind_output
from roundhouse.devices.linux.display.wayland.wire import Connection
from roundhouse.devices.linux.display.wlroots.backend import (
    HEADLESS_WLROOTS,
    INPUT,
    READY_WAIT,
    SCREENCOPY,
    as_nobody,
    open_wlroots,
)

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


def open_labwc(env: Mapping[str, str], *, virtual: bool = False) -> DisplayServer:
    """Connect to the compositor of `env` (three connections; all closed if one fails)."""
    return open_wlroots(env, "labwc", ForeignToplevels, ROUTES, virtual=virtual)


class Labwc(Compositor):
    """labwc 0.8+ on the headless wlroots backend with the pixman renderer, as nobody when
    we are root (wlroots compositors refuse root). Its one output is given the desktop's
    size with wlr-randr (labwc has no output settings of its own), and swaybg paints it."""

    def programs(self) -> list[str]:
        return ["labwc", "wlr-randr"] + (["setpriv"] if os.geteuid() == 0 else [])

    def start(self, spawner: Spawner, at: Headless) -> Started:
        at.refuse("labwc", layouts=True)  # its keys are our virtual keyboard's
        config = at.runtime_dir / "labwc"
        config.mkdir()
        (config / "rc.xml").write_text(RC_XML)
        if shutil.which("swaybg"):
            red, green, blue = compositor.BACKGROUND
            (config / "autostart").write_text(f"swaybg -c '#{red:02x}{green:02x}{blue:02x}' &\n")
        argv = ["labwc", "--config-dir", str(config)]
        if os.geteuid() == 0:
            for path in (at.runtime_dir, config, *config.iterdir()):
                os.chown(path, compositor.NOBODY, compositor.NOBODY)
            argv = as_nobody(argv)
        env = compositor.compositor_env(at.base, HOME=str(at.runtime_dir), **HEADLESS_WLROOTS)
        spawner.spawn("labwc", argv, env)
        display = compositor.wait_for_socket(at.runtime_dir, READY_WAIT)
        _set_size({**env, "WAYLAND_DISPLAY": display}, at.size)
        return Started(display)

    def ready(self, env: Mapping[str, str], timeout: float) -> dict[str, str]:
        """Once it lists windows to a foreign-toplevel client."""
        until(
            lambda: _offers(env, MANAGER),
            timeout,
            f"labwc offered no {MANAGER}",
            error=compositor.CompositorUnavailable,
        )
        return {}


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
        raise compositor.CompositorUnavailable(
            f"wlr-randr could not size the output: {error}"
        ) from None
    if done.returncode != 0:
        raise compositor.CompositorUnavailable(
            f"wlr-randr refused {width}x{height}: {done.stderr.strip()}"
        )
    until(
        lambda: _output_size(env) == size,
        RANDR_TIMEOUT,
        f"labwc's output did not become {width}x{height}",
        error=compositor.CompositorUnavailable,
    )


def _offers(env: Mapping[str, str], interface: str) -> bool:
    with Connection.open(env) as wayland:
        return wayland.find(interface) is not None


def _output_size(env: Mapping[str, str]) -> tuple[int, int]:
    with Connection.open(env) as wayland:
        return bind_output(wayland).logical_size


LABWC = Backend(
    kind="labwc",
    title="labwc",
    family="wlroots",
    wayland=True,
    desktop_names=("labwc",),
    marks=("LABWC_PID",),
    offers=frozenset({"zwlr_foreign_toplevel_manager_v1"}),
    routes=ROUTES,
    open=open_labwc,
    compositor=Labwc(packages="labwc wlr-randr swaybg", server="labwc"),
    current_desktop="labwc:wlroots",
    person_watch=(
        "ext-idle-notify-v1 or org_kde_kwin_idle (Wayland); a locker's process or the session lock"
    ),
)
