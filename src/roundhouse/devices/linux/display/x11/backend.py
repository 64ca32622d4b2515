"""X11: XTest input, the screen through mss and XComposite, the windows through EWMH, each
on its own connection to the display; a virtual desktop is Xvfb with openbox."""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Mapping

from Xlib import X  # type: ignore[import-untyped, unused-ignore]
from Xlib import display as xdisplay  # type: ignore[import-untyped, unused-ignore]
from Xlib import error as xerror  # type: ignore[import-untyped, unused-ignore]

from roundhouse.core.polling import until
from roundhouse.devices.contract import Rect
from roundhouse.devices.linux.display import compositor
from roundhouse.devices.linux.display.backend import Backend, Route, taken
from roundhouse.devices.linux.display.base import DisplayServer, RouteRefused
from roundhouse.devices.linux.display.compositor import (
    SECOND_MONITOR,
    Compositor,
    CompositorUnavailable,
    Headless,
    Spawner,
    Started,
)
from roundhouse.devices.linux.display.x11 import placement, shortcuts
from roundhouse.devices.linux.display.x11.damage import DamageWatch
from roundhouse.devices.linux.display.x11.input import XInput
from roundhouse.devices.linux.display.x11.monitors import set_monitors
from roundhouse.devices.linux.display.x11.person_watch import XPersonWatch
from roundhouse.devices.linux.display.x11.screen import Screen
from roundhouse.devices.linux.display.x11.windows import WindowManager

# A display that died closed its connections: calls raise these.
LOST = (xerror.ConnectionClosedError, xerror.DisplayConnectionError)
NO_WINDOW_MANAGER = "start a window manager (openbox) on the display, or use --desktop virtual"
ROUTES = (
    Route("input", "XTest", "none: any client of the X server may use XTest"),
    Route("screenshots", "MIT-SHM (mss) and XComposite", "none: any X client may read it"),
    Route("windows", "EWMH", "a window manager that keeps _NET_CLIENT_LIST", NO_WINDOW_MANAGER),
)


def open_x11(env: Mapping[str, str], *, virtual: bool = False) -> DisplayServer:
    """Connect to the X display of `env` (four connections, the damage watch's among them;
    all closed if one fails), the same way on any desktop, `virtual` or not."""
    display = env.get("DISPLAY", "")
    try:
        with contextlib.ExitStack() as opened:
            screen = opened.enter_context(Screen(display))
            xinput = opened.enter_context(XInput(display))
            windows = opened.enter_context(WindowManager(display))
            watch = opened.enter_context(XPersonWatch(display))
            damage = DamageWatch.start(display)
            opened.pop_all()
    except (xerror.DisplayError, *LOST) as error:
        raise RouteRefused(f"cannot open display {display!r}: {error}") from None
    routes = taken(*ROUTES)
    return DisplayServer(
        "x11",
        xinput,
        screen,
        windows,
        lost=LOST,
        routes=routes,
        watch=watch,
        shared=(damage,) if damage is not None else (),
        drawn=damage.changes if damage is not None else None,
    )


class Xvfb(Compositor):
    """Xvfb (it picks a free display number itself through -displayfd, so several run side
    by side) and openbox, without which windows can be neither listed nor focused."""

    def programs(self) -> list[str]:
        return ["Xvfb", "openbox"]

    def start(self, spawner: Spawner, at: Headless) -> Started:
        monitors = monitor_rects(at)
        width = max(rect.right for rect in monitors)
        height = max(rect.bottom for rect in monitors)
        argv = ["Xvfb", "-screen", "0", f"{width}x{height}x24", "-nolisten", "tcp", "-noreset"]
        number = spawner.spawn_reading("Xvfb", argv, "-displayfd", at.base)
        display = f":{number}"
        # Before the window manager starts: it reads the monitors and the keymap once.
        if len(monitors) > 1:
            set_monitors(display, monitors)
        if at.layout:
            set_layout(display, at, at.base)
        spawner.spawn("openbox", ["openbox", "--sm-disable"], {**at.base, "DISPLAY": display})
        return Started(display, size=(width, height))

    def ready(self, env: Mapping[str, str], timeout: float) -> dict[str, str]:
        display = env["DISPLAY"]
        _wait_for_window_manager(display, timeout)
        _paint_background(display)
        return {}


