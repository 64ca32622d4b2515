"""Keys by name, as people and models write them: "ctrl+s", "Return", "é".

A key is an X keysym (the same numbers on X11 and in Wayland's XKB keymaps); how a
keysym reaches an application is each display backend's business (a keycode in the X
server's map, a key of an uploaded keymap, a keysym the compositor places itself).
"""

from __future__ import annotations

from Xlib import XK, X  # type: ignore[import-untyped, unused-ignore]

_MODIFIERS: dict[str, str] = {
    "ctrl": "Control_L",
    "control": "Control_L",
    "shift": "Shift_L",
    "alt": "Alt_L",
    "super": "Super_L",
    "win": "Super_L",
    "meta": "Super_L",
    "altgr": "ISO_Level3_Shift",
}

# Names people (and models) write, mapped to X keysym names.
_KEY_ALIASES: dict[str, str] = {
    "enter": "Return",
    "return": "Return",
    "esc": "Escape",
    "escape": "Escape",
    "del": "Delete",
    "delete": "Delete",
    "backspace": "BackSpace",
    "bksp": "BackSpace",
    "tab": "Tab",
    "space": "space",
    "spacebar": "space",
    "pgup": "Prior",
    "pageup": "Prior",
    "page_up": "Prior",
    "pgdn": "Next",
    "pagedown": "Next",
    "page_down": "Next",
    "ins": "Insert",
    "insert": "Insert",
    "home": "Home",
    "end": "End",
    "up": "Up",
    "down": "Down",
    "left": "Left",
    "right": "Right",
    "menu": "Menu",
    "capslock": "Caps_Lock",
    "printscreen": "Print",
    "plus": "plus",
    "minus": "minus",
}

_CHAR_KEYSYMS: dict[str, str] = {"\n": "Return", "\t": "Tab", "\b": "BackSpace"}


class InputError(ValueError):
    """A key name or character that cannot be typed."""


class LayoutError(InputError):
    """Characters the session's keyboard layout has no key for (Wayland sessions whose
    compositor reads keys with its own keymap): nothing of the text was typed."""


def char_keysym(char: str) -> int:
    """The keysym of one character: Latin-1 maps to itself, the rest to 0x01000000 + code."""
    if char in _CHAR_KEYSYMS:
        return int(XK.string_to_keysym(_CHAR_KEYSYMS[char]))
    code = ord(char)
    if 0x20 <= code <= 0x7E or 0xA0 <= code <= 0xFF:
        return code
    if code < 0x20 or code == 0x7F:
        raise InputError(f"control character {char!r} cannot be typed")
    return 0x01000000 | code


def key_keysym(name: str) -> int:
    """The keysym for a key name: 'Return', 'enter', 'F4', 'a', 'Page_Down', '€'."""
    if len(name) == 1:
        return char_keysym(name)
    candidates = [name, _KEY_ALIASES.get(name.lower(), ""), name.capitalize(), name.upper()]
    for candidate in candidates:
        if candidate:
            keysym = XK.string_to_keysym(candidate)
            if keysym != X.NoSymbol:
                return int(keysym)
    raise InputError(f"unknown key {name!r} (use X key names such as Return, Escape, F4, a)")


def parse_combo(combo: str) -> tuple[list[str], str]:
    """'ctrl+shift+t' -> (['Control_L', 'Shift_L'], 't'); a lone '+' is the plus key."""
    parts = combo.split("+")
    if combo.endswith("+"):  # "ctrl++" means ctrl and the plus key
        parts = [*combo[:-2].split("+"), "+"] if len(combo) > 1 else ["+"]
    *modifiers, key = [part.strip() for part in parts]
    if not key:
        raise InputError(f"key combination {combo!r} has no key")
    names = []
    for modifier in modifiers:
        if modifier.lower() not in _MODIFIERS:
            raise InputError(f"unknown modifier {modifier!r} in {combo!r}")
        names.append(_MODIFIERS[modifier.lower()])
    return names, key


def held_combo(keys: str) -> str:
    """A combination to hold down, its last modifier named as its key: "shift" is Shift_L,
    "ctrl+shift" ctrl held around Shift_L (a modifier alone names no key to press)."""
    *held, last = keys.split("+") if keys != "+" else ["+"]
    key = _MODIFIERS.get(last.strip().lower(), last)
    return "+".join([*held, key])


def is_letter(keysym: int) -> bool:
    """An ASCII letter: "ctrl+S" means ctrl and the S key, without Shift."""
    return 0x41 <= keysym <= 0x5A or 0x61 <= keysym <= 0x7A
