"""Mouse and keyboard through XTest, in-process, over one persistent X connection.

xdotool starts a process per action and adds ~100 ms to every click; here an action is a
few requests on a connection we keep open (~1 ms). XTest sends keycodes, not characters,
so we keep our own keysym -> keycode map, read from the server's. A character the map
does not hold (é on a US map, €, 漢) is put on a spare keycode; those remaps stay in
place while the connection lives, because reverting right after the key event races the
application, which may read the keyboard map only when it handles the event (xdotool's
lost-é bug). Pointer and keyboard are display/pointer.py's and display/keyboard.py's.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Iterable, Iterator

from Xlib import XK, X  # type: ignore[import-untyped, unused-ignore]
from Xlib.display import Display  # type: ignore[import-untyped, unused-ignore]
from Xlib.ext import xtest  # type: ignore[import-untyped, unused-ignore]

from roundhouse.devices.linux.display.base import Button, Closing
from roundhouse.devices.linux.display.keyboard import Chord, Keyboard
from roundhouse.devices.linux.display.keys import (
    InputError,
    char_keysym,
    is_letter,
    key_keysym,
    parse_combo,
)
from roundhouse.devices.linux.display.pointer import HORIZONTAL, Pointer

__all__ = ["InputError", "XInput", "char_keysym", "key_keysym", "parse_combo"]

_BUTTONS: dict[Button, int] = {"left": 1, "middle": 2, "right": 3}
# A wheel notch is a click of a button: (towards the start, towards the end) per axis.
_WHEEL = {False: (4, 5), True: (6, 7)}  # vertical: up, down; horizontal: left, right


class XInput(Pointer, Keyboard, Closing):
    """XTest input on one display. Thread-safe: calls are serialised on one lock."""

    def __init__(self, display: str, key_delay: float = 0.002) -> None:
        self._display = Display(display)
        if not self._display.has_extension("XTEST"):
            self._display.close()
            raise RuntimeError(f"display {display} has no XTEST extension")
        self._lock = threading.Lock()
        self.key_delay = key_delay
        screen = self._display.screen()
        self._size = (int(screen.width_in_pixels), int(screen.height_in_pixels))
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

    def _flush(self) -> None:
        self._display.sync()

    # --- pointer ---

    def _screen_size(self) -> tuple[int, int]:
        return self._size

    def position(self) -> tuple[int, int]:
        """Where the pointer is now, as the server says (a person's moves too)."""
        with self._lock:
            found = self._display.screen().root.query_pointer()
        return int(found.root_x), int(found.root_y)

    def _motion(self, x: int, y: int) -> None:
        xtest.fake_input(self._display, X.MotionNotify, x=x, y=y)

    def _button(self, button: Button, pressed: bool) -> None:
        self._press(_BUTTONS[button], pressed)

    def _axis(self, axis: int, steps: int) -> None:
        back, forth = _WHEEL[axis == HORIZONTAL]
        for _ in range(abs(steps)):
            self._press(forth if steps > 0 else back, True)
            self._press(forth if steps > 0 else back, False)

    def _press(self, code: int, pressed: bool) -> None:
        xtest.fake_input(self._display, X.ButtonPress if pressed else X.ButtonRelease, code)

    # --- keyboard ---

    def _key(self, keycode: int, pressed: bool) -> None:
        xtest.fake_input(self._display, X.KeyPress if pressed else X.KeyRelease, keycode)

    def _text_chords(self, text: str) -> Iterator[Chord]:
        """Each character's key, found (or put on a spare keycode) just before it is
        typed: a text with more new characters than spare keycodes reuses them in turn."""
        keysyms = [char_keysym(char) for char in text]  # refused whole, before any key
        for keysym in keysyms:
            keycode, shift = self._keycode(keysym)
            yield Chord((self._shift,) if shift else (), keycode)

    def _combo_chords(self, keys: str) -> Iterable[Chord]:
        combos = [parse_combo(combo) for combo in keys.split()]
        if not combos:
            raise InputError("no keys given")
        resolved = [
            ([self._modifier_keycode(name) for name in modifiers], key_keysym(key))
            for modifiers, key in combos
        ]
        chords = []
        for modifier_codes, keysym in resolved:
            keycode, shift = self._keycode(keysym)
            # Shifted symbols ("ctrl+?") need Shift; a letter with ctrl does not ("ctrl+S").
            if shift and self._shift not in modifier_codes and not is_letter(keysym):
                modifier_codes = [*modifier_codes, self._shift]
            chords.append(Chord(tuple(modifier_codes), keycode))
        return chords

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
