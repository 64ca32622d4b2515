"""GNOME: Mutter's remote desktop for input, its screen cast (or GNOME Shell's Screenshot)
for the screen, and GNOME Shell's Eval for the windows, on one session-bus connection; a
virtual desktop is GNOME Shell headless on a virtual monitor."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from dbus_fast import Variant

from roundhouse.core.polling import until, within
from roundhouse.devices.linux.display import compositor
from roundhouse.devices.linux.display.a11y_windows import A11yWindows
from roundhouse.devices.linux.display.backend import Backend, Route, taken
from roundhouse.devices.linux.display.base import (
    DisplayServer,
    NoWatch,
    PositionsUnknown,
    RouteRefused,
)
from roundhouse.devices.linux.display.compositor import (
    Compositor,
    CompositorUnavailable,
    Headless,
    Spawner,
    Started,
)
from roundhouse.devices.linux.display.gnome import cast, install, own_cast
from roundhouse.devices.linux.display.gnome.cast import CastScreen
from roundhouse.devices.linux.display.gnome.person_watch import GnomeWatch
from roundhouse.devices.linux.display.gnome.remote import MutterInput
from roundhouse.devices.linux.display.gnome.shell import (
    EvalShell,
    ExtensionShell,
    ShellAccess,
    ShellRefused,
    ShellScreen,
    ShellSilent,
    ShellWindows,
    answered,
    prepare_shell,
    shell_access,
    shell_paints,
    with_shell_module,
)
from roundhouse.devices.linux.display.wayland.activation import startup_env
from roundhouse.devices.linux.display.wayland.dbus import (
    BusGone,
    DBusCallError,
    SyncBus,
    opening_on_bus,
    session_bus_address,
)
from roundhouse.devices.linux.display.wayland.globals import bind_output
from roundhouse.devices.linux.display.wayland.wire import Connection, WaylandGone

log = logging.getLogger(__name__)

SETUP_FIX = "roundhouse setup gnome (once; it says when a log-out is needed)"
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
    f"sudo apt-get install {cast.PACKAGES}",
)
EXTENSION = Route(
    "windows",
    ExtensionShell.name,
    "roundhouse's extension in GNOME Shell, installed once (a log-out after, on Wayland)",
    SETUP_FIX,
)
SHELL_EVAL = Route("windows", EvalShell.name, "GNOME Shell in unsafe mode", SETUP_FIX)
A11Y = Route(
    "windows",
    "the accessibility bus (titles and focus; no positions)",
    "none: the applications say which windows they have, not where",
    SETUP_FIX,
)
ROUTES = (INPUT, SCREEN_CAST, SHELL_SCREENSHOT, EXTENSION, SHELL_EVAL, A11Y)


def open_gnome(env: Mapping[str, str], *, virtual: bool = False) -> DisplayServer:
    """Each capability by the first route the session grants: the windows through
    roundhouse's extension, else Eval, else (a person's GNOME before `roundhouse setup
    gnome`) the accessibility bus, without positions; the screen through Mutter's screen
    cast, else the Shell's Screenshot. Never refused whole for one missing route. The same
    on any desktop, `virtual` or not."""
    address = session_bus_address(env, "GNOME")
    with Connection.open(env) as wayland:
        size = bind_output(wayland).logical_size
    bus = SyncBus(address)
    with opening_on_bus(bus, ShellRefused, SETUP_FIX) as opened:
        shell: ShellAccess | None = shell_access(bus)
        try:
            assert shell is not None
            shell.windows()  # refused outside unsafe mode without the extension
        except ShellRefused:
            shell = None
        pointer = MutterInput(bus, env, size)
        opened.callback(pointer.close)
        windows: ShellWindows | A11yWindows
        missing: tuple[RouteRefused, ...] = ()
        if shell is not None:
            windows = ShellWindows(shell, on_activated=pointer.wake)
            windows_route = EXTENSION if isinstance(shell, ExtensionShell) else SHELL_EVAL
        else:
            windows = A11yWindows(bus, size, pointer.press_keys, SETUP_FIX, shell="gnome-shell")
            opened.callback(windows.close)
            windows_route = A11Y
            missing = (
                PositionsUnknown(
                    "GNOME Shell tells other programs where no window is (not in unsafe mode) "
                    "and roundhouse's extension is not running: the tree, screenshots, keys "
                    "and accessibility actions work, pointer actions on a control do not",
                    SETUP_FIX,
                ),
            )
        screen: CastScreen | ShellScreen
        if cast.available():
            try:
                screen, shots = CastScreen(pointer.node, env, size), SCREEN_CAST
            except TimeoutError as error:
                # GNOME 48 (Debian 13) under a test suite's load: no frame from two
                # pipelines, 2 runs in ~1,500, cause not found. The Shell's screenshots
                # serve where it allows them (unsafe mode: a virtual desktop).
                if not isinstance(shell, EvalShell):
                    raise
                log.warning("%s: screenshots through GNOME Shell instead", error)
                screen = ShellScreen(shell, bus, size, env.get("XDG_RUNTIME_DIR", ""))
                shots = SHELL_SCREENSHOT
        elif isinstance(shell, EvalShell):  # ~100 ms a PNG, where GStreamer's source is not
            screen = ShellScreen(shell, bus, size, env.get("XDG_RUNTIME_DIR", ""))
            shots = SHELL_SCREENSHOT
        else:
            raise RouteRefused(
                "no route to GNOME's screen: GStreamer's PipeWire source (for Mutter's screen "
                "cast) is not installed, and GNOME Shell's Screenshot serves no other program",
                SCREEN_CAST.fix,
            )
        # The stage's own paints (Eval), else the cast's frames (later, and the same changes).
        painted = shell_paints(shell) if isinstance(shell, EvalShell) else None
        drawn = painted or (screen.drawn if isinstance(screen, CastScreen) else None)
        watch: GnomeWatch | NoWatch
        try:
            dialogs = shell.dialogs if shell is not None else None
            watch = GnomeWatch(bus, lambda: pointer.last_sent, dialogs)
        except DBusCallError as error:  # a Mutter without its idle monitor
            log.warning("no person watch on this GNOME session: %s", error)
            watch = NoWatch()
    return DisplayServer(
        "gnome",
        pointer,
        screen,
        windows,
        lost=(BusGone, WaylandGone),
        shared=(bus,),
        routes=taken(INPUT, shots, windows_route),
        missing=missing,
        # Mutter focuses a window another program launched only with a token.
        startup=lambda: startup_env(env),
        drawn=drawn,
        watch=watch,
    )


class GnomeShell(Compositor):
    """GNOME Shell 43+ headless on a virtual monitor, in unsafe mode (its Eval gives the
    windows' positions, its Screenshot serves other programs), or as shipped (then the
    windows come from roundhouse's extension, or without positions). It needs a system bus
    (without one it exits at start: a private bus stands in for it), and Mutter's remote
    desktop needs PipeWire (and WirePlumber) for its screen cast."""

    def programs(self) -> list[str]:
        return ["gnome-shell", "pipewire", "wireplumber"]

    def start(self, spawner: Spawner, at: Headless) -> Started:
        # The layout is set in the Shell's settings once it answers (ready): a shipped
        # Shell's Eval, which sets them, is refused.
        at.refuse("gnome", layouts=not at.shipped)
        width, height = at.size
        system_bus = spawner.spawn_reading(
            "dbus-daemon",
            [
                "dbus-daemon",
                "--session",
                "--nofork",
                f"--address=unix:path={at.runtime_dir}/system_bus",
            ],
            "--print-address=",
            compositor.compositor_env(at.base),
        )
        env = compositor.compositor_env(at.base, DBUS_SYSTEM_BUS_ADDRESS=system_bus)
        spawner.spawn("pipewire", ["pipewire"], env)
        spawner.spawn("wireplumber", ["wireplumber"], env)
        shell = [
            *("gnome-shell", "--headless", *(() if at.shipped else ("--unsafe-mode",))),
            *("--virtual-monitor", f"{width}x{height}", "--wayland", "--no-x11"),
            *("--wayland-display", "wayland-0"),
        ]
        shell_env = {
            **env,
            "LIBGL_ALWAYS_SOFTWARE": "1",
            "XDG_SESSION_TYPE": "wayland",
            "XDG_CURRENT_DESKTOP": "GNOME",
        }
        if not at.shipped:  # as at.shipped, its settings are dconf's, in the session's HOME
            shell_env["GSETTINGS_BACKEND"] = "memory"
        spawner.spawn("gnome-shell", shell, shell_env, log=at.runtime_dir / SHELL_LOG)
        socket = compositor.wait_for_socket(at.runtime_dir, READY_WAIT)
        return Started(socket, {"DBUS_SYSTEM_BUS_ADDRESS": system_bus})

    def ready(self, env: Mapping[str, str], timeout: float) -> dict[str, str]:
        """Once the Shell's D-Bus services are up: prepared (display.gnome.shell), all
        within `timeout`; CompositorUnavailable saying what the Shell did not answer."""
        deadline = time.monotonic() + timeout
        bus = SyncBus(env["DBUS_SESSION_BUS_ADDRESS"], timeout)
        try:
            wanted = ("org.gnome.Shell.Screenshot", "org.gnome.Mutter.RemoteDesktop")
            until(
                lambda: all(bus.has_name(name) for name in wanted),
                timeout,
                "GNOME Shell's D-Bus services did not appear",
                every=0.05,
                error=CompositorUnavailable,
            )

            # Seen on GNOME Shell 43 (about 1 start in 500 here): its IBus manager spawns
            # ibus-daemon with JavaScript run in the forked child, which can deadlock
            # before exec, and the Shell waits on that child for good (GNOME issue 6698,
            # fixed in 45.7 and 46.2). Ended, the child frees the Shell's wait.
            def unstick() -> None:
                end_stuck_forks(bus)

            try:
                prepare_shell(shell_access(bus), deadline, unstick)
                _use_layout(bus, env, deadline)
            except ShellRefused:  # as shipped: out of the Overview as a person gets out
                _close_overview(bus, deadline, unstick)
        except ShellSilent as error:
            log_file = Path(env.get("XDG_RUNTIME_DIR", "")) / SHELL_LOG
            raise CompositorUnavailable(f"{error}{_last_words(log_file)}") from None
        finally:
            bus.close()
        return {}


READY_WAIT = 15.0  # seconds for GNOME Shell's Wayland socket


def _use_layout(bus: SyncBus, env: Mapping[str, str], deadline: float) -> None:
    """Give the Shell the desktop's keyboard layout (XKB_DEFAULT_LAYOUT, where `--layout`
    set one) as a person's GNOME has it: its input sources (org.gnome.desktop.input-sources
    `sources`, set inside the Shell, whose settings are in memory here), and wait until the
    Shell has switched Mutter's keymap to it (its current source)."""
    layout = env.get("XKB_DEFAULT_LAYOUT")
    if not layout:
        return
    variant = env.get("XKB_DEFAULT_VARIANT")
    source = f"{layout}+{variant}" if variant else layout
    script = (
        "const { Gio, GLib } = imports.gi;"
        "new Gio.Settings({ schema_id: 'org.gnome.desktop.input-sources' }).set_value("
        f"'sources', new GLib.Variant('a(ss)', [['xkb', {json.dumps(source)}]]));"
        + with_shell_module(
            "status/keyboard",
            "keyboard => { const current = keyboard.getInputSourceManager().currentSource;"
            " return current ? current.id : ''; }",
        )
    )
    shell = ("org.gnome.Shell", "/org/gnome/Shell", "org.gnome.Shell")

    def switched() -> bool:
        ok, current = answered(
            lambda left: bus.call(*shell, "Eval", "s", [script], timeout=left),
            deadline,
            "setting its keyboard layout (Eval)",
        )
        if not ok:
            raise CompositorUnavailable(f"GNOME Shell did not take the layout {source}: {current}")
        return bool(json.loads(current) == source)

    until(
        switched,
        deadline - time.monotonic(),
        f"GNOME Shell did not switch to the layout {source}",
        every=0.05,
        error=CompositorUnavailable,
    )


