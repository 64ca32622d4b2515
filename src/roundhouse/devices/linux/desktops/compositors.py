"""Headless Wayland compositors, as virtual desktops run them: what each needs started,
with which environment, and how to tell it is ready.

Each runs in the desktop's own runtime folder (its sockets go there, so desktops never
meet), with the desktop's session bus, and draws into memory (no GPU, no input devices).
VirtualDesktop does the spawning and keeps the pids; this says what to spawn.
"""

from __future__ import annotations

import os
import shutil
import socket
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from roundhouse.devices.linux.desktops.session import SessionKind
from roundhouse.devices.linux.display.gnome.shell import Shell, prepare_shell
from roundhouse.devices.linux.display.wayland.dbus import DBusCallError, SyncBus

# What a bare virtual desktop shows, X11 or sway: a plain colour, so that a screenshot of it
# (the report's first) reads as a desktop, not as a black box that could be a failed capture.
BACKGROUND = (0x3C, 0x6E, 0x91)
NOBODY = 65534  # sway refuses to run as root: as root, it runs as nobody
READY_TIMEOUT = 15.0


class CompositorUnavailable(RuntimeError):
    """The compositor is not installed or did not come up; the message says what to do."""


@dataclass(frozen=True)
class Spawn:
    """One process to start: its name (for the records), command line and environment."""

    name: str
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)  # added to the desktop's
    # A process that prints an address when ready (dbus-daemon's --print-address=FD):
    # the flag, and the variable the address goes to for the processes after it.
    prints_address: str | None = None
    exports: str | None = None


@dataclass(frozen=True)
class Compositor:
    """How to run one family's compositor headless."""

    kind: SessionKind  # "sway", "gnome", "kde"
    packages: str  # Debian packages (the same names on Debian 12 and 13)
    server: str  # the compositor's process name: the desktop lives while it does

    def programs(self) -> list[str]:
        raise NotImplementedError

    def prepare(self, runtime_dir: Path, width: int, height: int) -> list[Spawn]:
        """Files it needs in the runtime folder; the processes to start, in order."""
        raise NotImplementedError

    def ready(self, env: Mapping[str, str], timeout: float) -> dict[str, str]:
        """Wait until what the display backend uses answers (its socket is up already);
        return what the session's environment gains (sway's SWAYSOCK)."""
        return {}

    def missing(self) -> list[str]:
        return [name for name in self.programs() if shutil.which(name) is None]


@dataclass(frozen=True)
class Sway(Compositor):
    """sway 1.7+: the headless wlroots backend with the pixman renderer. sway will not run
    as root, so as root it runs as nobody, in a runtime folder given to nobody (root's
    clients may still connect: root passes any permission)."""

    kind: SessionKind = "sway"
    packages: str = "sway"
    server: str = "sway"

    def programs(self) -> list[str]:
        return ["sway"] + (["setpriv"] if os.geteuid() == 0 else [])

    def prepare(self, runtime_dir: Path, width: int, height: int) -> list[Spawn]:
        config = runtime_dir / "sway.conf"
        # No XWayland: X11-only programs then fail to start, rather than land on a
        # server nothing here can see.
        red, green, blue = BACKGROUND
        config.write_text(
            f"output HEADLESS-1 resolution {width}x{height}\n"
            f"output * bg #{red:02x}{green:02x}{blue:02x} solid_color\n"  # swaybg paints it
            "xwayland disable\n"
        )
        argv = ["sway", "-c", str(config)]
        if os.geteuid() == 0:
            os.chown(runtime_dir, NOBODY, NOBODY)
            os.chown(config, NOBODY, NOBODY)
            argv = [
                "setpriv",
                f"--reuid={NOBODY}",
                f"--regid={NOBODY}",
                "--clear-groups",
                *argv,
            ]
        env = {
            "WLR_BACKENDS": "headless",
            "WLR_LIBINPUT_NO_DEVICES": "1",
            "WLR_RENDERER": "pixman",
            "WLR_HEADLESS_OUTPUTS": "1",
            "HOME": str(runtime_dir),
        }
        return [Spawn("sway", argv, env)]

    def ready(self, env: Mapping[str, str], timeout: float) -> dict[str, str]:
        runtime = Path(env["XDG_RUNTIME_DIR"])
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for path in runtime.glob("sway-ipc.*.sock"):
                if answers(path):
                    return {"SWAYSOCK": str(path)}
            time.sleep(0.02)
        raise CompositorUnavailable(f"sway's IPC socket did not appear within {timeout:g} s")


