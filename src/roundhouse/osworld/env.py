"""An OSWorld environment on a roundhouse virtual desktop: what OSWorld's Ubuntu VM gives a
task, without the VM.

    async with OsworldDesktop(work, files=cache) as env:
        await env.run(["python", "-c", "import pyautogui; pyautogui.click(960, 540)"])

Each environment is a batch task's desktop and home (suite/environment.py: a fresh virtual
desktop of the session kind asked for, X11 by default, at OSWorld's 1920x1080) with:
- the home laid out as Ubuntu makes it (Desktop, Documents, Downloads...), read for
  OSWorld's /home/user (places.py), given to every process of the desktop, the services its
  session bus starts included (dconf, the terminal server): settings written with gsettings
  live in that home and die with it;
- the commands OSWorld's steps call: `python` and `python3` with pyautogui importable (a
  folder of shims ahead of PATH; on a Wayland session, our pyautogui: sessions.py);
  `sudo` runs as the VM's does for a user who knows the password;
- Ubuntu's Ctrl+Alt+T, which opens a terminal (GNOME Terminal) in the home folder, where
  the display server lets it be bound (its backend's bind_keys);
- Chromium for `google-chrome`, with DevTools on a port of this environment's own;
- windows at their own size, as the VM's GNOME places them (its backend's float_windows);
- GIMP, LibreOffice, Thunderbird, VLC and Chrome as OSWorld's VM starts them (apps.py):
  profiles in the home, VLC's HTTP interface on a port of the environment's own, main
  windows maximised where the VM's are.

Every process started here carries the desktop's tag, so stopping the desktop ends them all.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shlex
import shutil
import signal
import socket
import struct
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from roundhouse.config import DesktopSettings
from roundhouse.devices.contract import Rect
from roundhouse.devices.linux.atspi.client import AtspiClient
from roundhouse.devices.linux.desktops.desktop import Desktop
from roundhouse.devices.linux.display.backends import open_display
from roundhouse.devices.linux.display.base import DisplayServer
from roundhouse.devices.linux.display.shortcuts import Listener, Shortcut
from roundhouse.osworld.a11y_xml import desktop_xml
from roundhouse.osworld.apps import APP_ENVIRONMENT, Applications
from roundhouse.osworld.files import FileCache
from roundhouse.osworld.places import Places
from roundhouse.osworld.sessions import TERMINAL_SHORTCUT
from roundhouse.suite.environment import TaskDesktop

log = logging.getLogger(__name__)

OSWORLD_SCREEN = (1920, 1080)
COMMAND_TIMEOUT = 120.0  # OSWorld's server gives a command as long
USER_DIRS = ("Desktop", "Documents", "Downloads", "Music", "Pictures", "Public", "Templates",
             "Videos")  # fmt: skip
CHROME_NAMES = frozenset({"google-chrome", "google-chrome-stable", "chrome", "chromium",
                          "chromium-browser"})  # fmt: skip
CHROME_PROFILE = ".config/google-chrome"  # where OSWorld's getters read Chrome's files
TERMINAL = ("gnome-terminal",)
FAMILY_LOCAL = 256  # an X authority entry for a display of this host
STANDIN = Path(__file__).resolve().parent / "standin"  # modules for a Wayland session


@dataclass(frozen=True)
class CommandOutput:
    """What OSWorld's /execute answers: stdout, stderr and the exit status."""

    output: str
    error: str
    returncode: int