# What a virtual desktop's GNOME Shell writes (its warnings: a few lines a start), in the
# desktop's runtime folder: the lines it last wrote go with an error saying it stopped
# answering.
SHELL_LOG = "gnome-shell.log"
LAST_WORDS = 8  # lines


def _last_words(log_file: Path) -> str:
    try:
        lines = log_file.read_text(errors="replace").splitlines()[-LAST_WORDS:]
    except OSError as error:
        return f" (its log {log_file} cannot be read: {error.strerror})"
    said = "\n  ".join(line for line in lines if line.strip())
    return f"; the last it wrote ({log_file}):\n  {said}" if said else ""


def end_stuck_forks(bus: SyncBus) -> None:
    """End the forks of GNOME Shell that never went on to exec (compositor.py): what a
    Shell that stopped answering at start-up waits on, where it is GNOME issue 6698."""
    try:
        (pid,) = bus.call(*DBUS_DAEMON, "GetConnectionUnixProcessID", "s", ["org.gnome.Shell"])
    except (DBusCallError, TimeoutError) as error:
        log.info("GNOME Shell's process is not known to its bus (%s)", error)
        return
    for child in compositor.forks_never_execed(int(pid)):
        log.warning("GNOME Shell %d waits on its fork %d, which never exec'd: ended", pid, child)
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, signal.SIGKILL)


