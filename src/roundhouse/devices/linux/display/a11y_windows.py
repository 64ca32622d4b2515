"""The windows as the accessibility bus knows them: where the display server tells no other
program (a person's GNOME before `roundhouse setup gnome`), the applications still say
which top-level windows they have, their titles, and which one is active.

What they cannot say is where a window is: on Wayland no client knows. So a window listed
here stands for the whole screen, its content() is refused (PositionsUnknown, naming the
fix), and so is every action that needs a position; what needs none still works (the tree,
screenshots of the screen, keys, actions and text through the accessibility interfaces).
Activating is refused too, unless the window is (or becomes) active by itself (a window
launched with an xdg-activation token is); closing the active window is what its title
bar's button does, through the window manager's key (alt+F4).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from roundhouse.core.polling import within_async
from roundhouse.devices.contract import Rect, WindowInfo
from roundhouse.devices.linux.display.base import WINDOW_POLL, PositionsUnknown, WindowList
from roundhouse.devices.linux.display.wayland.dbus import DBusCallError, SyncBus

A11Y_BUS = ("org.a11y.Bus", "/org/a11y/bus", "org.a11y.Bus")
REGISTRY = ("org.a11y.atspi.Registry", "/org/a11y/atspi/accessible/root")
ACCESSIBLE = "org.a11y.atspi.Accessible"
PROPERTIES = "org.freedesktop.DBus.Properties"
# AtspiRole and AtspiStateType numbers (at-spi2-core; atspi/constants.py has the tables).
# GTK 4.8 (Debian 12) gives its file chooser dialog (GNOME Text Editor's "Save As") the role
# filler, and sets it visible but never showing.
TOP_ROLES = {
    2: "alert", 16: "dialog", 19: "file chooser", 20: "filler", 23: "frame", 69: "window",
}  # fmt: skip
ACTIVE, SHOWING, VISIBLE = 1, 25, 30
FRAME = 23
CLOSE_KEY = "alt+F4"  # Mutter's and KWin's default binding for "close window"


class A11yWindows(WindowList):
    """Top-level windows from the AT-SPI registry (a display.base.Windows without
    positions). `press` sends keys through the session's input (the close key)."""

    def __init__(
        self,
        session_bus: SyncBus,
        size: tuple[int, int],
        press: Callable[[str], None],
        fix: str,
        shell: str = "",
    ) -> None:
        """`shell`: the compositor's own application on the bus (GNOME Shell registers its
        stage as a window): not a window a person works in."""
        (address,) = session_bus.call(*A11Y_BUS, "GetAddress")
        self._bus = SyncBus(str(address), session_bus.timeout)
        self._size = size
        self._press = press
        self.fix = fix
        self._shell = shell
        self._lock = threading.Lock()
        self._ids: dict[tuple[str, str], int] = {}

    def close(self) -> None:
        self._bus.close()

    def _id(self, app: str, path: str) -> int:
        return self._ids.setdefault((app, path), len(self._ids) + 1)

    def list_windows(self) -> list[WindowInfo]:
        with self._lock:
            found = [seen for app in self._apps() for seen in self._windows_of(app)]
        return [window for window, _ in dialog_in_front(found)]

    def _apps(self) -> list[str]:
        (children,) = self._bus.call(*REGISTRY, ACCESSIBLE, "GetChildren")
        return [str(child[0]) for child in children]

    def _windows_of(self, app: str) -> list[tuple[WindowInfo, int]]:
        """The showing top-level windows of one application (none once it has gone), each
        with its role."""
        try:
            (tops,) = self._bus.call(app, REGISTRY[1], ACCESSIBLE, "GetChildren")
            name = self._name(app, REGISTRY[1])
            (pid,) = self._bus.call(
                "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                "GetConnectionUnixProcessID", "s", [app],
            )  # fmt: skip
        except DBusCallError:
            return []
        if name == self._shell:
            return []
        found = []
        width, height = self._size
        for _, path in tops:
            # A window may close between any two of these calls (a Save dialog answered):
            # GTK 4 then answers UnknownMethod for its path. It is then not listed.
            try:
                (role,) = self._bus.call(app, path, ACCESSIBLE, "GetRole")
                (words,) = self._bus.call(app, path, ACCESSIBLE, "GetState")
                states = int(words[0]) if words else 0
                if role not in TOP_ROLES or not states & (1 << SHOWING | 1 << VISIBLE):
                    continue
                title = self._name(app, str(path))
            except DBusCallError:
                continue
            window = WindowInfo(
                xid=self._id(app, str(path)),
                title=title,
                application=name,
                pid=int(pid),
                rect=Rect(left=0, top=0, right=width, bottom=height),  # not known
                active=bool(states & (1 << ACTIVE)),
            )
            found.append((window, int(role)))
        return found

    def _name(self, app: str, path: str) -> str:
        (name,) = self._bus.call(app, path, PROPERTIES, "Get", "ss", [ACCESSIBLE, "Name"])
        return str(name.value)

    def viewable(self, xid: int) -> bool:
        return any(window.xid == xid for window in self.list_windows())

    async def activate(self, xid: int, timeout: float = 3.0) -> WindowInfo:
        """The window once it is active: a window that just opened is given the focus by
        the compositor itself (as a launch needs). Another cannot be brought forward."""
        await within_async(lambda: self.get(xid).active, timeout, every=WINDOW_POLL)
        window = self.get(xid)
        if window.active:
            return window
        raise PositionsUnknown(
            f"cannot bring {window.title!r} to the front: this session tells no other program "
            "about its windows",
            self.fix,
        )

    async def close_window(self, xid: int, timeout: float = 3.0) -> bool:
        window = self.get(xid)
        if not window.active:
            await self.activate(xid, timeout)  # refused, saying why
        self._press(CLOSE_KEY)
        return await self._until_gone(xid, timeout)

    def content(self, window: WindowInfo) -> Rect:
        raise PositionsUnknown(
            f"where {window.title!r} is on the screen is not known: this session tells no "
            "other program where its windows are",
            self.fix,
        )


def dialog_in_front(found: list[tuple[WindowInfo, int]]) -> list[tuple[WindowInfo, int]]:
    """GTK 4.8 (Debian 12) says no window is active while one of its dialogs is up: the
    window it belongs to stops saying so, and the dialog never does. Then the dialog seen
    last is the one in front (where a window says it is active, nothing changes)."""
    if any(window.active for window, _ in found):
        return found
    dialogs = [window.xid for window, role in found if role != FRAME]
    if not dialogs:
        return found
    front = max(dialogs)
    return [
        (window.model_copy(update={"active": window.xid == front}), role) for window, role in found
    ]
