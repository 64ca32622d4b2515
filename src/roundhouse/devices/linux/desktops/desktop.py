"""The desktop the device works on: a virtual one (Xvfb + buses + window manager, or a
headless Wayland compositor) or the user's (X11 or Wayland).

A virtual desktop is Xvfb (it picks a free display number itself through -displayfd, so
several desktops run side by side), a private D-Bus session bus, the AT-SPI bus (activated
on that session bus) and openbox, without which windows cannot be listed or focused. With
`session` sway, gnome or kde it is that compositor headless instead of Xvfb and openbox
(compositors.py), in the desktop's own runtime folder.
When it stops, it first ends the apps that ran on it, and whatever they forked (see
reaper.py: by the tag in their environment, as clients of its X server or compositor, as
their descendants and session members); then its own processes, by pid: the ones it spawned, and
the services its own buses activated (at-spi-bus-launcher, its bus, at-spi2-registryd,
dconf-service), which get re-parented and are found over D-Bus and by their
DBUS_STARTER_ADDRESS.

`roundhouse desktop start` detaches: the pids go to a state file so that `stop` and `status`
work from another process.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import errno
import json
import logging
import os
import select
import shutil
import subprocess
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from dbus_fast import Message, MessageType, Variant
from dbus_fast.aio import MessageBus
from dbus_fast.errors import DBusFastError
from Xlib import X  # type: ignore[import-untyped, unused-ignore]
from Xlib import display as xdisplay  # type: ignore[import-untyped, unused-ignore]
from Xlib import error as xerror  # type: ignore[import-untyped, unused-ignore]

from roundhouse.config import DesktopSettings
from roundhouse.devices.linux.bus_daemon import bus_daemon_message
from roundhouse.devices.linux.desktops import janitor, procfs
from roundhouse.devices.linux.desktops.compositors import (
    BACKGROUND,
    COMPOSITORS,
    READY_TIMEOUT,
    Compositor,
    CompositorUnavailable,
    spawn_env,
    wait_for_socket,
)
from roundhouse.devices.linux.desktops.procfs import ProcessRecord, alive
from roundhouse.devices.linux.desktops.reaper import TAG_ENV, DesktopReaper, new_tag, terminate
from roundhouse.devices.linux.desktops.session import (
    CURRENT_DESKTOP,
    is_wayland,
    runtime_dir_of,
    software_rendering,
    wayland_env,
)
from roundhouse.devices.linux.display.wayland.globals import bind_output
from roundhouse.devices.linux.display.wayland.wire import Connection, WaylandError

log = logging.getLogger(__name__)

# What a clean Debian/Ubuntu machine needs for a virtual desktop with accessibility trees.
APT_PACKAGES = (
    "xvfb xauth x11-utils dbus dbus-x11 at-spi2-core libatk-adaptor libatk-bridge2.0-0 openbox"
)
START_TIMEOUT = 10.0  # seconds; a cold first Xvfb start takes ~1 s on these machines
DBUS_TIMEOUT = 5.0
REAP_WAIT = 2.0  # seconds for an ended child of ours to be reapable
EXEC_ATTEMPTS = 5

T = TypeVar("T")


class DesktopUnavailable(RuntimeError):
    """No display to work on, and none can be started; the message says what to install."""


@dataclass(frozen=True)
class Desktop:
    """Where apps run: pass `env` to every process meant for this desktop."""

    display: str  # ":3"; a Wayland one by its name ("sway-1") or its WAYLAND_DISPLAY
    env: dict[str, str] = field(hash=False)
    width: int
    height: int
    virtual: bool

    @property
    def bus_address(self) -> str | None:
        return self.env.get("DBUS_SESSION_BUS_ADDRESS")

    @property
    def wayland(self) -> bool:
        """A Wayland session (its applications are Wayland clients)."""
        return is_wayland(self.env)

    def app_command(self, argv: Sequence[str]) -> list[str]:
        """The command line that makes the app expose its accessibility tree.

        Chromium and Electron apps only build their tree with --force-renderer-accessibility;
        as root Chromium also refuses to start without --no-sandbox (and then warns in a
        bar). On a virtual desktop a Chromium browser also gets a throw-away profile in the
        desktop's runtime folder (removed when the desktop stops) and no first-run or
        default-browser questions; on the user's own desktop it keeps the user's profile.
        Firefox gets the same on a virtual desktop (a prepared profile without its welcome
        and privacy tabs); its tree is switched on by GNOME_ACCESSIBILITY (desktop_env).
        LibreOffice starts without its splash window (--nologo), and on a virtual desktop in
        a prepared profile. GNOME Text Editor gets a data folder of the virtual desktop's,
        and restores no earlier session.
        """
        command = list(argv)
        if command and _is_chromium_like(command[0]):
            extra = ["--force-renderer-accessibility"]
            if self.wayland:
                extra.append("--ozone-platform=wayland")
            if os.geteuid() == 0:
                # --test-type (as chromedriver passes it) keeps the "unsupported command-line
                # flag" bar off the page: the model would read it as part of every page.
                extra += ["--no-sandbox", "--test-type"]
            runtime_dir = self.env.get("XDG_RUNTIME_DIR")
            if self.virtual and _is_chromium_browser(command[0]) and runtime_dir:
                extra += ["--no-first-run", "--no-default-browser-check"]
                if not any(arg.startswith("--user-data-dir") for arg in command):
                    extra.append(f"--user-data-dir={os.path.join(runtime_dir, 'chromium-profile')}")
                if all(arg.startswith("-") for arg in command[1:]):
                    # Nothing to open: a blank page, not the New Tab page, which takes the
                    # focus when it has loaded. A ctrl+l pressed before that lost the address
                    # bar to it, and the URL typed next went nowhere (a replayed suite task).
                    command.append("about:blank")
            command[1:1] = [flag for flag in extra if flag not in command]
        runtime_dir = self.env.get("XDG_RUNTIME_DIR")
        if command and _is_libreoffice(command[0]) and "--nologo" not in command:
            # Its splash is a window of its own, the first new one: taken for the document
            # window, it was handed to the AppAgent and closed under it a moment later.
            command.insert(1, "--nologo")
        if command and self.virtual and runtime_dir and _is_libreoffice(command[0]):
            if not any(arg.startswith("-env:UserInstallation=") for arg in command):
                profile = prepare_office_profile(Path(runtime_dir) / "libreoffice-profile")
                command.insert(1, f"-env:UserInstallation={profile.as_uri()}")
        if command and self.virtual and runtime_dir and _is_firefox(command[0]):
            if not any(arg in ("--profile", "-profile", "-P") for arg in command):
                profile = prepare_firefox_profile(Path(runtime_dir) / "firefox-profile")
                command[1:1] = ["--no-remote", "--profile", str(profile)]
        if command and self.virtual and runtime_dir and _restores_session(command[0]):
            # GNOME Text Editor reopens the last session's documents and drafts (from its
            # data folder) and keeps writing them there: on a virtual desktop it starts
            # without them, as gedit does (a desktop lives on between tests: one test's
            # document was reopened and typed into by the next), and writes them into a
            # data folder of the desktop's own, leaving the user's session alone.
            data = Path(runtime_dir) / "app-data" / Path(command[0]).name
            data.mkdir(parents=True, exist_ok=True)
            if not {"--ignore-session", "-i", "--standalone", "-s"} & set(command):
                command.insert(1, "--ignore-session")
            command[0:0] = ["env", f"XDG_DATA_HOME={data}"]
        return command


def _is_chromium_like(program: str) -> bool:
    name = Path(program).name.lower()
    return any(key in name for key in ("chrom", "electron", "code", "brave", "edge"))


def _is_libreoffice(program: str) -> bool:
    name = Path(program).name.lower()
    return name in ("soffice", "soffice.bin", "localc", "lowriter", "loimpress", "lodraw") or (
        name.startswith("libreoffice")
    )


# What a first start of LibreOffice would otherwise put in front of the document: the tip
# of the day and the first-start wizard. The "Keep current format" question stays: saving
# in a foreign format is the user's (and the model's) choice to confirm.
OFFICE_SETTINGS = (
    ("/org.openoffice.Office.Common/Misc", "ShowTipOfTheDay", "false"),
    ("/org.openoffice.Office.Common/Misc", "FirstRun", "false"),
    ("/org.openoffice.Setup/Office", "FirstStartWizardCompleted", "true"),
)


def _office_registry() -> str:
    items = "".join(
        f'<item oor:path="{path}"><prop oor:name="{name}" oor:op="fuse">'
        f"<value>{value}</value></prop></item>\n"
        for path, name, value in OFFICE_SETTINGS
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<oor:items xmlns:oor="http://openoffice.org/2001/registry">\n'
        f"{items}</oor:items>\n"
    )


def prepare_office_profile(folder: Path) -> Path:
    """A LibreOffice profile that starts straight into the document (made once per
    virtual desktop, in its runtime folder, so it goes when the desktop stops)."""
    settings = folder / "user" / "registrymodifications.xcu"
    if not settings.exists():
        settings.parent.mkdir(parents=True, exist_ok=True)
        settings.write_text(_office_registry(), encoding="utf-8")
    return folder


# What a first start of Firefox would otherwise open beside the page asked for: the
# welcome page, the privacy notice (a tab that fails offline) and the default-browser bar.
FIREFOX_PREFERENCES = (
    ("browser.aboutwelcome.enabled", "false"),
    ("browser.startup.homepage_override.mstone", '"ignore"'),
    ("startup.homepage_welcome_url", '""'),
    ("startup.homepage_welcome_url.additional", '""'),
    ("datareporting.policy.firstRunURL", '""'),
    ("datareporting.policy.dataSubmissionPolicyBypassNotification", "true"),
    ("toolkit.telemetry.reportingpolicy.firstRun", "false"),
    ("browser.shell.checkDefaultBrowser", "false"),
)


def prepare_firefox_profile(folder: Path) -> Path:
    """A throw-away Firefox profile that opens just the page (made once per virtual
    desktop, in its runtime folder, so it goes when the desktop stops)."""
    preferences = folder / "user.js"
    if not preferences.exists():
        folder.mkdir(parents=True, exist_ok=True)
        lines = [f"user_pref({json.dumps(name)}, {value});" for name, value in FIREFOX_PREFERENCES]
        preferences.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def _restores_session(program: str) -> bool:
    return Path(program).name == "gnome-text-editor"


def _is_firefox(program: str) -> bool:
    return Path(program).name.lower() in ("firefox", "firefox-esr", "firefox-bin")


def _is_chromium_browser(program: str) -> bool:
    """A browser built on Chromium (Electron apps keep their own profile switches)."""
    name = Path(program).name.lower()
    return any(key in name for key in ("chrom", "brave", "edge"))


def desktop_env(
    display: str,
    bus_address: str | None,
    base: Mapping[str, str] | None = None,
    runtime_dir: str | None = None,
    tag: str | None = None,
) -> dict[str, str]:
    """The environment for processes on a desktop: X11 only, accessibility switched on.

    A virtual desktop (`runtime_dir` given) has its own XDG_RUNTIME_DIR: the AT-SPI bus
    launcher puts its socket there, so desktops (and the user's session) never share or
    delete each other's; in-memory settings (no dconf-service, no dconf warnings); and GTK 4
    drawing on the CPU (session.software_rendering). On the user's own desktop, apps keep
    the user's settings and renderer. A virtual desktop's `tag` marks
    every process started with this environment as the desktop's, to end when it stops.
    """
    env = dict(os.environ if base is None else base)
    env["DISPLAY"] = display
    if bus_address is not None:
        env["DBUS_SESSION_BUS_ADDRESS"] = bus_address
    if runtime_dir is not None:
        env["XDG_RUNTIME_DIR"] = runtime_dir
        env["GSETTINGS_BACKEND"] = "memory"
        software_rendering(env)
        # Set or cleared: a process that started us with another desktop's tag (say, a
        # terminal on that desktop) must not pass it on to the apps of this one.
        env.pop(TAG_ENV, None)
        if tag is not None:
            env[TAG_ENV] = tag
    # On the current display a tag stays: it came with DISPLAY from whoever started us on
    # that virtual desktop (batch runs each task so), and what we launch there is its too.
    # A Wayland session around us must not pull toolkits away from this X display.
    for name in ("WAYLAND_DISPLAY", "XDG_SESSION_TYPE", "NO_AT_BRIDGE", "GTK_A11Y", "AT_SPI_BUS"):
        env.pop(name, None)
    env["QT_LINUX_ACCESSIBILITY_ALWAYS_ON"] = "1"  # Qt 6 ignores QT_ACCESSIBILITY alone
    env["QT_ACCESSIBILITY"] = "1"
    # Firefox builds its tree at start with this; without it the web content appears only
    # after a screen reader has asked once, and the first look sees an empty page.
    env["GNOME_ACCESSIBILITY"] = "1"
    return env


# ---------------------------------------------------------------- processes


def process_age(pid: int) -> float | None:
    """Seconds since the process started; None when it is not running."""
    start = procfs.start_time(pid)
    if start is None:
        return None
    uptime = float(Path("/proc/uptime").read_text().split()[0])
    return uptime - start / os.sysconf("SC_CLK_TCK")


def _record(name: str, pid: int) -> ProcessRecord | None:
    start = procfs.start_time(pid)
    return None if start is None else ProcessRecord(name, pid, start)


def _stop_processes(records: Sequence[ProcessRecord]) -> None:
    """SIGTERM each (still ours) process, wait, then SIGKILL what is left."""
    for record in terminate(records):
        log.warning("%s (pid %d) ignored SIGTERM; killed it", record.name, record.pid)


def _activated_by(addresses: Sequence[str]) -> list[ProcessRecord]:
    """Processes a bus of ours started: D-Bus activation sets DBUS_STARTER_ADDRESS."""
    wanted = {f"DBUS_STARTER_ADDRESS={address}".encode() for address in addresses}
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:  # gone, or not ours to read
            continue
        if wanted.intersection(environ.split(b"\0")):
            record = _record(_comm(int(entry.name)), int(entry.name))
            if record is not None:
                found.append(record)
    return found


def _comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return f"pid {pid}"


def _read_line(fd: int, timeout: float, what: str) -> str:
    """One line a child writes to a pipe (Xvfb's display number, dbus-daemon's address)."""
    data = b""
    deadline = time.monotonic() + timeout
    while not data.endswith(b"\n"):
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
            raise DesktopUnavailable(f"{what} did not start within {timeout:g} s")
        chunk = os.read(fd, 256)
        if not chunk:
            raise DesktopUnavailable(f"{what} exited during start-up")
        data += chunk
    return data.decode().strip()


def _run_async(factory: Callable[[], Awaitable[T]]) -> T:
    """Run a coroutine from sync code, even when the caller already has an event loop."""

    async def runner() -> T:
        return await factory()

    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, runner()).result()


# ---------------------------------------------------------------- D-Bus helpers


async def _call(bus: MessageBus, message: Message) -> list[Any]:
    reply = await asyncio.wait_for(bus.call(message), DBUS_TIMEOUT)
    if reply is None or reply.message_type is MessageType.ERROR:
        detail = reply.body if reply is not None else "no reply"
        raise DesktopUnavailable(
            f"D-Bus {message.member} failed: {reply and reply.error_name} {detail}"
        )
    return list(reply.body)


async def _name_pid(bus: MessageBus, name: str) -> int | None:
    reply = await asyncio.wait_for(
        bus.call(bus_daemon_message("GetConnectionUnixProcessID", "s", [name])), DBUS_TIMEOUT
    )
    if reply is None or reply.message_type is MessageType.ERROR:
        return None  # the name has no owner (the service never started)
    return int(reply.body[0])


async def _bring_up_atspi(bus_address: str) -> str:
    """Activate the AT-SPI bus on our session bus; return its address."""
    bus = await MessageBus(bus_address=bus_address).connect()
    try:
        (address,) = await _call(
            bus,
            Message(
                destination="org.a11y.Bus",
                path="/org/a11y/bus",
                interface="org.a11y.Bus",
                member="GetAddress",
            ),
        )
        # Qt apps started without our environment still expose their tree when this is set.
        await _call(
            bus,
            Message(
                destination="org.a11y.Bus",
                path="/org/a11y/bus",
                interface="org.freedesktop.DBus.Properties",
                member="Set",
                signature="ssv",
                body=["org.a11y.Status", "IsEnabled", Variant("b", True)],
            ),
        )
        return str(address)
    finally:
        bus.disconnect()


async def _service_pids(bus_address: str, a11y_address: str | None) -> dict[str, int]:
    """Pids of the services our buses activated, found by their well-known names."""
    pids: dict[str, int] = {}
    with contextlib.suppress(OSError, TimeoutError, DesktopUnavailable, DBusFastError):
        bus = await asyncio.wait_for(MessageBus(bus_address=bus_address).connect(), DBUS_TIMEOUT)
        try:
            for name in ("org.a11y.Bus", "ca.desrt.dconf"):
                pid = await _name_pid(bus, name)
                if pid is not None:
                    pids[name] = pid
        finally:
            bus.disconnect()
    if a11y_address is not None:
        with contextlib.suppress(OSError, TimeoutError, DesktopUnavailable, DBusFastError):
            bus = await asyncio.wait_for(
                MessageBus(bus_address=a11y_address).connect(), DBUS_TIMEOUT
            )
            try:
                for name in ("org.a11y.atspi.Registry", "org.freedesktop.DBus"):
                    pid = await _name_pid(bus, name)
                    if pid is not None:
                        pids[f"a11y {name}"] = pid
            finally:
                bus.disconnect()
    return pids


# ---------------------------------------------------------------- X helpers


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
        deadline = time.monotonic() + timeout
        while any(root.get_full_property(atom, X.AnyPropertyType) is None for atom in atoms):
            if time.monotonic() > deadline:
                raise DesktopUnavailable(f"the window manager did not start within {timeout:g} s")
            time.sleep(0.01)
    finally:
        connection.close()


def _paint_background(display: str) -> None:
    """Give the root window BACKGROUND (Xvfb's is black, and openbox paints none)."""
    connection = xdisplay.Display(display)
    try:
        screen = connection.screen()
        red, green, blue = (value * 257 for value in BACKGROUND)  # X colours are 16-bit
        pixel = screen.default_colormap.alloc_color(red, green, blue).pixel
        screen.root.change_attributes(background_pixel=pixel)
        screen.root.clear_area(0, 0, 0, 0)  # 0 x 0: all of it
        connection.sync()
    finally:
        connection.close()


def _screen_size(display: str) -> tuple[int, int]:
    try:
        connection = xdisplay.Display(display)
    except (xerror.DisplayError, OSError) as error:
        raise DesktopUnavailable(f"cannot open display {display}: {error}") from None
    try:
        screen = connection.screen()
        return int(screen.width_in_pixels), int(screen.height_in_pixels)
    finally:
        connection.close()


# ---------------------------------------------------------------- the virtual desktop


@dataclass
class DesktopState:
    """What `roundhouse desktop stop/status` needs from another process."""

    display: str
    width: int
    height: int
    bus_address: str | None  # None only while a start is cut short
    a11y_address: str | None
    runtime_dir: str
    processes: list[ProcessRecord]
    tag: str | None = None  # None in the state files of desktops started before tags
    session: str = "x11"  # or the Wayland compositor family: "sway", "gnome", "kde"
    wayland_display: str | None = None  # the socket's name in runtime_dir
    server: str = "Xvfb"  # the process that is the display server: alive while it runs
    extra_env: dict[str, str] = field(default_factory=dict)  # what the compositor added

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2)

    @classmethod
    def from_json(cls, text: str) -> DesktopState:
        data = json.loads(text)
        data["processes"] = [ProcessRecord(**item) for item in data["processes"]]
        return cls(**data)


class VirtualDesktop:
    """`with VirtualDesktop(settings) as desktop:` — Xvfb, buses and openbox, stopped on exit."""

    def __init__(self, settings: DesktopSettings | None = None) -> None:
        self.settings = settings or DesktopSettings()
        self._children: list[subprocess.Popen[bytes]] = []
        self._records: list[ProcessRecord] = []
        self._runtime_dir: str | None = None
        self._a11y_address: str | None = None
        self._bus_address: str | None = None
        self._display: str | None = None
        self._tag: str | None = None
        self._lifeline: int | None = None  # to this desktop's janitor (janitor.py)
        self._session = "x11"
        self._server = "Xvfb"
        self._wayland_display: str | None = None
        self._extra_env: dict[str, str] = {}
        self.desktop: Desktop | None = None

    def __enter__(self) -> Desktop:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> Desktop:
        compositor = COMPOSITORS.get(self.settings.session)
        _require_programs(compositor)
        try:
            return self._start() if compositor is None else self._start_wayland(compositor)
        except BaseException:
            self.stop()
            raise

    def _begin(self) -> str:
        """The runtime folder and the tag; the janitor watching them. Everything of this
        desktop carries its tag, its display server too: a desktop started from an app of
        another desktop must not look like one of that desktop's processes."""
        self._runtime_dir = tempfile.mkdtemp(prefix=janitor.DESKTOP_RUNTIME_PREFIX)
        self._tag = tag = new_tag()
        # Should this process be SIGKILLed, the janitor ends every process with the tag;
        # told "done" by stop() or "keep" by detach(), it leaves them alone.
        self._lifeline = janitor.start(TAG_ENV, tag, self._runtime_dir)
        return tag

    def _start(self) -> Desktop:
        width, height = self.settings.width, self.settings.height
        tag = self._begin()
        assert self._runtime_dir is not None
        number = self._spawn_reading(
            "Xvfb",
            ["Xvfb", "-screen", "0", f"{width}x{height}x24", "-nolisten", "tcp", "-noreset"],
            "-displayfd",
            {**os.environ, TAG_ENV: tag},
        )
        self._display = display = f":{number}"
        bus = _bus_path(self._runtime_dir)
        # Services the bus activates (the AT-SPI launcher) inherit this environment: they
        # must see this display, this bus and this runtime directory, not the caller's.
        self._bus_address = self._spawn_session_bus(
            self._runtime_dir, desktop_env(display, bus, runtime_dir=self._runtime_dir, tag=tag)
        )
        env = desktop_env(display, self._bus_address, runtime_dir=self._runtime_dir, tag=tag)
        self._spawn("openbox", ["openbox", "--sm-disable"], env)
        # The AT-SPI bus comes up while openbox starts.
        self._start_atspi_bus()
        _wait_for_window_manager(display, START_TIMEOUT)
        _paint_background(display)
        self.desktop = Desktop(display, env, width, height, virtual=True)
        log.info("virtual desktop %s up (%dx%d)", display, width, height)
        return self.desktop

    def _start_wayland(self, compositor: Compositor) -> Desktop:
        """A headless compositor with its own session bus and AT-SPI bus; its apps are
        Wayland clients (there is no X server)."""
        width, height = self.settings.width, self.settings.height
        tag = self._begin()
        runtime = self._runtime_dir
        assert runtime is not None
        base = {**_without_session(os.environ), TAG_ENV: tag, "XDG_RUNTIME_DIR": runtime}
        self._bus_address = self._spawn_session_bus(
            runtime, {**base, "GSETTINGS_BACKEND": "memory"}
        )
        base["DBUS_SESSION_BUS_ADDRESS"] = self._bus_address
        for spawn in compositor.prepare(Path(runtime), width, height):
            env = spawn_env(base, spawn)
            if spawn.prints_address:
                address = self._spawn_reading(spawn.name, spawn.argv, spawn.prints_address, env)
                base[spawn.exports or ""] = address
            else:
                self._spawn(spawn.name, spawn.argv, env)
        try:
            socket_name = wait_for_socket(Path(runtime), READY_TIMEOUT)
        except CompositorUnavailable as error:
            raise DesktopUnavailable(f"{compositor.kind} did not start: {error}") from None
        env = wayland_env(
            base,
            wayland_display=socket_name,
            runtime_dir=runtime,
            bus_address=self._bus_address,
            current_desktop=CURRENT_DESKTOP.get(compositor.kind),
            virtual=True,
        )
        self._start_atspi_bus()
        try:
            self._extra_env = compositor.ready(env, READY_TIMEOUT)
            env.update(self._extra_env)
        except CompositorUnavailable as error:
            raise DesktopUnavailable(f"{compositor.kind} did not start: {error}") from None
        self._session = compositor.kind
        self._server = compositor.server
        self._wayland_display = socket_name
        self._display = _wayland_name(compositor.kind)
        self.desktop = Desktop(self._display, env, width, height, virtual=True)
        log.info("virtual %s desktop %s up (%dx%d)", compositor.kind, self._display, width, height)
        return self.desktop

    def _spawn_session_bus(self, runtime_dir: str, env: Mapping[str, str]) -> str:
        """The desktop's session bus, listening in its runtime folder; its address."""
        return self._spawn_reading(
            "dbus-daemon",
            [
                "dbus-daemon",
                *session_bus_config(runtime_dir),
                "--nofork",
                f"--address={_bus_path(runtime_dir)}",
            ],
            "--print-address=",
            env,
        )

    def _start_atspi_bus(self) -> None:
        try:
            self._a11y_address = _run_async(lambda: _bring_up_atspi(self._bus_address or ""))
        except (OSError, TimeoutError, DBusFastError) as error:
            raise DesktopUnavailable(
                f"the AT-SPI bus did not come up ({error!r}); is at-spi2-core installed?"
            ) from None

    def _spawn(self, name: str, argv: list[str], env: Mapping[str, str]) -> None:
        for attempt in range(EXEC_ATTEMPTS):
            try:
                process = subprocess.Popen(
                    argv,
                    env=dict(env),
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    start_new_session=True,  # a Ctrl-C meant for us must not reach it
                )
                break
            except OSError as error:
                # A program file just written may be held open for writing by another
                # thread's forked child until that child execs: Linux then refuses to run
                # it (ETXTBSY) for a moment.
                if error.errno != errno.ETXTBSY or attempt == EXEC_ATTEMPTS - 1:
                    raise
                time.sleep(0.05)
        self._adopt(name, process)

    def _spawn_reading(
        self, name: str, argv: list[str], fd_flag: str, env: Mapping[str, str]
    ) -> str:
        """Start a program that reports readiness by writing a line to a file descriptor."""
        read_end, write_end = os.pipe()
        flag = [fd_flag + str(write_end)] if fd_flag.endswith("=") else [fd_flag, str(write_end)]
        try:
            process = subprocess.Popen(
                argv + flag,
                env=dict(env),
                pass_fds=[write_end],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
            self._adopt(name, process)
            os.close(write_end)
            write_end = -1
            return _read_line(read_end, START_TIMEOUT, name)
        finally:
            os.close(read_end)
            if write_end >= 0:
                os.close(write_end)

    def _adopt(self, name: str, process: subprocess.Popen[bytes]) -> None:
        self._children.append(process)
        record = _record(name, process.pid)
        if record is not None:
            self._records.append(record)

    def state(self) -> DesktopState:
        if self.desktop is None or self._bus_address is None:
            raise RuntimeError("the desktop is not started")
        return self._state(self.desktop.display)

    def _state(self, display: str) -> DesktopState:
        """What this desktop has started so far; a start cut short has no buses yet."""
        assert self._runtime_dir is not None, "the runtime folder is made first"
        return DesktopState(
            display=display,
            width=self.settings.width,
            height=self.settings.height,
            bus_address=self._bus_address,
            a11y_address=self._a11y_address,
            runtime_dir=self._runtime_dir,
            processes=list(self._records),
            tag=self._tag,
            session=self._session,
            wayland_display=self._wayland_display,
            server=self._server,
            extra_env=dict(self._extra_env),
        )

    def detach(self) -> DesktopState:
        """Leave the desktop running after this process exits; return what stops it later."""
        state = self.state()
        self._release_janitor(janitor.KEEP)
        for process in self._children:
            # We will never wait for them: mark them done so Popen does not warn at exit.
            process.returncode = 0
        self._children.clear()
        self._records.clear()
        self._bus_address = self._a11y_address = self._runtime_dir = None
        self._display = self._tag = self._wayland_display = None
        self._extra_env = {}
        self.desktop = None
        return state

    def stop(self) -> None:
        """End the apps that ran on the desktop, and what they forked; then the desktop."""
        if self._display is not None:
            stop_desktop_processes(self._state(self._display))
        else:  # the display server never came up: nothing can have run on it
            _stop_processes(list(reversed(self._records)))
        for process in self._children:
            # Ended, but a many-threaded one (gnome-shell) reads as gone while its other
            # threads still wind down, and can be reaped only once they have.
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=REAP_WAIT)
        self._children.clear()
        self._records.clear()
        if self._runtime_dir is not None:
            shutil.rmtree(self._runtime_dir, ignore_errors=True)
            self._runtime_dir = None
        self._bus_address = self._a11y_address = None  # a second stop() does nothing
        self._display = self._tag = self._wayland_display = None
        self.desktop = None
        self._release_janitor(janitor.DONE)

    def _release_janitor(self, word: bytes) -> None:
        if self._lifeline is not None:
            lifeline, self._lifeline = self._lifeline, None
            with contextlib.suppress(OSError):
                janitor.release(lifeline, word)


def stop_desktop_processes(state: DesktopState) -> None:
    """End the desktop's apps (and what they forked) while its display server still runs;
    then the services our buses activated, what we spawned (newest first), and last
    whatever was started in between. `state.server` names the desktop's display server
    among the spawned (its clients are the desktop's): Xvfb, or a compositor listening on
    the Wayland socket."""
    spawned, bus_address, a11y_address = state.processes, state.bus_address, state.a11y_address
    services: dict[int, ProcessRecord] = {}
    if bus_address is not None:
        for name, pid in _run_async(lambda: _service_pids(bus_address, a11y_address)).items():
            record = _record(name, pid)
            if record is not None and pid != os.getpid():
                services[pid] = record
        addresses = [bus_address] + ([a11y_address] if a11y_address else [])
        for record in _activated_by(addresses):
            services.setdefault(record.pid, record)
    spawned_pids = {record.pid for record in spawned}
    services = {pid: record for pid, record in services.items() if pid not in spawned_pids}
    display_server = next((record for record in spawned if record.name == state.server), None)
    own = [*spawned, *services.values()]
    wayland_socket = _socket_path(state.runtime_dir, state.wayland_display)
    reaper = DesktopReaper(state.tag, state.display, display_server, own, wayland_socket)
    reaper.end_apps()
    _stop_processes(list(services.values()))
    _stop_processes(list(reversed(spawned)))
    reaper.end_leftovers()
    shutil.rmtree(state.runtime_dir, ignore_errors=True)


SESSION_CONF = Path("/usr/share/dbus-1/session.conf")
# A file indexer is no part of an agent's desktop: activated by the bus, Tracker's miner runs
# with the bus's environment and crawls the user's HOME (~/ of the caller, whatever HOME the
# apps get), and Files (Nautilus 43) kept a folder "Loading…" for minutes while it did.
# Without it, Files and GTK's file chooser search the folders themselves.
NO_INDEXER = (
    "org.freedesktop.Tracker3.Miner.Files",
    "org.freedesktop.Tracker3.Miner.Extract",
    "org.gnome.Nautilus.Tracker3.Miner.Files",
    "org.gnome.Nautilus.Tracker3.Miner.Extract",
)


def session_bus_config(runtime_dir: str) -> list[str]:
    """dbus-daemon's arguments for a virtual desktop's session bus: the standard session
    configuration, less the file indexers (NO_INDEXER)."""
    if not SESSION_CONF.is_file():
        return ["--session"]
    denied = "".join(f'<deny send_destination="{name}"/>' for name in NO_INDEXER)
    config = Path(runtime_dir) / "session.conf"
    config.write_text(
        '<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"'
        ' "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">\n'
        f"<busconfig><include>{SESSION_CONF}</include>"
        f'<policy context="default">{denied}</policy></busconfig>\n'
    )
    return [f"--config-file={config}"]


def _require_programs(compositor: Compositor | None = None) -> None:
    if compositor is not None:
        missing = [name for name in ("dbus-daemon",) if shutil.which(name) is None]
        missing += compositor.missing()
        if missing:
            raise DesktopUnavailable(
                f"cannot start a virtual {compositor.kind} desktop: {', '.join(missing)} not "
                f"installed. Install them with: sudo apt-get install {compositor.packages} "
                "dbus at-spi2-core"
            )
        return
    missing = [name for name in ("Xvfb", "dbus-daemon", "openbox") if shutil.which(name) is None]
    if missing:
        raise DesktopUnavailable(
            f"cannot start a virtual desktop: {', '.join(missing)} not installed. "
            f"Install them with: sudo apt-get install {APT_PACKAGES}"
        )


def _without_session(environ: Mapping[str, str]) -> dict[str, str]:
    """Our environment without the session we run in (its displays, buses and tags): what
    a new desktop's own processes start from."""
    dropped = (
        "DISPLAY",
        "WAYLAND_DISPLAY",
        "DBUS_SESSION_BUS_ADDRESS",
        "DBUS_SYSTEM_BUS_ADDRESS",
        "SWAYSOCK",
        "XDG_SESSION_TYPE",
        "XDG_CURRENT_DESKTOP",
        "XDG_RUNTIME_DIR",
        TAG_ENV,
    )
    return {key: value for key, value in environ.items() if key not in dropped}


def _bus_path(runtime_dir: str) -> str:
    return f"unix:path={os.path.join(runtime_dir, 'bus')}"


def _socket_path(runtime_dir: str | None, wayland_display: str | None) -> str | None:
    if runtime_dir is None or wayland_display is None:
        return None
    return os.path.join(runtime_dir, wayland_display)


def _wayland_name(kind: str) -> str:
    """A name for a Wayland desktop, "sway-1", not taken by a started one's state file."""
    taken = {path.stem for path in state_dir().glob("*.json")}
    number = 1
    while f"{kind}-{number}" in taken:
        number += 1
    return f"{kind}-{number}"


# ---------------------------------------------------------------- the user's desktop


def current_desktop(environ: Mapping[str, str] | None = None) -> Desktop:
    """The display and session bus of the environment: the user's own, or one of our
    virtual desktops that this process was started on."""
    env = os.environ if environ is None else environ
    if is_wayland(env):
        return _current_wayland(env)
    display = env.get("DISPLAY")
    if not display:
        hint = (
            ""
            if shutil.which("Xvfb")
            else f"; for a virtual desktop install: sudo apt-get install {APT_PACKAGES}"
        )
        raise DesktopUnavailable(f"no display: DISPLAY is not set{hint}")
    width, height = _screen_size(display)
    bus_address = env.get("DBUS_SESSION_BUS_ADDRESS")
    runtime_bus = Path(env.get("XDG_RUNTIME_DIR", "/nonexistent")) / "bus"
    if bus_address is None and runtime_bus.exists():
        bus_address = f"unix:path={runtime_bus}"
    # A display of one of our virtual desktops (a batch task's round, `desktop start`) is
    # treated as one: its apps get the throw-away profiles kept in its runtime folder.
    ours = Path(env.get("XDG_RUNTIME_DIR", "")).name.startswith(janitor.DESKTOP_RUNTIME_PREFIX)
    return Desktop(display, desktop_env(display, bus_address, env), width, height, virtual=ours)


def _current_wayland(env: Mapping[str, str]) -> Desktop:
    """The Wayland session of the environment: its compositor's socket and output size."""
    runtime = runtime_dir_of(env)
    name = env.get("WAYLAND_DISPLAY") or "wayland-0"
    try:
        with Connection.open({**env, "XDG_RUNTIME_DIR": runtime}, DBUS_TIMEOUT) as wayland:
            width, height = bind_output(wayland).logical_size
    except WaylandError as error:
        raise DesktopUnavailable(f"the Wayland session is not usable: {error}") from None
    bus_address = env.get("DBUS_SESSION_BUS_ADDRESS")
    if bus_address is None and (Path(runtime) / "bus").exists():
        bus_address = f"unix:path={Path(runtime) / 'bus'}"
    ours = Path(runtime).name.startswith(janitor.DESKTOP_RUNTIME_PREFIX)
    session = wayland_env(env, wayland_display=name, runtime_dir=runtime, bus_address=bus_address)
    return Desktop(name, session, width, height, virtual=ours)


@contextlib.contextmanager
def open_desktop(settings: DesktopSettings) -> Iterator[Desktop]:
    """The desktop the settings ask for: "current", "virtual", "auto" (current if any), or
    a desktop started with `roundhouse desktop start` (":3", "sway-1")."""
    if settings.mode not in ("auto", "virtual", "current"):
        yield started_desktop(settings.mode)
        return
    session = os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
    if settings.mode == "current" or (settings.mode == "auto" and session):
        try:
            yield current_desktop()
            return
        except DesktopUnavailable as error:
            if settings.mode == "current":
                raise
            log.info("the current session is not usable (%s); starting a virtual desktop", error)
    with VirtualDesktop(settings) as desktop:
        yield desktop


def started_desktop(display: str) -> Desktop:
    """The desktop `roundhouse desktop start` left running on `display`."""
    for _path, state in detached_states():
        if state.display == display and state_alive(state):
            return detached_desktop(state)
    raise DesktopUnavailable(
        f"no started desktop on {display}; `roundhouse desktop status` lists them"
    )


# ---------------------------------------------------------------- detached desktops


def state_dir() -> Path:
    """Where started desktops are listed: the user's runtime folder, whichever session
    this runs in (a shell in a Wayland desktop of ours has that desktop's runtime folder,
    and must still find the others), else ~/.cache."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and Path(runtime).name.startswith(janitor.DESKTOP_RUNTIME_PREFIX):
        runtime = f"/run/user/{os.getuid()}"
    base = Path(runtime) if runtime and os.path.isdir(runtime) else Path.home() / ".cache"
    return base / "roundhouse" / "desktops"


def start_detached(settings: DesktopSettings) -> tuple[Desktop, Path]:
    """Start a virtual desktop that outlives this process; its pids go to a state file."""
    virtual = VirtualDesktop(settings)
    desktop = virtual.start()
    state = virtual.state()
    path = state_dir() / f"{desktop.display.lstrip(':')}.json"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(state.to_json())
    except OSError:
        virtual.stop()
        raise
    virtual.detach()
    return desktop, path


def detached_states() -> list[tuple[Path, DesktopState]]:
    found = []
    for path in sorted(state_dir().glob("*.json")):
        try:
            found.append((path, DesktopState.from_json(path.read_text())))
        except (OSError, ValueError, TypeError, KeyError) as error:
            log.warning("ignoring unreadable desktop state %s: %s", path, error)
    return found


def state_alive(state: DesktopState) -> bool:
    return any(alive(record) for record in state.processes if record.name == state.server)


def stop_detached(state: DesktopState, path: Path) -> None:
    stop_desktop_processes(state)
    path.unlink(missing_ok=True)


def detached_desktop(state: DesktopState) -> Desktop:
    """The Desktop of a detached virtual desktop, to run commands on it."""
    if state.wayland_display is not None:
        env = wayland_env(
            {**_without_session(os.environ), **({TAG_ENV: state.tag} if state.tag else {})},
            wayland_display=state.wayland_display,
            runtime_dir=state.runtime_dir,
            bus_address=state.bus_address,
            current_desktop=CURRENT_DESKTOP.get(state.session),
            virtual=True,
        )
        env.update(state.extra_env)
    else:
        env = desktop_env(
            state.display, state.bus_address, runtime_dir=state.runtime_dir, tag=state.tag
        )
    return Desktop(state.display, env, state.width, state.height, virtual=True)
