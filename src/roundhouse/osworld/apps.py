"""OSWorld's applications started as its Ubuntu VM starts them: GIMP, LibreOffice (Impress,
Calc, Writer), Thunderbird, VLC and Chrome (Chromium), with their profiles where OSWorld's
getters read them and their windows as the VM shows them.

What the VM has, and what this module gives an environment (env.py calls it):
- profiles under the task's home: LibreOffice's in ~/.config/libreoffice/4 (the VM's user
  profile, whose registrymodifications.xcu a getter reads), not the virtual desktop's
  throw-away one; GIMP's ~/.config/GIMP/2.10 and Thunderbird's ~/.thunderbird are where
  the programs put them when HOME is the task's, Thunderbird taking the default profile
  of profiles.ini (the one a task unpacks: APP_ENVIRONMENT);
- VLC's HTTP interface, which OSWorld's vlc_playing_info reads: its vlcrc turns on the web
  interface with the password "password", as the VM's setup guide has it, on a port of the
  environment's own (the VM's is 8080; tasks side by side need one each); the privacy
  question of a first start is answered, as it was on the VM's image;
- VLC as root: VLC refuses to start as root; the batch may run as root (a container), so
  the environment's `vlc` is a copy of the program whose check asks getppid instead of
  geteuid (VLC's documented way round it), first on PATH;
- windows: OSWorld's VM (GNOME) shows GIMP's, LibreOffice's, Thunderbird's and Chrome's
  main windows maximised (the public runs' first screenshots show GIMP and Chrome so);
  VLC's opens at its own size. A launched program's first normal window is maximised
  when it appears, and `ready` waits for the launched programs' windows, as OSWorld's
  harness waits a minute after a reset before its first screenshot.

Where the backend can (Backend.when_shown: X11's EWMH): on another display server the
windows are left as they open.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shlex
import shutil
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from roundhouse.devices.linux.desktops import apps as desktop_apps
from roundhouse.devices.linux.display.backend import WhenShown

log = logging.getLogger(__name__)

OFFICE_PROFILE = ".config/libreoffice/4"
VLC_CONFIG = ".config/vlc/vlcrc"
VLC_PASSWORD = "password"  # OSWorld's getter asks with this one
WINDOW_WAIT = 60.0  # seconds a launched program may take to show its main window
ROOT_CHECK = (b"geteuid\x00", b"getppid\x00")  # same length: the dynamic symbol's name

# What OSWorld's VM has set in LibreOffice and a first start would otherwise ask: no tip of
# the day or wizard (as on any virtual desktop), and no "Keep current format" question on
# saving a .pptx, .docx or .xlsx (the tasks' postconfig saves with ctrl+s and reads the file
# half a second later).
OFFICE_SETTINGS = (
    *desktop_apps.OFFICE_SETTINGS,
    ("/org.openoffice.Office.Common/Save/Document", "WarnAlienFormat", "false"),
)


# The environment the applications get. Thunderbird (as Firefox) gives each installation a
# profile of its own, keyed by a hash of where it is installed, and made anew where
# installs.ini names none: the profile a task unpacks (its profiles.ini's default) was left
# aside for an empty one, whose account wizard then stood over the window. The legacy rule
# takes profiles.ini's default, as the VM's Thunderbird takes the task's profile.
APP_ENVIRONMENT = {"MOZ_LEGACY_PROFILES": "1"}


@dataclass(frozen=True)
class AppWindow:
    """A program of OSWorld's VM and how its main window shows there."""

    programs: frozenset[str]  # the command names that start it
    window_class: str  # held by its main window's WM_CLASS (lower case)
    maximised: bool


APP_WINDOWS = (
    AppWindow(frozenset({"gimp", "gimp-2.10"}), "gimp", maximised=True),
    AppWindow(
        frozenset({"libreoffice", "soffice", "loimpress", "localc", "lowriter"}),
        "libreoffice",
        maximised=True,
    ),  # fmt: skip
    AppWindow(frozenset({"thunderbird"}), "thunderbird", maximised=True),
    AppWindow(frozenset({"vlc"}), "vlc", maximised=False),
    # Chromium, for the VM's Google Chrome: it opened half the screen wide here (as in
    # e2b's port, whose scores fell with it), where the VM's Chrome fills it.
    AppWindow(
        frozenset(
            {"google-chrome", "google-chrome-stable", "chrome", "chromium", "chromium-browser"}
        ),
        "chromium",
        maximised=True,
    ),  # fmt: skip
)


