"""X11's windows through EWMH, on one persistent X connection.

The window manager publishes the client windows (_NET_CLIENT_LIST), which one is active
(_NET_ACTIVE_WINDOW), and obeys client messages to activate or close one. Without a
window manager none of this exists, and we say so instead of returning an empty list.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from Xlib import X, Xatom, error  # type: ignore[import-untyped, unused-ignore]
from Xlib.display import Display  # type: ignore[import-untyped, unused-ignore]
from Xlib.protocol import event  # type: ignore[import-untyped, unused-ignore]

from roundhouse.core.polling import within, within_async
from roundhouse.devices.contract import Rect, WindowInfo
from roundhouse.devices.linux.display.base import WINDOW_POLL, Closing, WindowError, WindowList

LIST_GLITCH = 0.5  # seconds get looks again for a window that exists but is not listed


class WindowManager(WindowList, Closing):
    """EWMH queries and requests on one display (a display.base.Windows). Calls are
    serialised on a lock."""

    def __init__(self, display: str) -> None:
        self._display = Display(display)
        self._root = self._display.screen().root
        self._lock = threading.Lock()
        self._atoms: dict[str, int] = {}

    def close(self) -> None:
        self._display.close()

    # --- reading ---

    def list_windows(self) -> list[WindowInfo]:
        """The managed top-level windows, in stacking-independent client-list order."""
        with self._lock:
            xids = self._client_list()
            active = self._active_xid()
            windows = [self._info(xid, active) for xid in xids]
        return [window for window in windows if window is not None]

    def get(self, xid: int) -> WindowInfo:
        """The window with this id; WindowError naming the windows there are. openbox, busy,
        publishes an empty _NET_CLIENT_LIST for an instant (Debian 13, under load: gedit's
        window listed and active, then "windows: none", then listed again a millisecond
        later): a window that still exists is looked for again, for up to LIST_GLITCH."""
        listed = super().get

        def found() -> WindowInfo | None:
            try:
                return listed(xid)
            except WindowError:
                if not self._exists(xid):
                    raise
                return None

        return within(found, LIST_GLITCH) or listed(xid)  # (the last: raises, naming them)

    def _exists(self, xid: int) -> bool:
        with self._lock:
            window = self._display.create_resource_object("window", xid)
            try:
                window.get_attributes()
            except (error.BadWindow, error.BadDrawable):
                return False
            return True

    def viewable(self, xid: int) -> bool:
        """Whether the window is mapped and on screen (its frame too), so it can be seen."""
        with self._lock:
            window = self._display.create_resource_object("window", xid)
            try:
                return bool(window.get_attributes().map_state == X.IsViewable)
            except (error.BadWindow, error.BadDrawable):
                return False

    def above(self, xid: int) -> list[Rect] | None:
        """What is shown over the window: the mapped children of the root stacked above the
        one that holds it (its frame, under a reparenting window manager), menus and
        tooltips among them (windows no manager holds); None when the window is gone."""
        with self._lock:
            try:
                children = list(self._root.query_tree().children)
                holder = self._holder(xid)
            except (error.BadWindow, error.BadDrawable):
                return None
            ids = [int(child.id) for child in children]
            if holder not in ids:
                return None
            return [
                rect
                for child in children[ids.index(holder) + 1 :]
                if (rect := _mapped_rect(child)) is not None
            ]

    def _holder(self, xid: int) -> int:
        """The child of the root that holds the window (itself, or its frame)."""
        window = self._display.create_resource_object("window", xid)
        while True:
            parent = window.query_tree().parent
            if parent is None or int(parent.id) == int(self._root.id):
                return int(window.id)
            window = parent

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
            await within_async(lambda: self.viewable(xid), timeout, every=WINDOW_POLL)
        with self._lock:
            self._send(xid, "_NET_ACTIVE_WINDOW", [2, X.CurrentTime, 0, 0, 0])
        await within_async(
            lambda: self._active_xid_locked() == xid, deadline - time.monotonic(), every=WINDOW_POLL
        )
        if self._active_xid_locked() != xid:
            raise WindowError(f"window {xid} did not become active within {timeout:g} s")
        return self.get(xid)

    async def close_window(self, xid: int, timeout: float = 3.0) -> bool:
        """Ask the window to close; True once it is gone (False: it asked something first)."""
        self.get(xid)
        with self._lock:
            self._send(xid, "_NET_CLOSE_WINDOW", [X.CurrentTime, 2, 0, 0, 0])
        await within_async(
            lambda: xid not in self._client_list_locked(), timeout, every=WINDOW_POLL
        )
        return xid not in self._client_list_locked()

    # --- X plumbing ---

    def content(self, window: WindowInfo) -> Rect:
        """The window's rectangle less the shadow a client-side decorated window (GTK 4,
        libadwaita) draws around itself and declares in _GTK_FRAME_EXTENTS."""
        with self._lock:
            resource = self._display.create_resource_object("window", window.xid)
            try:
                prop = resource.get_full_property(self._atom("_GTK_FRAME_EXTENTS"), Xatom.CARDINAL)
            except (error.BadWindow, error.BadDrawable):
                prop = None
        if prop is None or len(prop.value) != 4:
            return window.rect
        left, right, top, bottom = (int(value) for value in prop.value)
        rect = window.rect
        return Rect(
            left=rect.left + left,
            top=rect.top + top,
            right=rect.right - right,
            bottom=rect.bottom - bottom,
        )

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


def _mapped_rect(window: Any) -> Rect | None:
    """A child of the root's rectangle, where it is mapped; None where not (or gone)."""
    try:
        if window.get_attributes().map_state != X.IsViewable:
            return None
        geometry = window.get_geometry()
    except (error.BadWindow, error.BadDrawable):
        return None
    left, top = int(geometry.x), int(geometry.y)
    return Rect(left, top, left + int(geometry.width), top + int(geometry.height))


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
