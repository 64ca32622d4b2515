"""Top-level windows and applications through EWMH, on one persistent X connection.

The window manager publishes the client windows (_NET_CLIENT_LIST), which one is active
(_NET_ACTIVE_WINDOW), and obeys client messages to activate or close one. Without a
window manager none of this exists, and we say so instead of returning an empty list.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shlex
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from Xlib import X, Xatom, error  # type: ignore[import-untyped, unused-ignore]
from Xlib.display import Display  # type: ignore[import-untyped, unused-ignore]
from Xlib.protocol import event  # type: ignore[import-untyped, unused-ignore]

from roundhouse.devices.contract import Rect, WindowInfo
from roundhouse.devices.linux.launcher import Applications, LaunchError, resolve

log = logging.getLogger(__name__)
# Seconds an application gets to open its window. LibreOffice and Chromium start in 5-15 s
# here; cold, beside another task's, on a slower machine, 20 s is too close to that.
LAUNCH_TIMEOUT = 60.0

_still_running: list[subprocess.Popen[bytes]] = []


class WindowError(RuntimeError):
    """A window or application problem the model (or user) can act on; the text says what."""


@dataclass(frozen=True)
class Launched:
    """What launch opened, and what it tried before: the tool's result names both."""

    window: WindowInfo
    started: str  # the candidate whose window this is: "gedit — Text Editor"
    failed: tuple[str, ...] = ()  # each tried before, with why: "Broken — Text Editor: ..."


