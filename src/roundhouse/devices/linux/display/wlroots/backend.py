"""sway: wlroots' virtual pointer and keyboard, its screencopy, and sway's IPC for the
windows; a virtual desktop is sway headless."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Mapping
from pathlib import Path

from roundhouse.core.polling import until
from roundhouse.devices.linux.display import compositor
from roundhouse.devices.linux.display.backend import Backend, Route, taken
from roundhouse.devices.linux.display.base import DisplayServer, Windows
from roundhouse.devices.linux.display.compositor import Compositor, Headless, Spawner, Started
from roundhouse.devices.linux.display.wayland.wire import WaylandGone
from roundhouse.devices.linux.display.wlroots import shortcuts
from roundhouse.devices.linux.display.wlroots.damage import DamageWatch
from roundhouse.devices.linux.display.wlroots.input import WlrootsInput
from roundhouse.devices.linux.display.wlroots.person_watch import idle_watch
from roundhouse.devices.linux.display.wlroots.screen import Screencopy
from roundhouse.devices.linux.display.wlroots.sway import (
    SwayGone,
    SwayIpc,
    SwayWindows,
    sway_socket,
)

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


def open_sway(env: Mapping[str, str], *, virtual: bool = False) -> DisplayServer:
    """Connect to the compositor of `env` (three connections; all closed if one fails)."""
    return open_wlroots(env, "sway", SwayWindows, ROUTES, lost=(SwayGone,), virtual=virtual)


def open_wlroots(
    env: Mapping[str, str],
    kind: str,
    windows_of: Callable[[Mapping[str, str]], Windows],
    routes: tuple[Route, ...],
    lost: tuple[type[BaseException], ...] = (),
    virtual: bool = False,
) -> DisplayServer:
    """A wlroots compositor's display server: its windows as `windows_of` lists them, the
    virtual pointer and keyboard, screencopy (three connections; all closed if one fails).
    `virtual`: a desktop roundhouse started; only there does its person watch take the
    session lock to find a locker (person.py)."""
    with contextlib.ExitStack() as opened:
        windows = windows_of(env)
        opened.callback(windows.close)
        screen = opened.enter_context(Screencopy(env))
        pointer = opened.enter_context(WlrootsInput(env))
        watch = idle_watch(env, lambda: windows.active_window() is not None, virtual)
        damage = DamageWatch.start(env)
        opened.pop_all()
    server = DisplayServer(
        kind,
        pointer,
        screen,
        windows,
        lost=(WaylandGone, *lost),
        routes=taken(*routes),
        shared=(damage,) if damage is not None else (),
        drawn=damage.changes if damage is not None else None,
    )
    if watch is not None:
        server.watch = watch
    return server


class Sway(Compositor):
    """sway 1.7+: the headless wlroots backend with the pixman renderer. sway will not run
    as root, so as root it runs as nobody, in a runtime folder given to nobody (root's
    clients may still connect: root passes any permission)."""

    def programs(self) -> list[str]:
        return ["sway"] + (["setpriv"] if os.geteuid() == 0 else [])

    def start(self, spawner: Spawner, at: Headless) -> Started:
        config = at.runtime_dir / "sway.conf"
        config.write_text(sway_config(at))
        argv = ["sway", "-c", str(config)]
        if os.geteuid() == 0:
            os.chown(at.runtime_dir, compositor.NOBODY, compositor.NOBODY)
            os.chown(config, compositor.NOBODY, compositor.NOBODY)
            argv = as_nobody(argv)
        outputs = {"WLR_HEADLESS_OUTPUTS": str(at.monitors)}
        env = compositor.compositor_env(
            at.base, HOME=str(at.runtime_dir), **{**HEADLESS_WLROOTS, **outputs}
        )
        spawner.spawn("sway", argv, env)
        return Started(
            compositor.wait_for_socket(at.runtime_dir, READY_WAIT), size=desktop_size(at)
        )

    def ready(self, env: Mapping[str, str], timeout: float) -> dict[str, str]:
        runtime = Path(env["XDG_RUNTIME_DIR"])

        def listening() -> str | None:
            found = (p for p in runtime.glob("sway-ipc.*.sock") if compositor.answers(p))
            return next((str(path) for path in found), None)

        return {
            "SWAYSOCK": until(
                listening,
                timeout,
                "sway's IPC socket did not appear",
                error=compositor.CompositorUnavailable,
            )
        }


def sway_config(at: Headless) -> str:
    """sway's settings for a virtual desktop: its outputs (a second one to the right of the
    first, at scale 1.5), their background, and the layout of its keyboards. No XWayland:
    X11-only programs then fail to start, rather than land on a server nothing here can
    see."""
    width, height = at.size
    red, green, blue = compositor.BACKGROUND
    lines = [f"output HEADLESS-1 resolution {width}x{height} position 0 0 scale 1"]
    if at.monitors > 1:
        second_width, second_height = compositor.SECOND_MONITOR
        lines.append(
            f"output HEADLESS-2 resolution {second_width}x{second_height} "
            f"position {width} 0 scale {compositor.SECOND_SCALE:g}"
        )
    lines.append(f"output * bg #{red:02x}{green:02x}{blue:02x} solid_color")  # swaybg paints it
    if at.layout:
        layout, variant = at.xkb
        lines.append(f"input type:keyboard xkb_layout {layout}")
        if variant:
            lines.append(f"input type:keyboard xkb_variant {variant}")
    lines.append("xwayland disable")
    return "\n".join(lines) + "\n"


def desktop_size(at: Headless) -> tuple[int, int]:
    """The desktop's size in logical pixels: the second monitor's 1920x1200 at 1.5 is
    1280x800 of them."""
    width, height = at.size
    if at.monitors == 1:
        return width, height
    scale = compositor.SECOND_SCALE
    second_width, second_height = (round(side / scale) for side in compositor.SECOND_MONITOR)
    return width + second_width, max(height, second_height)


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
    return [
        "setpriv",
        f"--reuid={compositor.NOBODY}",
        f"--regid={compositor.NOBODY}",
        "--clear-groups",
        *argv,
    ]


def float_windows(env: Mapping[str, str]) -> None:
    """Every window at its own size, floating, as a stacking window manager places it
    (sway tiles them over the screen otherwise)."""
    ipc = SwayIpc(sway_socket(env))
    try:
        ipc.command('for_window [app_id=".*"] floating enable')
    finally:
        ipc.close()


SWAY = Backend(
    kind="sway",
    title="sway",
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
    person_watch=(
        "ext-idle-notify-v1 or org_kde_kwin_idle (Wayland); a locker's process or the session lock"
    ),
    bind_keys=shortcuts.bind_keys,
    float_windows=float_windows,
)
