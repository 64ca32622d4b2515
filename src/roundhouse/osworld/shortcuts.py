"""Desktop-wide keyboard shortcuts, as Ubuntu's GNOME binds them (Ctrl+Alt+T: a terminal).

OSWorld's tasks open a terminal by pressing Ctrl+Alt+T (through pyautogui). openbox, the
window manager of roundhouse's virtual desktops, binds no such key, so a listener grabs it
on the root window (with and without Num Lock and Caps Lock, which X counts as modifiers)
and runs the action when it is pressed. It runs in a thread with its own X connection and
stops when asked, within a tenth of a second.
"""

from __future__ import annotations

import logging
import select
import threading
from collections.abc import Callable
from dataclasses import dataclass

from Xlib import XK, X  # type: ignore[import-untyped, unused-ignore]
from Xlib import error as xerror  # type: ignore[import-untyped, unused-ignore]
from Xlib.display import Display  # type: ignore[import-untyped, unused-ignore]

log = logging.getLogger(__name__)

MODIFIERS = {"ctrl": X.ControlMask, "alt": X.Mod1Mask, "shift": X.ShiftMask, "super": X.Mod4Mask}
LOCKS = (0, X.LockMask, X.Mod2Mask, X.LockMask | X.Mod2Mask)  # Caps Lock, Num Lock
POLL = 0.1


@dataclass(frozen=True)
class Shortcut:
    keys: str  # "ctrl+alt+t"
    action: Callable[[], None]

    def parsed(self) -> tuple[int, str]:
        *mods, key = self.keys.lower().split("+")
        mask = 0
        for mod in mods:
            if mod not in MODIFIERS:
                raise ValueError(f"shortcut {self.keys!r}: unknown modifier {mod!r}")
            mask |= MODIFIERS[mod]
        return mask, key


class ShortcutListener:
    def __init__(self, display: str, shortcuts: list[Shortcut]) -> None:
        self._display_name = display
        self._shortcuts = shortcuts
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._x: Display | None = None
        self._bound: dict[tuple[int, int], Shortcut] = {}

    def start(self) -> None:
        self._x = Display(self._display_name)
        root = self._x.screen().root
        for shortcut in self._shortcuts:
            mask, key = shortcut.parsed()
            keycode = self._x.keysym_to_keycode(XK.string_to_keysym(key))
            if not keycode:
                raise ValueError(f"shortcut {shortcut.keys!r}: no key {key!r} on this keyboard")
            for lock in LOCKS:
                root.grab_key(keycode, mask | lock, True, X.GrabModeAsync, X.GrabModeAsync)
            self._bound[(keycode, mask)] = shortcut
        self._x.sync()
        self._thread = threading.Thread(target=self._listen, name="osworld-shortcuts", daemon=True)
        self._thread.start()

    def _listen(self) -> None:
        x = self._x
        assert x is not None
        ignored = ~(X.LockMask | X.Mod2Mask)
        while not self._stop.is_set():
            try:
                ready, _, _ = select.select([x.fileno()], [], [], POLL)
                if not ready and not x.pending_events():
                    continue
                while x.pending_events():
                    event = x.next_event()
                    if event.type != X.KeyPress:
                        continue
                    shortcut = self._bound.get((event.detail, event.state & ignored & 0xFF))
                    if shortcut is not None:
                        self._run(shortcut)
            except (OSError, ValueError, xerror.ConnectionClosedError) as error:
                if not self._stop.is_set():
                    log.warning("the shortcut listener lost its X connection: %s", error)
                return

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
        if self._x is not None:
            self._x.close()
            self._x = None
