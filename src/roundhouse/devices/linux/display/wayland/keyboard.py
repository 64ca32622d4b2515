"""Keys as key strokes in a keymap: what the Wayland input backends share.

A backend presses keycodes (and the modifier keys a level needs); this turns "ctrl+s",
"é" or "Return" into those presses, given the keymap the keys will be read with.
ChordKeyboard is the shared keyboard (display/keyboard.py) finding its chords so.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from dataclasses import replace

from roundhouse.devices.linux.display.keyboard import Chord, Keyboard
from roundhouse.devices.linux.display.keys import (
    InputError,
    LayoutError,
    char_keysym,
    is_letter,
    key_keysym,
    parse_combo,
)
from roundhouse.devices.linux.display.wayland.keymap import Keymap

# X keysym names of the modifier keys parse_combo gives, and the XKB modifier each sets.
MODIFIER_NAMES = {
    "Control_L": "Control",
    "Shift_L": "Shift",
    "Alt_L": "Mod1",
    "Super_L": "Mod4",
    "ISO_Level3_Shift": "Mod5",
}


def chord_for(keymap: Keymap, keysym: int, extra_modifiers: tuple[str, ...] = ()) -> Chord | None:
    """The keys that give `keysym` with `extra_modifiers` (XKB names) held; None when the
    keymap has no key for it."""
    stroke = keymap.stroke(keysym)
    if stroke is None:
        return None
    wanted = list(extra_modifiers)
    for modifier in stroke.modifiers:
        # A shifted symbol ("ctrl+?") needs Shift; a letter does not ("ctrl+S" is ctrl+s).
        if modifier == "Shift" and extra_modifiers and is_letter(keysym):
            continue
        if modifier not in wanted:
            wanted.append(modifier)
    held = []
    for modifier in wanted:
        key = keymap.modifier_key(modifier)
        if key is None:
            raise InputError(f"the keyboard map has no key for the {modifier} modifier")
        held.append(key.keycode)
    return Chord(tuple(held), stroke.keycode, tuple(wanted))


# The dead keys a layout composes an accented letter with, by the combining mark that
# Unicode's decomposition gives it: é is e + U+0301, typed dead_acute, e (German has no é
# key, French no ö: a person types them so, and GTK and Qt compose them).
DEAD_KEYS = {
    "\u0300": 0xFE50,  # dead_grave
    "\u0301": 0xFE51,  # dead_acute
    "\u0302": 0xFE52,  # dead_circumflex
    "\u0303": 0xFE53,  # dead_tilde
    "\u0308": 0xFE57,  # dead_diaeresis
    "\u030a": 0xFE58,  # dead_abovering
    "\u030c": 0xFE5A,  # dead_caron
    "\u0327": 0xFE5B,  # dead_cedilla
}


def dead_key_chords(char: str, keymap: Keymap) -> list[Chord] | None:
    """The chords that compose `char` with a dead key of `keymap` (the dead key, then the
    letter), or None where its layout has no such pair."""
    decomposed = unicodedata.normalize("NFD", char)
    if len(decomposed) != 2 or decomposed[1] not in DEAD_KEYS:
        return None
    dead = chord_for(keymap, DEAD_KEYS[decomposed[1]])
    base = chord_for(keymap, char_keysym(decomposed[0]))
    return [dead, base] if dead is not None and base is not None else None


def text_chords(
    text: str, keymap: Keymap, missing: Callable[[list[int]], Keymap] | None = None
) -> list[Chord]:
    """The chords that type `text`. Characters the keymap lacks are handed to `missing`
    (which returns a keymap that has them), else composed with its dead keys, or refused,
    naming them."""
    keysyms = [char_keysym(char) for char in text]
    absent = sorted({k for k in keysyms if keymap.stroke(k) is None})
    if absent and missing is not None:
        keymap = missing(absent)
        absent = sorted({k for k in keysyms if keymap.stroke(k) is None})
    chords: list[Chord] = []
    lacking: set[str] = set()
    for char, keysym in zip(text, keysyms, strict=True):
        if keysym not in absent:
            chord = chord_for(keymap, keysym)
            chords.extend([chord] if chord is not None else [])
            continue
        composed = dead_key_chords(char, keymap)
        if composed is None:
            lacking.add(char)
        else:
            chords.extend(composed)
    if lacking:
        raise LayoutError(
            f"the keyboard layout has no key for {''.join(sorted(lacking))!r}; set the "
            "field's text with set_text"
        )
    return chords


def combo_chords(keys: str, keymap: Keymap) -> list[Chord]:
    """The chords of "ctrl+s alt+F4 Return"."""
    combos = [parse_combo(combo) for combo in keys.split()]
    if not combos:
        raise InputError("no keys given")
    chords = []
    for modifiers, name in combos:
        keysym = key_keysym(name)
        held = tuple(MODIFIER_NAMES[modifier] for modifier in modifiers)
        chord = chord_for(keymap, keysym, held)
        if chord is None:
            raise InputError(f"the keyboard layout has no key for {name!r}")
        if name in MODIFIER_NAMES:  # a modifier key itself ("shift" held): it sets its own
            chord = replace(chord, modifiers=(*chord.modifiers, MODIFIER_NAMES[name]))
        chords.append(chord)
    return chords


class ChordKeyboard(Keyboard):
    """The keyboard of a Wayland input backend: its chords are keys of `_keymap`, which the
    compositor reads them with. Key codes are XKB's (evdev's + 8)."""

    _keymap: Keymap

    def _text_chords(self, text: str) -> list[Chord]:
        return text_chords(text, self._keymap, self._add_keys)

    def _combo_chords(self, keys: str) -> list[Chord]:
        return combo_chords(keys, self._keymap)

    def _add_keys(self, keysyms: list[int]) -> Keymap:
        """A keymap with keys for `keysyms` too. A backend that types in the session's own
        keymap cannot add any: the keymap stays, and text_chords refuses the characters."""
        return self._keymap