@dataclass(frozen=True)
class Gnome(Compositor):
    """GNOME Shell 43+ headless on a virtual monitor, in unsafe mode (its Eval gives the
    windows' positions, its Screenshot serves other programs). It needs a system bus
    (without one it exits at start: a private bus stands in for it), and Mutter's remote
    desktop needs PipeWire (and WirePlumber) for its screen cast."""

    kind: SessionKind = "gnome"
    packages: str = "gnome-shell pipewire wireplumber"
    server: str = "gnome-shell"

    def programs(self) -> list[str]:
        return ["gnome-shell", "pipewire", "wireplumber"]

    def prepare(self, runtime_dir: Path, width: int, height: int) -> list[Spawn]:
        system_bus = f"unix:path={runtime_dir / 'system_bus'}"
        shell = [
            "gnome-shell",
            "--headless",
            "--unsafe-mode",
            "--virtual-monitor",
            f"{width}x{height}",
            "--wayland",
            "--no-x11",
            "--wayland-display",
            "wayland-0",
        ]
        return [
            Spawn(
                "dbus-daemon",
                ["dbus-daemon", "--session", "--nofork", f"--address={system_bus}"],
                prints_address="--print-address=",
                exports="DBUS_SYSTEM_BUS_ADDRESS",
            ),
            Spawn("pipewire", ["pipewire"]),
            Spawn("wireplumber", ["wireplumber"]),
            Spawn(
                "gnome-shell",
                shell,
                {
                    "LIBGL_ALWAYS_SOFTWARE": "1",
                    "XDG_SESSION_TYPE": "wayland",
                    "XDG_CURRENT_DESKTOP": "GNOME",
                    "GSETTINGS_BACKEND": "memory",
                },
            ),
        ]

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


@dataclass(frozen=True)
class Kde(Compositor):
    """KWin 5.27+ on a virtual output, trusting its clients (fake input, screenshots and
    window management are otherwise for programs a desktop file vouches for)."""

    kind: SessionKind = "kde"
    packages: str = "kwin-wayland"
    server: str = "kwin_wayland"

    def programs(self) -> list[str]:
        return ["kwin_wayland"]

    def prepare(self, runtime_dir: Path, width: int, height: int) -> list[Spawn]:
        argv = [
            runnable(shutil.which("kwin_wayland") or "kwin_wayland", copies_folder()),
            "--virtual",
            "--width",
            str(width),
            "--height",
            str(height),
            "--socket",
            "wayland-0",
            "--no-lockscreen",
            "--no-global-shortcuts",
            "--no-kactivities",
        ]
        env = {
            "KWIN_WAYLAND_NO_PERMISSION_CHECKS": "1",
            "KWIN_SCREENSHOT_NO_PERMISSION_CHECKS": "1",
            # Not KWIN_COMPOSE=Q: KWin's screenshots come from its OpenGL compositor
            # (Mesa's software renderer here), and with QPainter it offers none.
            "XDG_SESSION_TYPE": "wayland",
            "XDG_CURRENT_DESKTOP": "KDE",
        }
        return [Spawn("kwin_wayland", argv, env)]

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


def _kwin_scripting(bus: SyncBus) -> bool:
    try:
        bus.call(
            "org.kde.KWin", "/Scripting", "org.kde.kwin.Scripting", "isScriptLoaded", "s", ["-"]
        )
    except DBusCallError:  # no such name or object yet
        return False
    return True


def runnable(program: str, folder: Path) -> str:
    """`program`, or a copy of it in `folder` when it carries file capabilities this
    process may not grant: exec then fails with EPERM (kwin_wayland's cap_sys_resource in
    a container without it). A copy carries none; KWin runs without the extra limits.

    The copy is made once per version of the program (a folder named by its size and
    time; the program keeps its name, which KWin needs to start) and put in place by a
    rename, complete: a file being written cannot be run, and another
    thread's fork (two batch workers starting desktops) holds what we write open until it
    execs, so a copy made for each desktop failed to start with ETXTBSY now and then."""
    try:
        raw = os.getxattr(program, "security.capability")
    except OSError:
        return program
    wanted = int.from_bytes(raw[4:8], "little") | (int.from_bytes(raw[12:16], "little") << 32)
    if not wanted & ~_bounding_set():
        return program
    source = Path(program).stat()
    copy = folder / f"{source.st_size}-{source.st_mtime_ns}" / Path(program).name
    if not copy.exists():
        copy.parent.mkdir(parents=True, exist_ok=True)
        partial = copy.with_name(f"{copy.name}.{os.getpid()}.partial")
        shutil.copy(program, partial)  # copies the mode, not the extended attributes
        os.replace(partial, copy)
    return str(copy)


def copies_folder() -> Path:
    """Where runnable copies of programs are kept (the user's cache)."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "roundhouse" / "bin"


def _bounding_set() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("CapBnd:"):
            return int(line.split()[1], 16)
    return ~0


COMPOSITORS: dict[str, Compositor] = {"sway": Sway(), "gnome": Gnome(), "kde": Kde()}


def wait_for_socket(runtime_dir: Path, timeout: float, pattern: str = "wayland-*") -> str:
    """The name of the first Wayland socket in the runtime folder that takes a connection."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for path in sorted(runtime_dir.glob(pattern)):
            if path.suffix == ".lock" or not path.is_socket():
                continue
            if answers(path):
                return path.name
        time.sleep(0.02)
    raise CompositorUnavailable(f"no Wayland socket appeared in {runtime_dir} within {timeout:g} s")


def answers(path: Path) -> bool:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        try:
            probe.connect(str(path))
        except OSError:
            return False
    return True


def spawn_env(base: Mapping[str, str], spawn: Spawn) -> dict[str, str]:
    """The compositor's environment: the desktop's, without a display of its own to nest
    in (a compositor that finds WAYLAND_DISPLAY or DISPLAY opens a window there)."""
    env = {key: value for key, value in base.items() if key not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env.update(spawn.env)
    return env
