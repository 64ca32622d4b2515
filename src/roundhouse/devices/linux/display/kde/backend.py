"""KDE: KWin's fake input on a Wayland connection, its ScreenShot2 and its scripts (the
windows) on one session-bus connection; a virtual desktop is KWin on a virtual output."""

from __future__ import annotations

import shutil
import time
from collections.abc import Mapping
from pathlib import Path

from roundhouse.devices.linux.display.backend import Backend, Route, taken
from roundhouse.devices.linux.display.base import DisplayServer, DisplayUnavailable, RouteRefused
from roundhouse.devices.linux.display.compositor import (
    Compositor,
    CompositorUnavailable,
    Spawner,
    Started,
    compositor_env,
    copies_folder,
    runnable,
    wait_for_socket,
)
from roundhouse.devices.linux.display.kde.damage import KWinDamage
from roundhouse.devices.linux.display.kde.fakeinput import FakeInput
from roundhouse.devices.linux.display.kde.kwin import (
    KWinRefused,
    KWinScreen,
    KWinScripts,
    KWinWindows,
)
from roundhouse.devices.linux.display.wayland.dbus import (
    BusGone,
    DBusCallError,
    SyncBus,
    opening_on_bus,
    session_bus_address,
)
from roundhouse.devices.linux.display.wayland.wire import WaylandGone

DESKTOP_FILE_FIX = (
    "add ~/.local/share/applications/roundhouse.desktop with Exec=<this Python> and "
    "X-KDE-Wayland-Interfaces=org_kde_kwin_fake_input, then log in again"
)
TRUSTED = (
    "KWin trusts a program with it when its desktop file lists it "
    "(X-KDE-Wayland-Interfaces=org_kde_kwin_fake_input, "
    "X-KDE-DBUS-Restricted-Interfaces=org.kde.KWin.ScreenShot2)"
)
INPUT = Route("input", "org_kde_kwin_fake_input (Wayland)", TRUSTED, DESKTOP_FILE_FIX)
SCREENSHOT = Route("screenshots", "KWin ScreenShot2 (D-Bus)", TRUSTED, DESKTOP_FILE_FIX)
SCRIPTING = Route(
    "windows",
    "KWin scripting (D-Bus)",
    "none: KWin's scripting is open to the session's clients",
    "run KWin 5.27 or later with its scripting (org.kde.kwin.Scripting)",
)
ROUTES = (INPUT, SCREENSHOT, SCRIPTING)


def open_kde(env: Mapping[str, str]) -> DisplayServer:
    bus = SyncBus(session_bus_address(env, "KWin"), unix_fds=True)
    with opening_on_bus(bus, KWinRefused, SCRIPTING.fix):
        if not bus.has_name("org.kde.KWin"):
            raise RouteRefused("no KWin on this session's bus (org.kde.KWin)", SCRIPTING.fix)
        scripts = KWinScripts(bus)
        windows = KWinWindows(scripts)
        windows.list_windows()  # scripting refused or broken: say so now
        try:
            pointer = FakeInput(env)
        except DisplayUnavailable as error:  # KWin hides it from a program it does not trust
            raise RouteRefused(str(error), INPUT.fix) from None
        screen = KWinScreen(bus, windows, pointer.output.logical_size)
        damage = KWinDamage(scripts)
        drawn = damage.start()
    routes = taken(*ROUTES)
    return DisplayServer(
        "kde",
        pointer,
        screen,
        windows,
        lost=(BusGone, WaylandGone),
        shared=(damage, bus),  # the script unloaded while the bus is there
        routes=routes,
        drawn=drawn,
    )


class KWin(Compositor):
    """KWin 5.27+ on a virtual output, trusting its clients (fake input, screenshots and
    window management are otherwise for programs a desktop file vouches for)."""

    def programs(self) -> list[str]:
        return ["kwin_wayland"]

    def start(
        self, spawner: Spawner, base: Mapping[str, str], runtime_dir: Path, size: tuple[int, int]
    ) -> Started:
        width, height = size
        argv = [
            runnable(shutil.which("kwin_wayland") or "kwin_wayland", copies_folder()),
            *("--virtual", "--width", str(width), "--height", str(height)),
            *("--socket", "wayland-0"),
            *("--no-lockscreen", "--no-global-shortcuts", "--no-kactivities"),
        ]
        env = compositor_env(
            base,
            KWIN_WAYLAND_NO_PERMISSION_CHECKS="1",
            KWIN_SCREENSHOT_NO_PERMISSION_CHECKS="1",
            # Not KWIN_COMPOSE=Q: KWin's screenshots come from its OpenGL compositor
            # (Mesa's software renderer here), and with QPainter it offers none.
            XDG_SESSION_TYPE="wayland",
            XDG_CURRENT_DESKTOP="KDE",
        )
        spawner.spawn("kwin_wayland", argv, env)
        return Started(wait_for_socket(runtime_dir, READY_WAIT))

    def ready(self, env: Mapping[str, str], timeout: float) -> dict[str, str]:
        bus = SyncBus(env["DBUS_SESSION_BUS_ADDRESS"], timeout)
        try:
            deadline = time.monotonic() + timeout
            # Not ScreenShot2: KWin offers it only with its OpenGL compositor, which KWin 6
            # runs only on a GPU's render node (Debian 13's KWin composites with QPainter
            # here); the screen then fails with that reason, the rest works.
            # KWin owns its name before it serves its scripting: wait for what we call.
            while not _kwin_scripting(bus):
                if time.monotonic() > deadline:
                    raise CompositorUnavailable(
                        f"KWin's scripting did not appear on D-Bus within {timeout:g} s"
                    )
                time.sleep(0.05)
        finally:
            bus.close()
        return {}


READY_WAIT = 15.0  # seconds for KWin's Wayland socket


def _kwin_scripting(bus: SyncBus) -> bool:
    try:
        bus.call(
            "org.kde.KWin", "/Scripting", "org.kde.kwin.Scripting", "isScriptLoaded", "s", ["-"]
        )
    except DBusCallError:  # no such name or object yet
        return False
    return True


KDE = Backend(
    kind="kde",
    family="kde",
    wayland=True,
    desktop_names=("kde", "plasma"),
    marks=(),
    offers=frozenset({"org_kde_kwin_fake_input", "org_kde_plasma_shell"}),
    routes=ROUTES,
    open=open_kde,
    compositor=KWin(packages="kwin-wayland", server="kwin_wayland"),
    current_desktop="KDE",
)
