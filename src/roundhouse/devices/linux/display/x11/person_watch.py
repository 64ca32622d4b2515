"""The person at an X display: input not ours, through XInput2's raw events, and a screen
locker, by what every locker does (a full-screen window over everything, and the keyboard
grabbed).

Raw events (a motion, a key or button pressed) reach a client that selected them on the
root window, from every device and every client's XTest alike: a person's mouse, and
another program sending input. Ours arrive too, and are told apart by order, not by
device: the server handles our input before it answers the input connection's sync, and
writes the raw events it makes to this connection then; a sync here afterwards is answered
after them. So `ours` syncs and drops everything before that point, and `foreign` syncs and
finds whatever came since.
"""

from __future__ import annotations

import threading
from typing import Any

from Xlib import X, error  # type: ignore[import-untyped, unused-ignore]
from Xlib.display import Display  # type: ignore[import-untyped, unused-ignore]
from Xlib.ext import xinput  # type: ignore[import-untyped, unused-ignore]

from roundhouse.devices.contract import Rect
from roundhouse.devices.linux.display.base import Closing

WATCHED = xinput.RawKeyPressMask | xinput.RawButtonPressMask | xinput.RawMotionMask
SAID = {  # in the order a message names them
    xinput.RawKeyPress: "a key was pressed",
    xinput.RawButtonPress: "a mouse button was pressed",
    xinput.RawMotion: "the pointer moved",
}
GENERIC_EVENT = 35


class XPersonWatch(Closing):
    """Other input and screen lockers on one X display (a display.base.PersonWatch), on a
    connection of its own."""

    route = "XInput2 raw events (every device and client); lockers by their grab"

    def __init__(self, display: str) -> None:
        self._x = Display(display)
        self._lock = threading.Lock()
        self._root = self._x.screen().root
        if not self._x.has_extension("XInputExtension"):
            self._x.close()
            raise RuntimeError(f"display {display} has no XInput extension")
        self._root.xinput_select_events([(xinput.AllMasterDevices, WATCHED)])
        self._x.sync()
        self.ours()

    def close(self) -> None:
        with self._lock:
            self._x.close()

    def ours(self) -> None:
        with self._lock:
            self._drain()

    def foreign(self) -> str | None:
        with self._lock:
            kinds = self._drain()
        return " and ".join(SAID[kind] for kind in SAID if kind in kinds) or None

    def blocked(self) -> str | None:
        """A screen locker's window over the whole screen, with the keyboard grabbed (i3lock,
        slock, xsecurelock, xscreensaver: each maps one and grabs the keyboard)."""
        with self._lock:
            cover = self._covering_window()
            if cover is None or not self._keyboard_grabbed():
                return None
            name = _name(cover)
        return f"the screen is locked ({name or 'a full-screen window'} holds the keyboard)"

    def _drain(self) -> set[int]:
        """Sync, then read every event that came before: the raw events' kinds."""
        self._x.sync()
        kinds: set[int] = set()
        for _ in range(self._x.pending_events()):
            event = self._x.next_event()
            if event.type == GENERIC_EVENT and getattr(event, "evtype", None) in SAID:
                kinds.add(int(event.evtype))
        return kinds

    def _covering_window(self) -> Any | None:
        """The topmost mapped window that covers the whole screen and is not the window
        manager's to place (override-redirect): what a locker puts over everything."""
        screen = self._x.screen()
        whole = Rect(0, 0, int(screen.width_in_pixels), int(screen.height_in_pixels))
        try:
            children = self._root.query_tree().children
            for child in reversed(children):  # the top of the stack first
                attributes = child.get_attributes()
                if attributes.map_state != X.IsViewable or not attributes.override_redirect:
                    continue
                geometry = child.get_geometry()
                rect = Rect(
                    geometry.x,
                    geometry.y,
                    geometry.x + geometry.width,
                    geometry.y + geometry.height,
                )
                return child if rect.contains(whole) else None
        except (error.BadWindow, error.BadDrawable):
            return None  # it went while we looked: nothing covers the screen now
        return None

    def _keyboard_grabbed(self) -> bool:
        """Whether another client holds the keyboard: our own grab is refused then (and
        released at once when it is not)."""
        status = self._root.grab_keyboard(False, X.GrabModeAsync, X.GrabModeAsync, X.CurrentTime)
        if status == X.GrabSuccess:
            self._x.ungrab_keyboard(X.CurrentTime)
            self._x.sync()
            return False
        return bool(status == X.AlreadyGrabbed)


def _name(window: Any) -> str:
    try:
        wm_class = window.get_wm_class()
    except (error.BadWindow, error.BadDrawable):
        return ""
    return str(wm_class[1]) if wm_class else ""
