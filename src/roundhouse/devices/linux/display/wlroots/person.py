"""The person at a wlroots session: input not ours, through the idle protocol, and a locker,
by the input inhibitor it holds.

A Wayland client sees no other client's input, nor where the pointer is. What wlroots does
tell any client is when the seat stops being idle (org_kde_kwin_idle, which swayidle
uses): with a timeout of 1 ms the seat is idle again a moment after any input, and says
"resumed" at the next, from whatever device or client (a person's mouse, another
program's virtual pointer). Ours too, told apart by order as on X11: the compositor
handles our input before it answers the input connection's roundtrip, and queues the
"resumed" it caused on this connection then; a roundtrip here afterwards comes after it.
So `ours` dispatches and forgets, `foreign` dispatches and finds what came since. An
application that inhibits idling (a video playing full-screen) hides input this way.

A locker on such a session (swaylock before ext-session-lock) holds the wlr input
inhibitor, which takes every input to itself; a second one is refused. Where no window has
the focus (a locker takes it), asking for one on a connection of its own tells whether a
locker holds it: refused (a protocol error that ends that connection), or granted and
given back at once.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Mapping

from roundhouse.devices.linux.display.base import Closing
from roundhouse.devices.linux.display.wayland.wire import (
    TIMEOUT,
    Connection,
    WaylandError,
    WaylandTimeout,
)

IDLE = "org_kde_kwin_idle"
INHIBIT = "zwlr_input_inhibit_manager_v1"
IDLE_TIMEOUT_MS = 1
RESUMED = 1  # org_kde_kwin_idle_timeout's events: idle (0), resumed (1)


class IdleWatch(Closing):
    """Other input, and a locker, on a wlroots session (a display.base.PersonWatch)."""

    route = f"{IDLE} (any input ends the 1 ms idle); lockers by the {INHIBIT} they hold"

    def __init__(
        self,
        env: Mapping[str, str],
        focused: Callable[[], bool] = lambda: False,
        timeout: float = TIMEOUT,
    ) -> None:
        self._env = dict(env)
        self._focused = focused
        self._timeout = timeout
        self._lock = threading.Lock()
        self._resumed = 0
        self._wayland = Connection.open(env, timeout)
        try:
            seat = self._wayland.bind("wl_seat", 1)
            idle = self._wayland.bind(IDLE, 1)
            watched = self._wayland.new_id(self._on_event)
            self._wayland.request(idle, 0, "nou", watched, seat, IDLE_TIMEOUT_MS)
            self.ours()
        except BaseException:
            self._wayland.close()
            raise

    def _on_event(self, opcode: int, _payload: bytes, _fds: deque[int]) -> None:
        if opcode == RESUMED:
            self._resumed += 1

    def close(self) -> None:
        with self._lock:
            self._wayland.close()

    def ours(self) -> None:
        with self._lock:
            self._wayland.roundtrip()
            self._resumed = 0

    def foreign(self) -> str | None:
        with self._lock:
            self._wayland.roundtrip()
            resumed, self._resumed = self._resumed, 0
        # The idle protocol does not say which device: a key, a button or the pointer.
        return "input came from a mouse or keyboard not ours" if resumed else None

    def blocked(self) -> str | None:
        # A locker takes the keyboard focus from every window. Only then is the inhibitor
        # asked for: granted to us for a moment, it takes the focus too, and sway does not
        # give it back to the window that had it.
        if self._focused() or not self._inhibitor_held():
            return None
        return "the screen is locked (a locker holds the input inhibitor: all input is its)"

    def _inhibitor_held(self) -> bool:
        try:
            probe = Connection.open(self._env, self._timeout)
        except WaylandError:
            return False
        with probe:
            if probe.find(INHIBIT) is None:
                return False
            manager = probe.bind(INHIBIT, 1)
            inhibitor = probe.new_id()
            probe.request(manager, 0, "n", inhibitor)  # get_inhibitor
            try:
                probe.roundtrip()
            except WaylandTimeout:
                return False  # a busy compositor says nothing either way: not known locked
            except WaylandError:
                return True  # refused (already_inhibited): another client holds it
            probe.request(inhibitor, 0)  # destroy: granted to us, given back at once
            probe.roundtrip()
        return False


def idle_watch(env: Mapping[str, str], focused: Callable[[], bool]) -> IdleWatch | None:
    """The watch, where the compositor offers the idle protocol; None where it does not.
    `focused`: whether a window has the keyboard focus (no locker is up then)."""
    with Connection.open(env) as wayland:
        if wayland.find(IDLE) is None or wayland.find("wl_seat") is None:
            return None
    return IdleWatch(env, focused)