DBUS_DAEMON = ("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus")


def _close_overview(
    bus: SyncBus, deadline: float, unstick: Callable[[], None] = lambda: None
) -> None:
    """Leave the Overview GNOME Shell starts in, through its OverviewActive property: any
    client of the session may set it, unsafe mode or not. GNOME Shell 48 opens it again at
    the end of its start-up animation, a moment after it answers: it is closed until it
    has stayed closed for OVERVIEW_CALM seconds (a window opened in the Overview is not
    given the focus)."""
    shell = ("org.gnome.Shell", "/org/gnome/Shell", "org.freedesktop.DBus.Properties")
    what = "whether its Overview shows (the OverviewActive property)"
    closed = ["org.gnome.Shell", "OverviewActive", Variant("b", False)]
    closed_since: float | None = None

    def calm() -> bool:
        nonlocal closed_since
        (active,) = answered(
            lambda left: bus.call(
                *shell, "Get", "ss", ["org.gnome.Shell", "OverviewActive"], timeout=left
            ),
            deadline,
            what,
            unstick,
        )
        if active.value:
            answered(
                lambda left: bus.call(*shell, "Set", "ssv", closed, timeout=left),
                deadline,
                "closing its Overview (the OverviewActive property)",
                unstick,
            )
            closed_since = None
            return False
        closed_since = closed_since or time.monotonic()
        return time.monotonic() - closed_since >= OVERVIEW_CALM

    if not within(calm, deadline - time.monotonic(), every=0.05):
        log.warning("GNOME Shell's Overview did not stay closed for %g s", OVERVIEW_CALM)


OVERVIEW_CALM = 1.5  # seconds the Overview stays closed before a shipped GNOME is ready


GNOME = Backend(
    kind="gnome",
    title="GNOME 43–48",
    family="gnome",
    wayland=True,
    desktop_names=("gnome", "gnome-classic", "ubuntu", "pop"),
    marks=(),
    offers=frozenset({"gtk_shell1"}),
    routes=ROUTES,
    open=open_gnome,
    compositor=GnomeShell(packages="gnome-shell pipewire wireplumber", server="gnome-shell"),
    current_desktop="GNOME",
    person_packages=("at-spi2-core", "libatk-adaptor", *cast.PACKAGES.split()),
    setup=install.install,
    undo=install.uninstall,
    settings=(
        (
            "org.gnome.desktop.interface",
            "toolkit-accessibility",
            "true",
            "GNOME's toolkit-accessibility is off",
        ),
    ),
    person_watch="Mutter's IdleMonitor (D-Bus); GNOME Shell's screen shield (D-Bus)",
    screen_alone=own_cast.screen_alone,
)
