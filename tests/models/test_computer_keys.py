"""The keys each computer-use family names reach press_keys as names the keysym typing
knows (devices/linux/display/keys.py), so that they are typed by keysym on any layout."""

from __future__ import annotations

import pytest

from roundhouse.devices.contract import Rect
from roundhouse.devices.linux.display.keys import key_keysym, parse_combo
from roundhouse.models.anthropic.tools import as_tool_call
from roundhouse.models.computer.keys import press_keys_text
from roundhouse.models.computer.screen import ScreenMap
from roundhouse.models.openai_computer.tools import chord

SCREEN = ScreenMap(Rect(0, 0, 1280, 800), (1280, 800))

# xdotool's names, as Claude writes them.
CLAUDE = ["ctrl+s", "Return", "ctrl+shift+Tab", "KP_Enter", "Page_Down", "super", "ctrl",
          "BackSpace", "Escape", "alt+F4", "ctrl+a Delete", "shift+Home", "space", "Up",
          "ctrl+plus", "Control_L+s", "Super_L+l", "ctrl++", "cmd+c"]  # fmt: skip
# OpenAI's, as computer-use-preview writes them.
OPENAI = [["CTRL", "S"], ["ENTER"], ["ESC"], ["CTRL", "SHIFT", "T"], ["ALT", "F4"],
          ["ARROWDOWN"], ["PAGEUP"], ["BACKSPACE"], ["SPACE"], ["TAB"], ["CMD", "L"],
          ["CMD"], ["SHIFT"]]  # fmt: skip


def known(keys: str) -> None:
    for combo in keys.split():
        _, key = parse_combo(combo)
        assert key_keysym(key) > 0, combo


@pytest.mark.parametrize("keys", CLAUDE)
def test_claudes_keys_are_known_keysyms(keys: str) -> None:
    name, arguments = as_tool_call({"action": "key", "text": keys}, SCREEN) or ("", {})
    assert name == "press_keys"
    known(arguments["keys"])


@pytest.mark.parametrize("keys", OPENAI)
def test_openais_keys_are_known_keysyms(keys: list[str]) -> None:
    known(chord(keys))


def test_modifiers_by_their_x_names_become_press_keys_modifiers() -> None:
    assert press_keys_text("Control_L+Shift_L+t") == "ctrl+shift+t"
    assert press_keys_text("super ctrl+s") == "Super_L ctrl+s"
    assert press_keys_text("ctrl++") == "ctrl++"
    assert press_keys_text("Return") == "Return"