def monitor_rects(at: Headless) -> list[Rect]:
    """Where a virtual X desktop's monitors are: the first at the top left, the second (X11
    scales no monitor of its own) at its full size to its right."""
    width, height = at.size
    rects = [Rect(0, 0, width, height)]
    if at.monitors > 1:
        second_width, second_height = SECOND_MONITOR
        rects.append(Rect(width, 0, width + second_width, second_height))
    return rects


def set_layout(display: str, at: Headless, env: Mapping[str, str]) -> None:
    """Give the X server the keyboard layout (setxkbmap compiles it with xkbcomp)."""
    layout, variant = at.xkb
    argv = ["setxkbmap", "-display", display, "-layout", layout, "-variant", variant]
    try:
        done = subprocess.run(
            argv, env=dict(env), capture_output=True, text=True, timeout=LAYOUT_TIMEOUT
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise CompositorUnavailable(
            f"setxkbmap could not set the layout {at.layout!r}: {error} (it is in x11-xkb-utils)"
        ) from None
    if done.returncode != 0:
        raise CompositorUnavailable(
            f"setxkbmap refused the layout {at.layout!r}: {done.stderr.strip()}"
        )


LAYOUT_TIMEOUT = 10.0  # seconds for setxkbmap


def _wait_for_window_manager(display: str, timeout: float) -> None:
    """openbox is ready once it has set _NET_SUPPORTING_WM_CHECK and _NET_CLIENT_LIST on the
    root window (under load the second comes a moment after the first, and window listing
    needs it)."""
    connection = xdisplay.Display(display)
    try:
        root = connection.screen().root
        atoms = [
            connection.intern_atom(name)
            for name in ("_NET_SUPPORTING_WM_CHECK", "_NET_CLIENT_LIST")
        ]
        until(
            lambda: all(root.get_full_property(atom, X.AnyPropertyType) for atom in atoms),
            timeout,
            "the window manager did not start",
            every=0.01,
            error=CompositorUnavailable,
        )
    finally:
        connection.close()


def _paint_background(display: str) -> None:
    """Give the root window the plain BACKGROUND (Xvfb's is black, openbox paints none)."""
    connection = xdisplay.Display(display)
    try:
        screen = connection.screen()
        red, green, blue = (value * 257 for value in compositor.BACKGROUND)  # X colours are 16-bit
        pixel = screen.default_colormap.alloc_color(red, green, blue).pixel
        screen.root.change_attributes(background_pixel=pixel)
        screen.root.clear_area(0, 0, 0, 0)  # 0 x 0: all of it
        connection.sync()
    finally:
        connection.close()


def screen_size(display: str) -> tuple[int, int]:
    """The size of the X display's screen; RouteRefused when it cannot be opened."""
    try:
        connection = xdisplay.Display(display)
    except (xerror.DisplayError, OSError) as error:
        raise RouteRefused(f"cannot open display {display}: {error}") from None
    try:
        screen = connection.screen()
        return int(screen.width_in_pixels), int(screen.height_in_pixels)
    finally:
        connection.close()


X11 = Backend(
    kind="x11",
    title="X11",
    family="x11",
    wayland=False,
    desktop_names=(),
    marks=("DISPLAY",),
    offers=frozenset(),
    routes=ROUTES,
    open=open_x11,
    compositor=Xvfb(
        packages="xvfb xauth x11-utils x11-xkb-utils dbus dbus-x11 at-spi2-core "
        "libatk-adaptor libatk-bridge2.0-0 openbox",
        server="Xvfb",
    ),
    runs_x11_programs=True,
    person_watch="XInput2 raw events; a locker's full-screen window and keyboard grab",
    bind_keys=shortcuts.bind_keys,
    when_shown=placement.when_shown,
)