def vlc_config(port: int) -> str:
    """The VM's VLC settings: the web interface on, its password, no privacy question."""
    return (
        "[qt] # Qt interface\nqt-privacy-ask=0\n\n"
        f"[lua] # Lua interpreter\nhttp-password={VLC_PASSWORD}\n\n"
        f"[core] # core program\nextraintf=http\nhttp-host=127.0.0.1\nhttp-port={port}\n"
    )


def which_app(argv: Sequence[str]) -> AppWindow | None:
    """The program of APP_WINDOWS a command starts (a shell's -c text is read too)."""
    words = list(argv)
    if len(words) >= 3 and Path(words[0]).name in ("sh", "bash", "dash") and words[1] == "-c":
        try:
            words = shlex.split(words[2])
        except ValueError:
            return None
    words = [w for w in words if "=" not in w.split("/")[0]]  # VAR=value before the program
    if not words:
        return None
    name = Path(words[0]).name
    return next((app for app in APP_WINDOWS if name in app.programs), None)


@dataclass
class Applications:
    """The applications of one environment: its home's profiles, its VLC port, the
    programs on its PATH, and the windows it maximises."""

    home: Path
    shims: Path
    env: Mapping[str, str]  # the desktop's
    when_shown: WhenShown | None  # the backend's (Backend.when_shown): X11's
    vlc_port: int
    _watchers: list[threading.Thread] = field(default_factory=list)

    def prepare(self) -> None:
        """The profiles the VM has before any task (see the module's docstring)."""
        settings = self.home / OFFICE_PROFILE / "user" / "registrymodifications.xcu"
        settings.parent.mkdir(parents=True, exist_ok=True)
        settings.write_text(desktop_apps.office_registry(OFFICE_SETTINGS), encoding="utf-8")
        vlcrc = self.home / VLC_CONFIG
        vlcrc.parent.mkdir(parents=True, exist_ok=True)
        vlcrc.write_text(vlc_config(self.vlc_port), encoding="utf-8")
        if os.geteuid() == 0:
            write_rootless_vlc(self.shims / "vlc")

    def command(self, argv: list[str]) -> list[str]:
        """LibreOffice in the home's profile; VLC named by its path as the one on PATH."""
        if not argv:
            return argv
        name = Path(argv[0]).name
        if name == "vlc" and (self.shims / "vlc").exists():
            return [str(self.shims / "vlc"), *argv[1:]]
        office = next((a for a in APP_WINDOWS if a.window_class == "libreoffice"), None)
        if office is not None and name in office.programs:
            if not any(arg.startswith("-env:UserInstallation=") for arg in argv):
                profile = (self.home / OFFICE_PROFILE).as_uri()
                return [argv[0], f"-env:UserInstallation={profile}", *argv[1:]]
        return argv

    def started(self, argv: Sequence[str]) -> None:
        """A program was started: a thread waits for its main window, and maximises it if
        the VM shows it so (it ends with the desktop), where the session can."""
        app = which_app(argv)
        if app is None or self.when_shown is None:
            return
        watcher = threading.Thread(
            target=self.when_shown,
            args=(self.env, app.window_class, app.maximised, WINDOW_WAIT),
            daemon=True,
        )
        watcher.start()
        self._watchers.append(watcher)

    async def ready(self, timeout: float = WINDOW_WAIT) -> None:
        """Wait until the programs started so far show their main windows, as OSWorld's
        harness waits before its first observation (a minute; GIMP's first start takes
        some ten seconds): the agent's first screenshot is the VM's, not a splash."""
        deadline = time.monotonic() + timeout
        for watcher in list(self._watchers):
            await asyncio.to_thread(watcher.join, max(0.0, deadline - time.monotonic()))


def write_rootless_vlc(target: Path) -> None:
    """A copy of VLC whose root check asks getppid (never 0) instead of geteuid."""
    program = shutil.which("vlc", path=os.defpath + ":/usr/bin")
    if program is None:
        return
    data = Path(program).read_bytes()
    old, new = ROOT_CHECK
    if old not in data:
        log.info("%s has no root check to pass: used as it is", program)
        return
    target.write_bytes(data.replace(old, new, 1))
    target.chmod(0o755)
