"""Desktop-wide keyboard shortcuts a program binds for itself (OSWorld's Ctrl+Alt+T opens a
terminal, as Ubuntu's GNOME binds it): an optional capability of a backend
(`Backend.bind_keys`), since only some display servers let a client bind a key for the
whole desktop. Each backend's listener runs in a thread and stops, when asked, within POLL.

    listener = backend.bind_keys(env, [Shortcut("ctrl+alt+t", open_terminal)])
    listener.start()  # ValueError for a key the keyboard lacks; OSError if refused
    ...
    listener.stop()
"""

from __future__ import annotations

import logging
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

log = logging.getLogger(__name__)

MODIFIER_NAMES = ("ctrl", "alt", "shift", "super")
POLL = 0.1  # seconds a listener's thread waits for an event before it looks at `stop`


@dataclass(frozen=True)
class Shortcut:
    keys: str  # "ctrl+alt+t"
    action: Callable[[], None]

    def chord(self) -> tuple[list[str], str]:
        """Its modifiers and its key ("ctrl+alt+t" -> (["ctrl", "alt"], "t")); ValueError
        naming a modifier no backend knows."""
        *modifiers, key = self.keys.lower().split("+")
        for modifier in modifiers:
            if modifier not in MODIFIER_NAMES:
                raise ValueError(f"shortcut {self.keys!r}: unknown modifier {modifier!r}")
        return modifiers, key


class Listener(Protocol):
    def start(self) -> None: ...

    def stop(self) -> None: ...


class Listening(ABC):
    """What every listener shares: a thread that reads the key events until `stop`, and
    running a pressed shortcut's action."""

    def __init__(self) -> None:
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @abstractmethod
    def _listen(self) -> None: ...

    @abstractmethod
    def _close(self) -> None:
        """Close the connection the events came on (the thread has ended)."""

    def _start_listening(self) -> None:
        self._thread = threading.Thread(target=self._listen, name="shortcuts", daemon=True)
        self._thread.start()

    def _run(self, shortcut: Shortcut) -> None:
        try:
            shortcut.action()
        except OSError as error:
            log.warning("shortcut %s failed: %s", shortcut.keys, error)

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2 * POLL + 1)
            self._thread = None
        self._close()
