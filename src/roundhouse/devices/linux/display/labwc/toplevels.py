"""The windows of a wlroots compositor without an IPC of its own (labwc, and Hyprland or
river where they are met), through wlr-foreign-toplevel-management (v3).

The protocol gives each window a handle, with its title, application id and state
(maximized, minimized, activated, fullscreen), and requests to activate, maximize and
close it; it gives no position. So the windows are kept maximized: a maximized window's
content is the output, and that is where it is placed. labwc virtual desktops maximize
every window as it opens (labwc/backend.py); on a person's session a window is maximized
when it is activated, and a window the compositor shows otherwise is taken to fill the
output all the same (doctor says so).
"""

from __future__ import annotations

import struct
import threading
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field

from roundhouse.devices.contract import Rect, WindowInfo
from roundhouse.devices.linux.display.base import (
    Closing,
    WindowError,
    WindowList,
    describe,
)
from roundhouse.devices.linux.display.wayland.globals import Output, bind_output
from roundhouse.devices.linux.display.wayland.wire import (
    TIMEOUT,
    Connection,
    WaylandError,
    decode,
)

MANAGER = "zwlr_foreign_toplevel_manager_v1"
# Events of a toplevel handle, and its requests.
TITLE, APP_ID, STATE, DONE, CLOSED = 0, 1, 4, 5, 6
SET_MAXIMIZED, ACTIVATE, CLOSE, DESTROY = 0, 4, 5, 7
MAXIMIZED, MINIMIZED, ACTIVATED, FULLSCREEN = 0, 1, 2, 3


@dataclass
class Toplevel:
    """One window, as its handle's events have described it so far."""

    number: int  # ours, counted from 1: the compositor reuses object ids
    handle: int
    title: str = ""
    app_id: str = ""
    states: frozenset[int] = frozenset()
    described: bool = False  # a first `done` came: its title and state are known
    closed: bool = False
    pending: dict[str, object] = field(default_factory=dict)  # applied at `done`


class ForeignToplevels(WindowList, Closing):
    """The windows as the compositor lists them to a foreign-toplevel client (a
    display.base.Windows), on a Wayland connection of its own."""

    def __init__(self, env: Mapping[str, str], timeout: float = TIMEOUT) -> None:
        self._wayland = Connection.open(env, timeout)
        self._lock = threading.Lock()
        self._toplevels: dict[int, Toplevel] = {}  # by handle
        self._counter = 0
        try:
            if self._wayland.find(MANAGER) is None:
                raise WaylandError(
                    f"this compositor offers no {MANAGER}: its windows cannot be listed"
                )
            self.output: Output = bind_output(self._wayland)
            self._seat = self._wayland.bind("wl_seat", 1)
            self._wayland.bind(MANAGER, 3, self._on_manager)
            self._wayland.roundtrip()  # the toplevels, then their first descriptions
            self._wayland.roundtrip()
        except BaseException:
            self._wayland.close()
            raise

    def close(self) -> None:
        with self._lock:
            self._wayland.close()

    @property
    def screen(self) -> Rect:
        width, height = self.output.logical_size
        return Rect(left=0, top=0, right=width, bottom=height)

    # ------------------------------------------------------------ events

    def _on_manager(self, opcode: int, payload: bytes, fds: deque[int]) -> None:
        if opcode == 0:  # toplevel(new_id handle)
            (handle,) = decode("n", payload, fds)
            self._counter += 1
            self._toplevels[handle] = Toplevel(self._counter, handle)
            self._wayland.track(handle, lambda op, data, f: self._on_handle(handle, op, data, f))

    def _on_handle(self, handle: int, opcode: int, payload: bytes, fds: deque[int]) -> None:
        toplevel = self._toplevels.get(handle)
        if toplevel is None:
            return
        if opcode == TITLE:
            toplevel.pending["title"] = decode("s", payload, fds)[0]
        elif opcode == APP_ID:
            toplevel.pending["app_id"] = decode("s", payload, fds)[0]
        elif opcode == STATE:
            (raw,) = decode("a", payload, fds)
            toplevel.pending["states"] = frozenset(
                struct.unpack(f"={len(raw) // 4}I", raw[: len(raw) // 4 * 4])
            )
        elif opcode == DONE:
            for name, value in toplevel.pending.items():
                setattr(toplevel, name, value)
            toplevel.pending.clear()
            toplevel.described = True
        elif opcode == CLOSED:
            toplevel.closed = True
            del self._toplevels[handle]
            self._wayland.request(handle, DESTROY)

    def _current(self) -> list[Toplevel]:
        with self._lock:
            self._wayland.roundtrip()
            return [t for t in self._toplevels.values() if t.described and not t.closed]

    def _find(self, xid: int) -> Toplevel:
        """The window with this id; WindowError naming the windows there are."""
        current = self._current()
        for toplevel in current:
            if toplevel.number == xid:
                return toplevel
        windows = describe([self._info(toplevel) for toplevel in current])
        raise WindowError(f"no window with id {xid}; windows: {windows}")

    # ------------------------------------------------------------ Windows

    def list_windows(self) -> list[WindowInfo]:
        return [self._info(toplevel) for toplevel in self._current()]

    def _info(self, toplevel: Toplevel) -> WindowInfo:
        return WindowInfo(
            xid=toplevel.number,
            title=toplevel.title,
            application=toplevel.app_id,
            pid=None,  # the protocol does not say; AT-SPI matches the window by its title
            rect=self.screen,
            active=ACTIVATED in toplevel.states,
        )

    def viewable(self, xid: int) -> bool:
        return MINIMIZED not in self._find(xid).states

    async def activate(self, xid: int, timeout: float = 3.0) -> WindowInfo:
        toplevel = self._find(xid)
        with self._lock:
            if MAXIMIZED not in toplevel.states and FULLSCREEN not in toplevel.states:
                self._wayland.request(toplevel.handle, SET_MAXIMIZED)
            self._wayland.request(toplevel.handle, ACTIVATE, "o", self._seat)
            self._wayland.roundtrip()
        return await self._until_active(xid, timeout)

    async def close_window(self, xid: int, timeout: float = 3.0) -> bool:
        toplevel = self._find(xid)
        with self._lock:
            self._wayland.request(toplevel.handle, CLOSE)
            self._wayland.roundtrip()
        return await self._until_gone(xid, timeout)

    def content(self, window: WindowInfo) -> Rect:
        """The output: the window is maximized (see the module's docstring)."""
        return self.screen
