"""Keys as press_keys takes them, from a family's names. Pure.

press_keys reads "ctrl+s", "Return", several separated by spaces; its modifiers are named
"ctrl", "alt", "shift", "super" only before a "+". A model that presses a modifier alone
("super", to open the activities) names it so: it becomes its key, Super_L."""

from __future__ import annotations

LONE_MODIFIERS = {
    "super": "Super_L",
    "win": "Super_L",
    "meta": "Super_L",
    "cmd": "Super_L",
    "ctrl": "Control_L",
    "control": "Control_L",
    "alt": "Alt_L",
    "shift": "Shift_L",
}


def press_keys_text(keys: str) -> str:
    """`keys` with every modifier pressed alone named as its key."""
    return " ".join(LONE_MODIFIERS.get(combo.lower(), combo) for combo in keys.split())