@dataclass
class OsworldEnv:
    """One task's environment (see the module's docstring)."""

    desktop: Desktop
    places: Places
    home: Path
    cache: Path  # where getters put the files they fetch (OSWorld's cache/<task id>)
    files: FileCache | None
    devtools_port: int
    display: DisplayServer
    apps: Applications
    launched: list[subprocess.Popen[bytes]] = field(default_factory=list)
    _atspi: AtspiClient | None = None

    @property
    def vlc_port(self) -> int:
        return self.apps.vlc_port

    @property
    def env(self) -> dict[str, str]:
        return dict(self.desktop.env)

    @property
    def screen(self) -> Rect:
        return Rect(left=0, top=0, right=self.desktop.width, bottom=self.desktop.height)

    async def accessibility(self) -> AtspiClient:
        """A client of the desktop's accessibility bus, connected on first use."""
        if self._atspi is None:
            client = AtspiClient()
            await client.connect(self.desktop)
            self._atspi = client
        return self._atspi

    async def accessibility_xml(self) -> str:
        """The desktop's tree in OSWorld's XML (its /accessibility)."""
        return await desktop_xml(await self.accessibility(), self.screen)

    async def close(self) -> None:
        if self._atspi is not None:
            await self._atspi.close()
            self._atspi = None

    def expand(self, argv: Sequence[str]) -> list[str]:
        """OSWorld's paths read for this desktop; '~/' at an argument's start is the home."""
        expanded = []
        for arg in argv:
            arg = self.places.local(arg)
            expanded.append(str(self.home) + arg[1:] if arg.startswith("~/") else arg)
        return expanded

    def command(self, command: str | Sequence[str], shell: bool) -> list[str]:
        """The argv that runs an OSWorld command here (a string is split unless `shell`)."""
        if shell:
            text = command if isinstance(command, str) else " ".join(command)
            return ["/bin/sh", "-c", self.places.local(text)]
        argv = shlex.split(command) if isinstance(command, str) else list(command)
        if not argv:
            raise ValueError("an empty command")
        return self.app_command(self.expand(argv))

    def app_command(self, argv: list[str]) -> list[str]:
        """Chromium for Chrome, with this environment's DevTools port and OSWorld's profile
        folder; any application with the switches that expose its accessibility tree."""
        argv = self.apps.command(argv)
        if argv and Path(argv[0]).name in CHROME_NAMES:
            browser = shutil.which("chromium") or shutil.which("chromium-browser") or argv[0]
            rest = [a for a in argv[1:] if not a.startswith("--remote-debugging-port")]
            argv = [
                browser,
                f"--remote-debugging-port={self.devtools_port}",
                "--remote-allow-origins=*",
                f"--user-data-dir={self.home / CHROME_PROFILE}",
                *rest,
            ]
        return self.desktop.app_command(argv)

    def spawn(self, argv: Sequence[str], cwd: Path | None = None) -> subprocess.Popen[bytes]:
        """Start a program on the desktop and leave it running (OSWorld's launch)."""
        process = subprocess.Popen(
            list(argv),
            cwd=cwd or self.home,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        self.launched.append(process)
        self.apps.started(argv)
        return process

    async def run(
        self,
        argv: Sequence[str],
        timeout: float = COMMAND_TIMEOUT,
        cwd: Path | None = None,
        *,
        merge_stderr: bool = False,
    ) -> CommandOutput:
        """Run a command to its end on the desktop (OSWorld's execute), in the home folder
        (stderr into the output with `merge_stderr`). A command that outlives `timeout` is
        killed with everything it started."""
        process = await asyncio.create_subprocess_exec(
            *argv,
            cwd=cwd or self.home,
            env=self.env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT if merge_stderr else asyncio.subprocess.PIPE,
            start_new_session=True,
        )
        try:
            stdout, stderr = await asyncio.wait_for(process.communicate(), timeout)
        except TimeoutError:
            raise TimeoutError(f"{shlex.join(argv)[:200]} ran over {timeout:g} s") from None
        finally:
            if process.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                await process.wait()
        assert process.returncode is not None
        error = stderr.decode(errors="replace") if stderr is not None else ""
        return CommandOutput(stdout.decode(errors="replace"), error, process.returncode)

    def open_terminal(self) -> None:
        """A terminal in the home folder, as Ctrl+Alt+T opens one on Ubuntu."""
        self.spawn(TERMINAL)


class OsworldDesktop:
    """`async with OsworldDesktop(work) as env:` a fresh environment in `work` (its home,
    cache and shims live there), stopped and ended on exit. The desktop and its home are a
    batch task's like any other (suite/environment.py), of the session kind asked for."""

    def __init__(
        self,
        work: Path,
        *,
        files: FileCache | None = None,
        size: tuple[int, int] = OSWORLD_SCREEN,
        password: str = "password",
        session: str | None = None,
        shipped: bool = False,
    ) -> None:
        self.work = work
        self.files = files
        self.size = size
        self.password = password
        settings = DesktopSettings(session=session, shipped=shipped, width=size[0], height=size[1])
        self._task = TaskDesktop(settings, work / "home", more=self._variables)
        self._display: DisplayServer | None = None
        self._shortcuts: Listener | None = None
        self.env: OsworldEnv | None = None

    async def __aenter__(self) -> OsworldEnv:
        try:
            return await self._prepare(await self._task.start())
        except BaseException:
            await self.stop()
            raise

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    def _variables(self, desktop: Desktop) -> dict[str, str]:
        return environment(desktop, self.work / "bin")

    async def _prepare(self, desktop: Desktop) -> OsworldEnv:
        home, cache, shims = self._task.home, self.work / "cache", self.work / "bin"
        for folder in (cache, shims):
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(parents=True)
        prepare_home(home, desktop)
        write_shims(shims, STANDIN if desktop.wayland else None)
        backend = desktop.backend
        if backend.float_windows is not None:
            backend.float_windows(desktop.env)
        apps = Applications(home, shims, desktop.env, backend.when_shown, vlc_port=free_port())
        apps.prepare()
        self._display = open_display(desktop)
        self.env = OsworldEnv(
            desktop=desktop,
            places=Places(
                str(home),
                desktop.width,
                desktop.height,
                self.password,
                runtime=desktop.env.get("XDG_RUNTIME_DIR"),
            ),  # fmt: skip
            home=home,
            cache=cache,
            files=self.files,
            devtools_port=free_port(),
            display=self._display,
            apps=apps,
        )
        if backend.bind_keys is not None:
            terminal = Shortcut(TERMINAL_SHORTCUT, self.env.open_terminal)
            self._shortcuts = backend.bind_keys(desktop.env, [terminal])
            self._shortcuts.start()
        return self.env

    async def stop(self) -> None:
        if self.env is not None:
            await self.env.close()
        if self._shortcuts is not None:
            self._shortcuts.stop()
            self._shortcuts = None
        if self._display is not None:
            self._display.close()
            self._display = None
        launched = self.env.launched if self.env is not None else []
        await self._task.stop()
        for process in launched:  # ended with the desktop: collected, not left as zombies
            try:
                process.wait(timeout=1)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self.env = None


def prepare_home(home: Path, desktop: Desktop) -> None:
    """An Ubuntu user's fresh home: the user folders, and on X11 a ~/.Xauthority for the
    display (python-xlib, under pyautogui, refuses to connect without one, and prints a
    warning on stdout, into the command's output, when it holds no entry)."""
    for name in USER_DIRS:
        (home / name).mkdir(parents=True, exist_ok=True)
    lines = [f'XDG_{name.upper()}_DIR="$HOME/{name}"' for name in USER_DIRS if name != "Public"]
    lines.append('XDG_PUBLICSHARE_DIR="$HOME/Public"')
    lines = [line.replace("XDG_DOWNLOADS_DIR", "XDG_DOWNLOAD_DIR") for line in lines]
    (home / ".config").mkdir(exist_ok=True)
    (home / ".config" / "user-dirs.dirs").write_text("\n".join(lines) + "\n", encoding="utf-8")
    if not desktop.wayland:
        write_xauthority(home / ".Xauthority", desktop.display)


def write_xauthority(path: Path, display: str) -> None:
    """One MIT-MAGIC-COOKIE-1 entry for `display` on this host. The virtual desktop's Xvfb
    checks no cookie; the entry only has to be there."""
    number = display.lstrip(":").split(".")[0].encode()
    fields = [socket.gethostname().encode(), number, b"MIT-MAGIC-COOKIE-1", os.urandom(16)]
    entry = struct.pack(">H", FAMILY_LOCAL) + b"".join(
        struct.pack(">H", len(value)) + value for value in fields
    )
    path.write_bytes(entry)


def write_shims(folder: Path, standin: Path | None = None) -> None:
    """`python` and `python3` that can import pyautogui (this Python, whose environment has
    it), ahead of the system's on PATH; with `standin`, its modules first (a Wayland
    session's pyautogui: standin/pyautogui.py)."""
    path = f'export PYTHONPATH="{standin}${{PYTHONPATH:+:$PYTHONPATH}}"\n' if standin else ""
    for name in ("python", "python3"):
        shim = folder / name
        shim.write_text(f'#!/bin/sh\n{path}exec "{sys.executable}" "$@"\n', encoding="utf-8")
        shim.chmod(0o755)


def environment(desktop: Desktop, shims: Path) -> dict[str, str]:
    """What OSWorld's tasks add to a task desktop's environment: the shims first on PATH,
    settings kept by dconf in the home (the virtual desktop keeps them in memory, which
    forgets them between two gsettings commands), and on X11 the home's X authority."""
    home = Path(desktop.env["HOME"])
    added = {
        "PATH": f"{shims}{os.pathsep}{desktop.env.get('PATH', os.defpath)}",
        "GSETTINGS_BACKEND": "dconf",
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    if not desktop.wayland:
        added["XAUTHORITY"] = str(home / ".Xauthority")
    added.update(APP_ENVIRONMENT)
    return added


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
