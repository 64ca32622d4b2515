"""Top-level windows and applications through EWMH, on one persistent X connection.

The window manager publishes the client windows (_NET_CLIENT_LIST), which one is active
(_NET_ACTIVE_WINDOW), and obeys client messages to activate or close one. Without a
window manager none of this exists, and we say so instead of returning an empty list.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from Xlib import X, Xatom, error  # type: ignore[import-untyped, unused-ignore]
from Xlib.display import Display  # type: ignore[import-untyped, unused-ignore]
from Xlib.protocol import event  # type: ignore[import-untyped, unused-ignore]

from roundhouse.devices.contract import Rect, WindowInfo

APPLICATION_DIRS = (
    Path.home() / ".local/share/applications",
    Path("/usr/local/share/applications"),
    Path("/usr/share/applications"),
)
# Field codes of the Exec key (Desktop Entry spec): we launch without files or URLs.
_FIELD_CODES = {"%f", "%F", "%u", "%U", "%i", "%c", "%k", "%d", "%D", "%n", "%N", "%v", "%m"}


_still_running: list[subprocess.Popen[bytes]] = []


class WindowError(RuntimeError):
    """A window or application problem the model (or user) can act on; the text says what."""


@dataclass(frozen=True)
class DesktopEntry:
    id: str  # file name without .desktop, e.g. "org.gnome.gedit"
    name: str
    argv: list[str]
    path: Path
    generic_name: str = ""  # "Text Editor": what people often call the app


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

    async def launch(self, name_or_command: str, timeout: float = 20.0) -> WindowInfo:
        """Start an application by .desktop name or command; return its first new window."""
        argv = resolve_command(name_or_command, self._env)
        if self._app_command is not None:
            argv = self._app_command(argv)
        before = set(self._client_list_locked())
        try:
            child = subprocess.Popen(
                argv,
                env=self._env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,  # our Ctrl-C must not reach the application
            )
        except OSError as err:
            raise WindowError(f"cannot start {shlex.join(argv)}: {err}") from err
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
                raise WindowError(f"{shlex.join(argv)} exited with status {code}")
            await asyncio.sleep(0.05)
        raise WindowError(
            f"{shlex.join(argv)} opened no window within {timeout:g} s "
            f"(still running: {child.poll() is None})"
        )

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


# --- applications ---


def desktop_entries(dirs: Iterable[Path] = APPLICATION_DIRS) -> list[DesktopEntry]:
    """Launchable applications (Type=Application, not hidden), first directory wins."""
    entries: dict[str, DesktopEntry] = {}
    for directory in dirs:
        if not directory.is_dir():
            continue
        for path in sorted(directory.glob("*.desktop")):
            entry = _read_entry(path)
            if entry is not None and entry.id not in entries:
                entries[entry.id] = entry
    return list(entries.values())


def _read_entry(path: Path) -> DesktopEntry | None:
    values: dict[str, str] = {}
    in_main = False
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    for line in lines:
        line = line.strip()
        if line.startswith("["):
            in_main = line == "[Desktop Entry]"
        elif in_main and "=" in line:
            key, _, value = line.partition("=")
            values.setdefault(key.strip(), value.strip())
    if values.get("Type") != "Application" or "Exec" not in values:
        return None
    if values.get("Hidden") == "true" or values.get("NoDisplay") == "true":
        return None
    try:
        argv = [arg for arg in shlex.split(values["Exec"]) if arg not in _FIELD_CODES]
    except ValueError:
        return None
    if not argv:
        return None
    name = values.get("Name", path.stem)
    return DesktopEntry(path.stem, name, argv, path, values.get("GenericName", ""))


def resolve_command(
    name_or_command: str,
    env: Mapping[str, str],
    entries: Iterable[DesktopEntry] | None = None,
) -> list[str]:
    """The argv for an application: its .desktop entry by name ('Mousepad', 'gedit'), id
    ('org.gnome.gedit') or generic name ('Text Editor'); else a command line
    ('mousepad /tmp/a.txt'); else an entry whose program has that name."""
    wanted = name_or_command.strip()
    if not wanted:
        raise WindowError("no application given")
    known = desktop_entries() if entries is None else list(entries)
    lowered = wanted.lower()
    for entry in known:
        stem = entry.id.lower()
        if lowered in (stem, entry.name.lower()) or stem.endswith("." + lowered):
            return entry.argv
    for entry in known:  # "Text Editor": the generic name, when no entry is called that
        if entry.generic_name.lower() == lowered:
            return entry.argv
    argv = shlex.split(wanted)
    if shutil.which(argv[0], path=env.get("PATH")):
        return argv
    for entry in known:  # an executable name: 'gedit' for an entry whose Exec is gedit
        if Path(entry.argv[0]).name == lowered:
            return entry.argv
    names = ", ".join(sorted({entry.name for entry in known})[:40]) or "none"
    raise WindowError(f"no application or command {wanted!r}; applications: {names}")


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
