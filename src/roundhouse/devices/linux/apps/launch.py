"""Starting an application on a desktop and waiting for its window.

    launcher = Launcher(windows, desktop.env, desktop.app_command)
    launched = await launcher.launch("text editor")   # the first new window

What to start is launcher.resolve's choice (pure); this runs it with the desktop's
environment and watches the display server's window list (display.base.Windows), so it
works the same on every display server.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shlex
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from roundhouse.core.polling import within_async
from roundhouse.devices.contract import WindowInfo
from roundhouse.devices.linux.apps.launcher import Applications, LaunchError, resolve
from roundhouse.devices.linux.display.base import Closing, WindowError, Windows

log = logging.getLogger(__name__)
# Seconds an application gets to open its window. LibreOffice and Chromium start in 5-15 s
# here; cold, beside another task's, on a slower machine, 20 s is too close to that.
LAUNCH_TIMEOUT = 60.0
# A single-instance application (GApplication: GNOME Text Editor, Calculator, Files) started
# a second time hands the request to the instance running and exits 0 at once; that one
# opens a new window, or raises one it has. Past this many seconds without a new window,
# the launch is the running instance's window.
HANDOVER_GRACE = 2.0

_still_running: list[subprocess.Popen[bytes]] = []


@dataclass(frozen=True)
class Launched:
    """What launch opened, and what it tried before: the tool's result names both."""

    window: WindowInfo
    started: str  # the candidate whose window this is: "gedit — Text Editor"
    failed: tuple[str, ...] = ()  # each tried before, with why: "Broken — Text Editor: ..."


class Launcher(Closing):
    """Starts applications with the desktop's environment; keeps what it started."""

    def __init__(
        self,
        windows: Windows,
        env: Mapping[str, str],
        app_command: Callable[[list[str]], list[str]] | None = None,
        startup: Callable[[], dict[str, str]] | None = None,
    ) -> None:
        """`env` and `app_command` (Desktop.env, Desktop.app_command) prepare launched apps:
        the desktop's buses, and the switches that make toolkits expose their trees;
        `startup` (DisplayServer.startup) what each gets to be given the focus."""
        self._windows = windows
        self._env = dict(env)
        self._app_command = app_command
        self._startup = startup
        self._children: list[subprocess.Popen[bytes]] = []

    def close(self) -> None:
        # Launched apps belong to the desktop and outlive this launcher. Keep their Popen
        # objects referenced, so they are reaped later instead of warning when collected.
        _still_running.extend(child for child in self._children if child.poll() is None)
        self._children.clear()

    def launched(self) -> list[subprocess.Popen[bytes]]:
        """The processes this launcher started, in order (they may have ended)."""
        return list(self._children)

    def kill_launched(self) -> None:
        """Kill the applications this launcher started (tests and one-shot commands)."""
        for child in self._children:
            if child.poll() is None:
                child.kill()
            child.wait()
        self._children.clear()

    async def launch(self, request: str, timeout: float = LAUNCH_TIMEOUT) -> Launched:
        """Start what `request` names (launcher.resolve: "text editor", "gedit", a command
        line) and return its first new window. The candidates are tried in turn: one that
        exits with an error or opens no window within `timeout` is killed, and the next
        one tried; when none opens a window, the error says what each did."""
        try:
            apps = await asyncio.to_thread(Applications.load, self._env)
            candidates = resolve(request, apps)
        except LaunchError as error:
            raise WindowError(str(error)) from None
        failed: list[str] = []
        for candidate in candidates:
            try:
                window = await self._start(candidate.argv, timeout)
            except WindowError as error:
                log.info("launching %r: %s failed: %s", request, candidate.label, error)
                failed.append(f"{candidate.label}: {error}")
                continue
            return Launched(window, candidate.label, tuple(failed))
        raise WindowError(f"could not start {request.strip()!r}: " + "; ".join(failed))

    async def _start(self, argv: Sequence[str], timeout: float) -> WindowInfo:
        """Run `argv` and wait for a new window; kill it if none comes or it fails."""
        command = self._app_command(list(argv)) if self._app_command else list(argv)
        before = {w.xid for w in self._windows.list_windows()}
        try:
            env = {**self._env, **(self._startup() if self._startup else {})}
            child = subprocess.Popen(
                command,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,  # our Ctrl-C must not reach the application
            )
        except OSError as err:
            raise WindowError(f"cannot start {shlex.join(command)}: {err}") from err
        self._children.append(child)
        _still_running[:] = [old for old in _still_running if old.poll() is None]
        handed_over: float | None = None  # when the child exited 0 without a window

        def shown() -> WindowInfo | None:
            nonlocal handed_over
            # The window manager lists a window before it maps its frame: wait for both.
            windows = self._windows.list_windows()
            new = [w for w in windows if w.xid not in before and self._windows.viewable(w.xid)]
            if new:
                # Prefer the child's own window; single-instance apps open it from another pid.
                mine = [w for w in new if w.pid == child.pid]
                return (mine or new)[0]
            code = child.poll()
            if code not in (None, 0):
                self._forget(child)
                raise WindowError(f"{shlex.join(command)} exited with status {code}")
            if code == 0:
                handed_over = handed_over or time.monotonic()
                if time.monotonic() - handed_over > HANDOVER_GRACE:
                    return running_window(windows, argv[0])
            return None

        window = await within_async(shown, timeout, every=0.05)
        if window is not None:
            return window
        running = child.poll() is None
        self._forget(child)
        raise WindowError(
            f"{shlex.join(command)} opened no window within {timeout:g} s"
            + (" (killed)" if running else "")
        )

    def _forget(self, child: subprocess.Popen[bytes]) -> None:
        """Kill a failed launch with whatever it started in its session (a terminal's
        shell, a wrapper script's app), so the next candidate starts on a clean slate."""
        try:
            os.killpg(child.pid, signal.SIGKILL)  # start_new_session: its pid is the group
        except ProcessLookupError:
            pass  # it and everything it started have ended
        child.wait()
        self._children.remove(child)


def running_window(windows: Sequence[WindowInfo], program: str) -> WindowInfo | None:
    """The window (the active one first) of a process running `program`: the instance a
    second start of a single-instance application handed its request to."""
    path = shutil.which(program)
    if path is None:
        return None
    wanted = os.path.realpath(path)
    ordered = sorted(windows, key=lambda window: not window.active)
    return next((w for w in ordered if w.pid is not None and _runs(w.pid, wanted)), None)


def _runs(pid: int, executable: str) -> bool:
    try:
        return os.path.realpath(f"/proc/{pid}/exe") == executable
    except OSError:
        return False
