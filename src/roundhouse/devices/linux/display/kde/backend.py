"""KDE: KWin's fake input on a Wayland connection, its ScreenShot2 and its scripts (the
windows) on one session-bus connection; a virtual desktop is KWin on virtual outputs."""

from __future__ import annotations

import shutil
from collections.abc import Mapping

from roundhouse.core.polling import until
from roundhouse.devices.linux.display import compositor
from roundhouse.devices.linux.display.backend import Backend, Route, taken
from roundhouse.devices.linux.display.base import (
    DisplayServer,
    DisplayUnavailable,
    RefusedInput,
    RouteRefused,
)
from roundhouse.devices.linux.display.compositor import Compositor, Headless, Spawner, Started
from roundhouse.devices.linux.display.kde import vouch
from roundhouse.devices.linux.display.kde.damage import KWinDamage
from roundhouse.devices.linux.display.kde.fakeinput import FakeInput
from roundhouse.devices.linux.display.kde.kwin import (
    SETUP_FIX,
    KWinRefused,
    KWinScreen,
    KWinScripts,
    KWinWindows,
)
from roundhouse.devices.linux.display.kde.outputs import read_monitors, scale_outputs
from roundhouse.devices.linux.display.kde.person_watch import kwin_watch
from roundhouse.devices.linux.display.wayland.dbus import (
    BusGone,
    DBusCallError,
    SyncBus,
    opening_on_bus,
    session_bus_address,
)
from roundhouse.devices.linux.display.wayland.globals import bind_outputs, desktop_box
from roundhouse.devices.linux.display.wayland.wire import Connection, WaylandError, WaylandGone

TRUSTED = (
    "KWin trusts a program with it when its desktop file lists it "
    "(X-KDE-Wayland-Interfaces=org_kde_kwin_fake_input, "
    "X-KDE-DBUS-Restricted-Interfaces=org.kde.KWin.ScreenShot2)"
)
INPUT = Route("input", "org_kde_kwin_fake_input (Wayland)", TRUSTED, SETUP_FIX)
SCREENSHOT = Route("screenshots", "KWin ScreenShot2 (D-Bus)", TRUSTED, SETUP_FIX)
SCRIPTING = Route(
    "windows",
    "KWin scripting (D-Bus)",
    "none: KWin's scripting is open to the session's clients",
    "run KWin 5.27 or later with its scripting (org.kde.kwin.Scripting)",
)
ROUTES = (INPUT, SCREENSHOT, SCRIPTING)


def open_kde(env: Mapping[str, str], *, virtual: bool = False) -> DisplayServer:
    """KWin through its D-Bus interfaces, the same on any desktop, `virtual` or not."""
    bus = SyncBus(session_bus_address(env, "KWin"), unix_fds=True)
    with opening_on_bus(bus, KWinRefused, SCRIPTING.fix) as opened:
        if not bus.has_name("org.kde.KWin"):
            raise RouteRefused("no KWin on this session's bus (org.kde.KWin)", SCRIPTING.fix)
        scripts = KWinScripts(bus)
        windows = KWinWindows(scripts)
        windows.list_windows()  # scripting refused or broken: say so now
        pointer: FakeInput | RefusedInput
        missing: tuple[RouteRefused, ...] = ()
        try:
            pointer = FakeInput(env)
        except DisplayUnavailable as error:  # KWin hides it from a program it does not trust
            refusal = RouteRefused(str(error), INPUT.fix, "input")
            pointer, missing = RefusedInput(refusal), (refusal,)
        screen = KWinScreen(bus, windows, env)
        watch = kwin_watch(env, bus)
        if watch is not None:
            opened.callback(watch.close)
        damage = KWinDamage(scripts)
        drawn = damage.start()
    server = DisplayServer(
        "kde",
        pointer,
        screen,
        windows,
        lost=(BusGone, WaylandGone),
        shared=(damage, bus),  # the script unloaded while the bus is there
        routes=taken(*ROUTES),
        missing=missing,
        drawn=drawn,
    )
    if watch is not None:
        server.watch = watch
    return server


