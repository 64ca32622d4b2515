"""The fake Anthropic API's tables, from the API's documentation (fake.py checks with them):
which model takes which computer tool version, the fields a computer tool may have, and
each version's actions with the inputs each takes.

Written apart from the client (tools.py), as the fake is: a script that answers an action
its request's tool version lacks (zoom under computer_20250124, or without enable_zoom),
or an action with an input the API never sends, is refused (action_problem), since the
real API would never answer so and a client tested on it would be tested on nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# The computer tool's fields (anthropic-sdk-python's BetaToolComputerUse20250124Param);
# computer_20251124 adds enable_zoom.
COMPUTER_FIELDS = frozenset(
    {"type", "name", "display_width_px", "display_height_px", "display_number",
     "cache_control", "allowed_callers", "defer_loading", "input_examples", "strict"}
)  # fmt: skip
ZOOMING = "computer_20251124"  # the version whose tool may say enable_zoom

# Tool type → its beta header, and the models that take it (by name prefix), as the
# documentation's table of computer-use models lists them.
TOOLS: dict[str, tuple[str, tuple[str, ...]]] = {
    "computer_20251124": (
        "computer-use-2025-11-24",
        ("claude-opus-4-5", "claude-opus-4-6", "claude-opus-4-7", "claude-sonnet-4-6"),
    ),
    "computer_20250124": (
        "computer-use-2025-01-24",
        (
            "claude-sonnet-4-5",
            "claude-haiku-4-5",
            "claude-opus-4-1",
            "claude-opus-4-2025",
            "claude-sonnet-4-2025",
            "claude-3-7-sonnet",
        ),
    ),
    "computer_20241022": ("computer-use-2024-10-22", ("claude-3-5-sonnet",)),
}

# Each action's inputs beside `action`: (required, optional), per version, as Anthropic's
# reference tool (computer-use-demo's tools/computer.py) takes them. computer_20241022
# clicks where mouse_move put the pointer; computer_20250124 adds its actions, and a click
# may name its point and hold keys (text); computer_20251124 adds zoom.
_V1: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "key": (frozenset({"text"}), frozenset()),
    "type": (frozenset({"text"}), frozenset()),
    "mouse_move": (frozenset({"coordinate"}), frozenset()),
    "left_click": (frozenset(), frozenset()),  # where mouse_move put the pointer
    "left_click_drag": (frozenset({"start_coordinate", "coordinate"}), frozenset()),
    "right_click": (frozenset(), frozenset()),
    "middle_click": (frozenset(), frozenset()),
    "double_click": (frozenset(), frozenset()),
    "screenshot": (frozenset(), frozenset()),
    "cursor_position": (frozenset(), frozenset()),
}
_CLICK: tuple[frozenset[str], frozenset[str]] = (frozenset(), frozenset({"coordinate", "text"}))
_V2 = {
    **_V1,
    **{name: _CLICK for name in ("left_click", "right_click", "middle_click", "double_click")},
    "triple_click": _CLICK,
    "scroll": (
        frozenset({"scroll_direction", "scroll_amount"}),
        frozenset({"coordinate", "text"}),
    ),
    "left_mouse_down": (frozenset(), frozenset()),
    "left_mouse_up": (frozenset(), frozenset()),
    "hold_key": (frozenset({"text", "duration"}), frozenset()),
    "wait": (frozenset({"duration"}), frozenset()),
}
ACTIONS: dict[str, Mapping[str, tuple[frozenset[str], frozenset[str]]]] = {
    "computer_20241022": _V1,
    "computer_20250124": _V2,
    "computer_20251124": {**_V2, "zoom": (frozenset({"region"}), frozenset())},
}


def action_problem(action: Mapping[str, Any], kind: str, zoom: bool) -> str | None:
    """Why the API would never answer `action` to a request whose computer tool is `kind`
    (zoom: it said enable_zoom), or None where it might."""
    name = action.get("action")
    inputs = ACTIONS[kind].get(str(name))
    if inputs is None:
        return f"{name!r} is not an action of {kind}"
    if name == "zoom" and not zoom:
        return f"zoom is {kind}'s only with enable_zoom in the tool's definition"
    required, optional = inputs
    given = set(action) - {"action"}
    if missing := sorted(required - given):
        return f"{name} without {missing[0]}"
    if extra := sorted(given - required - optional):
        return f"{name} has no input {extra[0]!r} in {kind}"
    return None
