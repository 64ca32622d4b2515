"""Keys as press_keys takes them, from a family's names. Pure.

press_keys reads "ctrl+s", "Return", several separated by spaces; its modifiers are named
ctrl, alt, shift, super (win, meta) only before a "+". A model may name a modifier by its
X key (xdotool's "Control_L+s", "Super_L+l") or as a Mac has it ("cmd"): it becomes the
modifier press_keys knows. A modifier pressed alone ("super", to open the activities)
becomes its key, Super_L.
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
