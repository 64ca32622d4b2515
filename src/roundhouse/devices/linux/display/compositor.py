"""How a display backend runs its compositor headless, for a virtual desktop: what it needs
started, with which environment, and how to tell it is ready. Each backend's record
(display/backend.py) holds its own Compositor; this is what they share.

Each runs in the desktop's own runtime folder (its sockets go there, so desktops never
meet), with the desktop's session bus, and draws into memory (no GPU, no input devices).
VirtualDesktop (desktops/virtual.py) does the spawning and keeps the pids; this says what
to spawn.
"""

from __future__ import annotations

import os
import shutil
import socket
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from roundhouse.core.polling import until
from roundhouse.devices.linux.system import procfs

# What a bare virtual desktop shows, X11 or sway: a plain colour, so that a screenshot of it
# (the report's first) reads as a desktop, not as a black box that could be a failed capture.
BACKGROUND = (0x3C, 0x6E, 0x91)
NOBODY = 65534  # sway refuses to run as root: as root, it runs as nobody
# Seconds a display server gets to be ready. GNOME Shell beside a whole test run and a
# benchmark on two cores once took over 15 s to answer its first Eval.
READY_TIMEOUT = 30.0


class CompositorUnavailable(RuntimeError):
    """The compositor is not installed or did not come up; the message says what to do."""


class Spawner(Protocol):
    """What starts a compositor's processes and keeps their pids (the virtual desktop)."""

    def spawn(
        self, name: str, argv: list[str], env: Mapping[str, str], log: Path | None = None
    ) -> None:
        """Start a program; what it writes goes to `log` where given, else nowhere."""
        ...

    def spawn_reading(
        self, name: str, argv: list[str], fd_flag: str, env: Mapping[str, str]
    ) -> str:
        """Start a program that says it is ready by writing a line to a file descriptor
        (`fd_flag` names it: "-displayfd", "--print-address="); the line."""
        ...


# The second monitor of a two-monitor virtual desktop: its pixels, and its scale where the
# compositor scales outputs by fractions (sway; on X11 a monitor has no scale of its own).
SECOND_MONITOR = (1920, 1200)
SECOND_SCALE = 1.5


@dataclass(frozen=True)
class Started:
    """A compositor that is up: its display (":3", or its Wayland socket's name) and what
    the session's environment gains (SWAYSOCK, a private system bus's address)."""

    display: str
    env: dict[str, str] = field(default_factory=dict)
    # The whole desktop's size in its own pixels (every monitor), where it is not the first
    # monitor's alone.
    size: tuple[int, int] | None = None


@dataclass(frozen=True)
class Headless:
    """Where and how a virtual desktop's display server runs."""

    base: Mapping[str, str]  # the desktop's environment: its runtime folder, bus and tag
    runtime_dir: Path
    size: tuple[int, int]
    # With the security its distributions ship (GNOME Shell without unsafe mode, KWin with
    # its permission checks), as a person's session has it, not opened up for the agent.
    shipped: bool = False
    # How many monitors (the first of `size`), and the keyboard layout its keys are read
    # with (XKB's name; "": US). A compositor that cannot make them refuses at once.
    monitors: int = 1
    layout: str = ""

    @property
    def xkb(self) -> tuple[str, str]:
        """The layout and its variant as XKB takes them: "us(dvorak)" is ("us", "dvorak")."""
        name, _, variant = (self.layout or "us").partition("(")
        return name, variant.rstrip(")")

    def refuse(self, kind: str, layouts: bool = False, monitors: bool = False) -> None:
        """For a compositor whose virtual desktops have one monitor (unless `monitors`) and
        the US layout (unless `layouts`): refuse more, at once."""
        if self.monitors > 1 and not monitors:
            raise CompositorUnavailable(
                f"a virtual {kind} desktop has one monitor here; two monitors run on x11 "
                "(two RandR monitors on one Xvfb screen), sway and kde (two outputs, the "
                "second at scale 1.5)"
            )
        if self.layout and not layouts:
            raise CompositorUnavailable(
                f"a virtual {kind} desktop reads keys in the US layout here; --layout runs "
                "on x11, sway, labwc, kde and gnome (not --shipped)"
            )


@dataclass(frozen=True)
class Compositor:
    """How a backend's display server runs headless for a virtual desktop."""

    packages: str  # Debian packages (the same names on Debian 12 and 13)
    server: str  # the display server's process name: the desktop lives while it does

    def programs(self) -> list[str]:
        raise NotImplementedError

    def start(self, spawner: Spawner, at: Headless) -> Started:
        """Write what it needs into the runtime folder and start its processes, once the
        desktop's session bus runs (`at` says with what)."""
        raise NotImplementedError

    def ready(self, env: Mapping[str, str], timeout: float) -> dict[str, str]:
        """Wait until what the display backend uses answers (its display is up already);
        what the session's environment gains (sway's SWAYSOCK)."""
        return {}

    def missing(self) -> list[str]:
        return [name for name in self.programs() if shutil.which(name) is None]


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


def wait_for_socket(runtime_dir: Path, timeout: float, pattern: str = "wayland-*") -> str:
    """The name of the first Wayland socket in the runtime folder that takes a connection."""

    def listening() -> str | None:
        for path in sorted(runtime_dir.glob(pattern)):
            if path.suffix != ".lock" and path.is_socket() and answers(path):
                return path.name
        return None

    return until(
        listening,
        timeout,
        f"no Wayland socket appeared in {runtime_dir}",
        error=CompositorUnavailable,
    )


def answers(path: Path) -> bool:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        try:
            probe.connect(str(path))
        except OSError:
            return False
    return True


def compositor_env(base: Mapping[str, str], **extra: str) -> dict[str, str]:
    """A compositor's environment: the desktop's, without a display of its own to nest in
    (a compositor that finds WAYLAND_DISPLAY or DISPLAY opens a window there), plus `extra`."""
    env = {key: value for key, value in base.items() if key not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env.update(extra)
    return env


def forks_never_execed(pid: int, proc: Path = procfs.PROC) -> list[int]:
    """The children of process `pid` that still run its own program: forked, and never gone
    on to exec another (one that deadlocked between the two). A child that did exec runs its
    own program. Unreadable entries (another user's, gone meanwhile) are passed over."""
    try:
        program = os.readlink(proc / str(pid) / "exe")
    except OSError:
        return []
    found = []
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = procfs.parse_stat((entry / "stat").read_text())
            if stat is not None and stat.ppid == pid and os.readlink(entry / "exe") == program:
                found.append(int(entry.name))
        except OSError:
            continue
    return found
