"""Keys as press_keys takes them, from a family's names. Pure.

press_keys reads "ctrl+s", "Return", several separated by spaces; its modifiers are named
ctrl, alt, shift, super (win, meta) only before a "+". A model may name a modifier by its
X key (xdotool's "Control_L+s", "Super_L+l") or as a Mac has it ("cmd"): it becomes the
modifier press_keys knows. A modifier pressed alone ("super", to open the activities)
becomes its key, Super_L.

The families name keys as a browser or pyautogui does ("enter", "esc", "pagedown",
"arrowleft", "f4"): `chord` turns such a list, pressed together, into the X names.
"""

from __future__ import annotations

MODIFIERS = {
    "control_l": "ctrl", "control_r": "ctrl", "shift_l": "shift", "shift_r": "shift",
    "alt_l": "alt", "alt_r": "alt", "super_l": "super", "super_r": "super",
    "meta_l": "super", "meta_r": "super", "cmd": "super", "command": "super",
    "option": "alt",
}  # fmt: skip
LONE_MODIFIERS = {
    "super": "Super_L", "win": "Super_L", "meta": "Super_L", "cmd": "Super_L",
    "command": "Super_L", "ctrl": "Control_L", "control": "Control_L", "alt": "Alt_L",
    "option": "Alt_L", "shift": "Shift_L",
}  # fmt: skip


# Browser and pyautogui key names (OpenAI writes them upper case; UI-TARS, Qwen and OpenCUA
# lower) -> X key names.
KEY_NAMES = {
    "ctrl": "ctrl", "control": "ctrl", "alt": "alt", "option": "alt", "shift": "shift",
    "cmd": "super", "meta": "super", "super": "super", "win": "super", "command": "super",
    "enter": "Return", "return": "Return", "esc": "Escape", "escape": "Escape",
    "space": "space", "backspace": "BackSpace", "tab": "Tab", "delete": "Delete",
    "del": "Delete", "insert": "Insert", "home": "Home", "end": "End",
    "pageup": "Prior", "pagedown": "Next", "pgup": "Prior", "pgdn": "Next",
    "capslock": "Caps_Lock", "arrowup": "Up", "arrowdown": "Down", "arrowleft": "Left",
    "arrowright": "Right", "up": "Up", "down": "Down", "left": "Left", "right": "Right",
}  # fmt: skip


def chord(keys: list[str]) -> str:
    """["CTRL", "S"] -> "ctrl+s": keys pressed together, by browser or pyautogui names, as
    press_keys takes them (a lone modifier as its key). ValueError for an empty name."""
    if not keys or not all(isinstance(key, str) and key.strip() for key in keys):
        raise ValueError(f"keys are needed, not {keys!r}")
    names = []
    for key in keys:
        key = key.strip()
        known = KEY_NAMES.get(key.lower())
        if known is None and key[0] in "fF" and key[1:].isdigit():
            known = "F" + key[1:]  # f4 -> F4
        names.append(known or (key.lower() if len(key) == 1 else key))
    return press_keys_text("+".join(names))


def press_keys_text(keys: str) -> str:
    """`keys` as press_keys names them: modifiers by its names, one alone as its key."""
    return " ".join(_combo(combo) for combo in keys.split())


def _combo(combo: str) -> str:
    if combo.lower() in LONE_MODIFIERS:
        return LONE_MODIFIERS[combo.lower()]
    *held, key = combo.split("+") if not combo.endswith("++") else [*combo[:-2].split("+"), "+"]
    if not held:
        return combo
    return "+".join([*(MODIFIERS.get(part.lower(), part) for part in held), key])
