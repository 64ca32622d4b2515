"""What the input backends that speak Wayland themselves share (KWin's fake input, wlroots'
virtual pointer and keyboard): a connection of their own, opened, set up and closed alike,
with a roundtrip after each chord and pointer action."""

from __future__ import annotations

import threading
from abc import abstractmethod
from collections.abc import Mapping

from roundhouse.devices.linux.display.base import Closing
from roundhouse.devices.linux.display.wayland.keyboard import ChordKeyboard
from roundhouse.devices.linux.display.wayland.pointer import ApproachingPointer
from roundhouse.devices.linux.display.wayland.wire import TIMEOUT, Connection


class WaylandInput(ApproachingPointer, ChordKeyboard, Closing):
    """An input backend on one Wayland connection kept open, its calls serialised on a lock.
    `_setup` binds what the backend needs; should it fail, the connection is closed."""

    def __init__(self, env: Mapping[str, str], timeout: float = TIMEOUT) -> None:
        self._env = dict(env)
        self._wayland = Connection.open(env, timeout)
        self._lock = threading.Lock()
        try:
            self._setup()
        except BaseException:
            self._wayland.close()
            raise

    @abstractmethod
    def _setup(self) -> None: ...

    def _flush(self) -> None:
        self._wayland.roundtrip()

    def close(self) -> None:
        with self._lock:
            self._wayland.close()
