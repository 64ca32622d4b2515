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

    kind: str  # "sway", "gnome", "kde"
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

    kind: str = "sway"
    packages: str = "sway"
    server: str = "sway"

    def programs(self) -> list[str]:
        return ["sway"] + (["setpriv"] if os.geteuid() == 0 else [])

    def prepare(self, runtime_dir: Path, width: int, height: int) -> list[Spawn]:
        config = runtime_dir / "sway.conf"
        # No XWayland: X11-only programs then fail to start, rather than land on a
        # server nothing here can see.
        config.write_text(f"output HEADLESS-1 resolution {width}x{height}\nxwayland disable\n")
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


COMPOSITORS: dict[str, Compositor] = {"sway": Sway()}


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
