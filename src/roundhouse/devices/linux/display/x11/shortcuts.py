"""Desktop-wide shortcuts on X11 (display/shortcuts.py): each key grabbed on the root window,
with and without Num Lock and Caps Lock (which X counts as modifiers), on an X connection
of the listener's own. openbox, the window manager of roundhouse's X11 desktops, binds no
such key."""

from __future__ import annotations

import logging
import select
from collections.abc import Mapping, Sequence

from Xlib import XK, X  # type: ignore[import-untyped, unused-ignore]
from Xlib import error as xerror  # type: ignore[import-untyped, unused-ignore]
from Xlib.display import Display  # type: ignore[import-untyped, unused-ignore]

from roundhouse.devices.linux.display.shortcuts import POLL, Listening, Shortcut

log = logging.getLogger(__name__)

MASKS = {"ctrl": X.ControlMask, "alt": X.Mod1Mask, "shift": X.ShiftMask, "super": X.Mod4Mask}
LOCKS = (0, X.LockMask, X.Mod2Mask, X.LockMask | X.Mod2Mask)  # Caps Lock, Num Lock


def bind_keys(env: Mapping[str, str], shortcuts: Sequence[Shortcut]) -> XShortcuts:
    return XShortcuts(env["DISPLAY"], shortcuts)


class XShortcuts(Listening):
    """The keys grabbed on the root window; their KeyPress events read in the thread."""

    def __init__(self, display: str, shortcuts: Sequence[Shortcut]) -> None:
        super().__init__()
        self._display_name = display
        self._shortcuts = shortcuts
        self._x: Display | None = None
        self._bound: dict[tuple[int, int], Shortcut] = {}

    def start(self) -> None:
        self._x = Display(self._display_name)
        root = self._x.screen().root
        for shortcut in self._shortcuts:
            modifiers, key = shortcut.chord()
            mask = 0
            for modifier in modifiers:
                mask |= MASKS[modifier]
            keycode = self._x.keysym_to_keycode(XK.string_to_keysym(key))
            if not keycode:
                raise ValueError(f"shortcut {shortcut.keys!r}: no key {key!r} on this keyboard")
            for lock in LOCKS:
                root.grab_key(keycode, mask | lock, True, X.GrabModeAsync, X.GrabModeAsync)
            self._bound[(keycode, mask)] = shortcut
        self._x.sync()
        self._start_listening()

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

    def _close(self) -> None:
        if self._x is not None:
            self._x.close()
            self._x = None
