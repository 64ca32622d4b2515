"""Mouse and keyboard through XTest, in-process, over one persistent X connection.

xdotool starts a process per action and adds ~100 ms to every click; here an action is a
few requests on a connection we keep open (~1 ms). XTest sends keycodes, not characters,
so we keep our own keysym -> keycode map. A character the keyboard map does not hold
(é on a US map, €, 漢) is put on a spare keycode; those remaps stay in place while the
connection lives, because reverting right after the key event races the application,
which may read the keyboard map only when it handles the event (xdotool's lost-é bug).
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from typing import Literal

from Xlib import XK, X  # type: ignore[import-untyped, unused-ignore]
from Xlib.display import Display  # type: ignore[import-untyped, unused-ignore]
from Xlib.ext import xtest  # type: ignore[import-untyped, unused-ignore]

from roundhouse.devices.linux.display.base import DRAG_PAUSE, Closing, drag_path
from roundhouse.devices.linux.display.keys import (
    InputError,
    char_keysym,
    is_letter,
    key_keysym,
    parse_combo,
)

__all__ = ["InputError", "XInput", "char_keysym", "key_keysym", "parse_combo"]

Button = Literal["left", "middle", "right"]

_BUTTONS: dict[str, int] = {"left": 1, "middle": 2, "right": 3}
_SCROLL_UP, _SCROLL_DOWN, _SCROLL_LEFT, _SCROLL_RIGHT = 4, 5, 6, 7


class XInput(Closing):
    """XTest input on one display. Thread-safe: calls are serialised on one lock."""

    def __init__(self, display: str, key_delay: float = 0.002) -> None:
        self._display = Display(display)
        if not self._display.has_extension("XTEST"):
            self._display.close()
            raise RuntimeError(f"display {display} has no XTEST extension")
        self._lock = threading.Lock()
        self._key_delay = key_delay  # lets a busy client keep up with a burst of keys
        self._keymap: dict[int, tuple[int, bool]] = {}  # keysym -> (keycode, needs shift)
        self._spare: list[int] = []
        self._remapped: OrderedDict[int, int] = OrderedDict()  # keysym -> spare keycode
        self._shift = self._display.keysym_to_keycode(XK.XK_Shift_L)
        self._load_keymap()

    def close(self) -> None:
        with self._lock:
            for keycode in self._remapped.values():
                self._display.change_keyboard_mapping(keycode, [(X.NoSymbol,) * 2])
            self._remapped.clear()
            self._display.close()

    # --- mouse ---

    def move(self, x: int, y: int) -> None:
        with self._lock:
            xtest.fake_input(self._display, X.MotionNotify, x=x, y=y)
            self._display.sync()

    def click(self, x: int, y: int, button: Button = "left", count: int = 1) -> None:
        """Click `count` times (2 = double click) at screen coordinates."""
        code = _BUTTONS[button]
        with self._lock:
            xtest.fake_input(self._display, X.MotionNotify, x=x, y=y)
            for _ in range(count):
                xtest.fake_input(self._display, X.ButtonPress, code)
                xtest.fake_input(self._display, X.ButtonRelease, code)
            self._display.sync()

    def scroll(self, x: int, y: int, dx: int = 0, dy: int = 0) -> None:
        """Scroll at (x, y): dy > 0 scrolls down, dx > 0 right, one wheel notch per unit."""
        steps = [(_SCROLL_DOWN if dy > 0 else _SCROLL_UP, abs(dy))]
        steps.append((_SCROLL_RIGHT if dx > 0 else _SCROLL_LEFT, abs(dx)))
        with self._lock:
            xtest.fake_input(self._display, X.MotionNotify, x=x, y=y)
            for code, count in steps:
                for _ in range(count):
                    xtest.fake_input(self._display, X.ButtonPress, code)
                    xtest.fake_input(self._display, X.ButtonRelease, code)
            self._display.sync()

    def drag(self, start: tuple[int, int], end: tuple[int, int], button: Button = "left") -> None:
        """Press at `start`, move in steps (toolkits need motion to start a drag), release."""
        code = _BUTTONS[button]
        with self._lock:
            xtest.fake_input(self._display, X.MotionNotify, x=start[0], y=start[1])
            xtest.fake_input(self._display, X.ButtonPress, code)
            self._display.sync()
            for x, y in drag_path(start, end):
                xtest.fake_input(self._display, X.MotionNotify, x=x, y=y)
                self._display.sync()
                time.sleep(DRAG_PAUSE)
            xtest.fake_input(self._display, X.ButtonRelease, code)
            self._display.sync()

    # --- keyboard ---

    def type_text(self, text: str) -> None:
        """Type any Unicode text as key presses ('\\n' is Return, '\\t' is Tab)."""
        keysyms = [char_keysym(char) for char in text]
        with self._lock:
            for keysym in keysyms:
                keycode, shift = self._keycode(keysym)
                self._tap(keycode, [self._shift] if shift else [])
                time.sleep(self._key_delay)

    def press_keys(self, keys: str) -> None:
        """Press key combinations: 'ctrl+s', 'alt+F4', 'ctrl+shift+t', 'Return'.

        Several combinations separated by spaces are pressed one after another.
        """
        combos = [parse_combo(combo) for combo in keys.split()]
        if not combos:
            raise InputError("no keys given")
        resolved = [
            ([self._modifier_keycode(name) for name in modifiers], key_keysym(key))
            for modifiers, key in combos
        ]
        with self._lock:
            for modifier_codes, keysym in resolved:
                keycode, shift = self._keycode(keysym)
                # Shifted symbols ("ctrl+?") need Shift; a letter with ctrl does not ("ctrl+S").
                if shift and self._shift not in modifier_codes and not is_letter(keysym):
                    modifier_codes = [*modifier_codes, self._shift]
                self._tap(keycode, modifier_codes)
                time.sleep(self._key_delay)

    def _tap(self, keycode: int, modifiers: list[int]) -> None:
        for modifier in modifiers:
            xtest.fake_input(self._display, X.KeyPress, modifier)
        xtest.fake_input(self._display, X.KeyPress, keycode)
        xtest.fake_input(self._display, X.KeyRelease, keycode)
        for modifier in reversed(modifiers):
            xtest.fake_input(self._display, X.KeyRelease, modifier)
        self._display.sync()

    def _modifier_keycode(self, name: str) -> int:
        keycode = self._display.keysym_to_keycode(XK.string_to_keysym(name))
        if not keycode:
            raise InputError(f"modifier {name} is not on this keyboard map")
        return int(keycode)

    def _load_keymap(self) -> None:
        info = self._display.display.info
        first, last = info.min_keycode, info.max_keycode
        rows = self._display.get_keyboard_mapping(first, last - first + 1)
        for offset, row in enumerate(rows):
            keycode = first + offset
            if all(keysym == X.NoSymbol for keysym in row):
                self._spare.append(keycode)
                continue
            # Columns 0 and 1 are the plain and shifted levels; others need AltGr, skip them.
            for level, keysym in enumerate(row[:2]):
                if keysym != X.NoSymbol and keysym not in self._keymap:
                    self._keymap[keysym] = (keycode, level == 1)
        # Keycode 8 is reserved in XKB and never delivered; don't use it as a spare.
        self._spare = [code for code in self._spare if code > 8]

    def _keycode(self, keysym: int) -> tuple[int, bool]:
        if keysym in self._keymap:
            return self._keymap[keysym]
        if keysym in self._remapped:
            self._remapped.move_to_end(keysym)
            return self._remapped[keysym], False
        return self._remap(keysym), False

    def _remap(self, keysym: int) -> int:
        if self._spare:
            keycode = self._spare.pop()
        else:
            # Reuse the least recently typed one; give clients time to finish the last event.
            _, keycode = self._remapped.popitem(last=False)
            time.sleep(0.05)
        self._display.change_keyboard_mapping(keycode, [(keysym, keysym)])
        self._display.sync()
        self._remapped[keysym] = keycode
        # Clients refresh their keymap on MappingNotify; let them before the key arrives.
        time.sleep(0.02)
        return keycode