class WindowManager:
    """EWMH queries and requests on one display. Calls are serialised on a lock."""

    def __init__(
        self,
        display: str,
        env: Mapping[str, str] | None = None,
        app_command: Callable[[list[str]], list[str]] | None = None,
    ) -> None:
        """`env` and `app_command` (Desktop.env, Desktop.app_command) prepare launched apps:
        the desktop's buses, and the switches that make toolkits expose their trees."""
        self._display = Display(display)
        self._root = self._display.screen().root
        self._env = dict(env) if env is not None else {**os.environ, "DISPLAY": display}
        self._app_command = app_command
        self._lock = threading.Lock()
        self._children: list[subprocess.Popen[bytes]] = []
        self._atoms: dict[str, int] = {}

    def close(self) -> None:
        self._display.close()
        # Launched apps belong to the desktop and outlive this manager. Keep their Popen
        # objects referenced, so they are reaped later instead of warning when collected.
        _still_running.extend(child for child in self._children if child.poll() is None)
        self._children.clear()

    def launched(self) -> list[subprocess.Popen[bytes]]:
        """The processes this manager started, in order (they may have ended)."""
        return list(self._children)

    def kill_launched(self) -> None:
        """Kill the applications this manager launched (tests and one-shot commands)."""
        for child in self._children:
            if child.poll() is None:
                child.kill()
            child.wait()
        self._children.clear()

    def __enter__(self) -> WindowManager:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # --- reading ---

    def list_windows(self) -> list[WindowInfo]:
        """The managed top-level windows, in stacking-independent client-list order."""
        with self._lock:
            xids = self._client_list()
            active = self._active_xid()
            windows = [self._info(xid, active) for xid in xids]
        return [window for window in windows if window is not None]

    def active_window(self) -> WindowInfo | None:
        return next((window for window in self.list_windows() if window.active), None)

    def get(self, xid: int) -> WindowInfo:
        windows = self.list_windows()
        for window in windows:
            if window.xid == xid:
                return window
        raise WindowError(f"no window with id {xid}; windows: {describe(windows)}")

    def find(self, title: str) -> WindowInfo:
        """The window whose title (or application) contains `title`, case-insensitively."""
        windows = self.list_windows()
        return find_window(windows, title)

    def viewable(self, xid: int) -> bool:
        """Whether the window is mapped and on screen (its frame too), so it can be seen."""
        with self._lock:
            window = self._display.create_resource_object("window", xid)
            try:
                return bool(window.get_attributes().map_state == X.IsViewable)
            except (error.BadWindow, error.BadDrawable):
                return False

    def _minimised(self, xid: int) -> bool:
        with self._lock:
            window = self._display.create_resource_object("window", xid)
            try:
                prop = window.get_full_property(self._atom("_NET_WM_STATE"), Xatom.ATOM)
            except (error.BadWindow, error.BadDrawable):
                return False
            return prop is not None and self._atom("_NET_WM_STATE_HIDDEN") in prop.value

    # --- acting ---

    async def activate(self, xid: int, timeout: float = 3.0) -> WindowInfo:
        """Raise and focus a window; return once the window manager reports it active."""
        self.get(xid)  # fails early, naming the windows that exist
        # A window the manager has listed but not mapped yet cannot take the focus; a
        # minimised one is unmapped too, and the activation itself restores it.
        deadline = time.monotonic() + timeout
        if not self._minimised(xid):
            await self._wait(lambda: self.viewable(xid), timeout)
        with self._lock:
            self._send(xid, "_NET_ACTIVE_WINDOW", [2, X.CurrentTime, 0, 0, 0])
        await self._wait(lambda: self._active_xid_locked() == xid, deadline - time.monotonic())
        if self._active_xid_locked() != xid:
            raise WindowError(f"window {xid} did not become active within {timeout:g} s")
        return self.get(xid)

    async def close_window(self, xid: int, timeout: float = 3.0) -> bool:
        """Ask the window to close; True once it is gone (False: it asked something first)."""
        self.get(xid)
        with self._lock:
            self._send(xid, "_NET_CLOSE_WINDOW", [X.CurrentTime, 2, 0, 0, 0])
        await self._wait(lambda: xid not in self._client_list_locked(), timeout)
        return xid not in self._client_list_locked()

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
        before = set(self._client_list_locked())
        try:
            child = subprocess.Popen(
                command,
                env=self._env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,  # our Ctrl-C must not reach the application
            )
        except OSError as err:
            raise WindowError(f"cannot start {shlex.join(command)}: {err}") from err
        self._children.append(child)
        _still_running[:] = [old for old in _still_running if old.poll() is None]
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            # The window manager lists a window before it maps its frame: wait for both.
            new = [w for w in self.list_windows() if w.xid not in before and self.viewable(w.xid)]
            if new:
                # Prefer the child's own window; single-instance apps open it from another pid.
                mine = [w for w in new if w.pid == child.pid]
                return (mine or new)[0]
            code = child.poll()
            if code not in (None, 0):
                self._forget(child)
                raise WindowError(f"{shlex.join(command)} exited with status {code}")
            await asyncio.sleep(0.05)
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

    # --- X plumbing ---

    async def _wait(self, condition: Callable[[], bool], timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not condition() and time.monotonic() < deadline:
            await asyncio.sleep(0.01)

    def _atom(self, name: str) -> int:
        if name not in self._atoms:
            self._atoms[name] = self._display.intern_atom(name)
        return self._atoms[name]

    def _client_list_locked(self) -> list[int]:
        with self._lock:
            return self._client_list()

    def _active_xid_locked(self) -> int | None:
        with self._lock:
            return self._active_xid()

    def _client_list(self) -> list[int]:
        prop = self._root.get_full_property(self._atom("_NET_CLIENT_LIST"), Xatom.WINDOW)
        if prop is None:
            # openbox publishes the list with its first client; until then it only says
            # that it is there.
            check = self._atom("_NET_SUPPORTING_WM_CHECK")
            if self._root.get_full_property(check, Xatom.WINDOW) is not None:
                return []
            raise WindowError(
                "the window manager publishes no _NET_CLIENT_LIST: is one running "
                "(e.g. openbox) on this display?"
            )
        return [int(xid) for xid in prop.value]

    def _active_xid(self) -> int | None:
        prop = self._root.get_full_property(self._atom("_NET_ACTIVE_WINDOW"), Xatom.WINDOW)
        if prop is None or not len(prop.value) or not prop.value[0]:
            return None
        return int(prop.value[0])

    def _info(self, xid: int, active: int | None) -> WindowInfo | None:
        window = self._display.create_resource_object("window", xid)
        try:
            geometry = window.get_geometry()
            origin = window.translate_coords(self._root, 0, 0)
            title = self._title(window)
            wm_class = window.get_wm_class()
            pid_prop = window.get_full_property(self._atom("_NET_WM_PID"), Xatom.CARDINAL)
        except (error.BadWindow, error.BadDrawable):
            return None  # closed while we were reading it
        pid = int(pid_prop.value[0]) if pid_prop is not None and len(pid_prop.value) else None
        # translate_coords gives the root's origin in window coordinates: negate it.
        left, top = -int(origin.x), -int(origin.y)
        rect = Rect(left=left, top=top, right=left + geometry.width, bottom=top + geometry.height)
        application = wm_class[1] if wm_class else _process_name(pid)
        return WindowInfo(
            xid=xid, title=title, application=application, pid=pid, rect=rect, active=xid == active
        )

    def _title(self, window: Any) -> str:
        prop = window.get_full_property(self._atom("_NET_WM_NAME"), self._atom("UTF8_STRING"))
        if prop is not None:
            value = prop.value
            return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
        name = window.get_wm_name()
        return name if isinstance(name, str) else ""

    def _send(self, xid: int, message: str, data: list[int]) -> None:
        window = self._display.create_resource_object("window", xid)
        request = event.ClientMessage(
            window=window, client_type=self._atom(message), data=(32, data)
        )
        mask = X.SubstructureRedirectMask | X.SubstructureNotifyMask
        self._root.send_event(request, event_mask=mask)
        self._display.flush()


def find_window(windows: Iterable[WindowInfo], title: str) -> WindowInfo:
    """Exact title first, then a case-insensitive substring of the title or application."""
    windows = list(windows)
    for window in windows:
        if window.title == title:
            return window
    needle = title.lower()
    for window in windows:
        if needle in window.title.lower() or needle == window.application.lower():
            return window
    raise WindowError(f"no window titled {title!r}; windows: {describe(windows)}")


def describe(windows: Iterable[WindowInfo]) -> str:
    listed = [f"{w.xid} {w.title!r} ({w.application})" for w in windows]
    return "; ".join(listed) or "none"


def _process_name(pid: int | None) -> str:
    if pid is None:
        return ""
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def list_windows(display: str) -> list[WindowInfo]:
    """One-off listing (opens and closes a connection); keep a WindowManager for more."""
    with WindowManager(display) as manager:
        return manager.list_windows()