class KWin(Compositor):
    """KWin 5.27+ on virtual outputs, trusting its clients (fake input, screenshots and
    window management are otherwise for programs a desktop file vouches for)."""

    def programs(self) -> list[str]:
        return ["kwin_wayland"]

    def start(self, spawner: Spawner, at: Headless) -> Started:
        # Its keyboard layout: kxkbrc, as Plasma's is; its monitors: outputs of its own.
        at.refuse("kde", layouts=True, monitors=True)
        width, height = at.size
        argv = [
            compositor.runnable(
                shutil.which("kwin_wayland") or "kwin_wayland", compositor.copies_folder()
            ),
            *("--virtual", "--width", str(width), "--height", str(height)),
            *("--socket", "wayland-0"),
            # With its screen locker, as a person's KWin runs (what locks it is the person
            # watch's question: kde/person_watch.py), never locking by itself (LOCKER_CONFIG).
            *("--no-global-shortcuts", "--no-kactivities"),
        ]
        if at.monitors > 1:  # each of the same pixels: the second is scaled once it is up
            argv += ["--output-count", str(at.monitors)]
        # Not KWIN_COMPOSE=Q: KWin's screenshots come from its OpenGL compositor (Mesa's
        # software renderer here), and with QPainter it offers none.
        # The applications menu a Plasma session has (plasma-applications.menu): KWin 6
        # finds the desktop files that vouch for programs only through it, and without one
        # trusted none (KWin 5 read the folders themselves).
        menus = at.runtime_dir / "xdg" / "menus"
        menus.mkdir(parents=True)
        (menus / "applications.menu").write_text(APPLICATIONS_MENU)
        (at.runtime_dir / "xdg" / "kscreenlockerrc").write_text(LOCKER_CONFIG)
        if at.monitors > 1:
            (at.runtime_dir / "xdg" / "kwinrc").write_text(NO_EDGE_BARRIER)
        if at.layout:
            (at.runtime_dir / "xdg" / "kxkbrc").write_text(layout_config(*at.xkb))
        config_dirs = f"{at.runtime_dir / 'xdg'}:{at.base.get('XDG_CONFIG_DIRS') or '/etc/xdg'}"
        env = compositor.compositor_env(
            at.base,
            XDG_SESSION_TYPE="wayland",
            XDG_CURRENT_DESKTOP="KDE",
            XDG_CONFIG_DIRS=config_dirs,
        )
        if not at.shipped:  # as at.shipped, a program a desktop file does not vouch for is refused
            env.update(
                KWIN_WAYLAND_NO_PERMISSION_CHECKS="1", KWIN_SCREENSHOT_NO_PERMISSION_CHECKS="1"
            )
        spawner.spawn("kwin_wayland", argv, env)
        # The session's programs see the menu too, as in Plasma: `roundhouse setup kde`
        # rebuilds KWin's service cache (kbuildsycoca6) with the session's environment.
        display = compositor.wait_for_socket(at.runtime_dir, READY_WAIT)
        return Started(
            display,
            {"XDG_CONFIG_DIRS": config_dirs},
            size=_scaled(env, display) if at.monitors > 1 else None,
        )

    def ready(self, env: Mapping[str, str], timeout: float) -> dict[str, str]:
        bus = SyncBus(env["DBUS_SESSION_BUS_ADDRESS"], timeout)
        try:
            # Not ScreenShot2: KWin offers it only with its OpenGL compositor, which KWin 6
            # runs only on a GPU's render node (Debian 13's KWin composites with QPainter
            # here); the screen then fails with that reason, the rest works.
            # KWin owns its name before it serves its scripting: wait for what we call.
            until(
                lambda: _kwin_scripting(bus),
                timeout,
                "KWin's scripting did not appear on D-Bus",
                every=0.05,
                error=compositor.CompositorUnavailable,
            )
        finally:
            bus.close()
        return {}


READY_WAIT = 15.0  # seconds for KWin's Wayland socket
# A system-wide default (the session's XDG_CONFIG_DIRS): KWin's locker locks only when
# asked (Plasma's default locks after 5 idle minutes, which a long test sits through).
LOCKER_CONFIG = "[Daemon]\nAutolock=false\nLockOnResume=false\n"
# KWin 6 holds the pointer at the edge between two outputs until it has been pushed 100
# pixels past it (its edge barrier), absolute motion too: fake input's move from monitor 1
# to a point on monitor 2 stopped short of it (Debian 13, KWin 6.3). KWin 5.27 has none.
NO_EDGE_BARRIER = "[EdgeBarrier]\nEdgeBarrier=0\nCornerBarrier=false\n"
APPLICATIONS_MENU = (
    '<!DOCTYPE Menu PUBLIC "-//freedesktop//DTD Menu 1.0//EN" '
    '"http://www.freedesktop.org/standards/menu-spec/menu-1.0.dtd">\n'
    "<Menu><Name>Applications</Name><DefaultAppDirs/><DefaultDirectoryDirs/>"
    "<Include><All/></Include></Menu>\n"
)


def layout_config(layout: str, variant: str) -> str:
    """kxkbrc naming one keyboard layout, as Plasma's keyboard settings write it (KWin
    reads it at start)."""
    return f"[Layout]\nUse=true\nLayoutList={layout}\nVariantList={variant}\n"


def _scaled(env: Mapping[str, str], display: str) -> tuple[int, int]:
    """Scale the second output by compositor.SECOND_SCALE, as a person's display settings
    do; the desktop's size then, in its logical pixels."""
    wayland_env = {**env, "WAYLAND_DISPLAY": display}
    try:
        names = [monitor.name for monitor in read_monitors(wayland_env)]
        scale_outputs(wayland_env, {names[1]: compositor.SECOND_SCALE})
        with Connection.open(wayland_env) as wayland:
            box = desktop_box(bind_outputs(wayland))
    except WaylandError as error:
        raise compositor.CompositorUnavailable(
            f"KWin did not scale its second output: {error}"
        ) from None
    return box.right, box.bottom


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
    title="KDE Plasma 5.27, 6",
    family="kde",
    wayland=True,
    desktop_names=("kde", "plasma"),
    marks=(),
    offers=frozenset({"org_kde_kwin_fake_input", "org_kde_plasma_shell"}),
    routes=ROUTES,
    open=open_kde,
    compositor=KWin(packages="kwin-wayland", server="kwin_wayland"),
    current_desktop="KDE",
    exports=("XDG_CONFIG_DIRS",),
    setup=vouch.install,
    undo=vouch.uninstall,
    relaunch=vouch.relaunch_interpreter,
    person_watch="ext-idle-notify-v1 or org_kde_kwin_idle (Wayland); KWin's screen locker (D-Bus)",
)
