"""How OSWorld's VM server turns an accessible object into its tree (desktop_env/server/
main.py, which walks with pyatspi), in our words, written once: for `/accessibility`
(a11y_xml.py) and for the table `roundhouse bench observation` counts (bench/osworld.py).

- An object becomes an element named by its role name, spaces turned into "-"
  ("push-button"), "unknown" when it has none.
- Its states are pyatspi's names ("multi_line", where AT-SPI's is "multi-line").
- Only an object that is visible and showing has a place on screen (its position and size).
- Its text is its whole Text, without U+FFFC (an embedded object) and U+FFFD.
- The walk reads at most MAX_WIDTH children of an object, and MAX_DEPTH levels.
"""

from __future__ import annotations

import re
from collections.abc import Collection

MAX_DEPTH = 50
MAX_WIDTH = 1024
TEXT_DROPPED = re.compile("[\ufffc\ufffd]")


def tag(role: str) -> str:
    """The element's name for an object of this role."""
    return (role.strip() or "unknown").replace(" ", "-")


def state_name(state: str) -> str:
    """A state as pyatspi names it."""
    return state.replace("-", "_")


def placed(states: Collection[str]) -> bool:
    """Whether the object's position and size are written (asked)."""
    return "visible" in states and "showing" in states


def shown_text(text: str) -> str:
    """The object's text as the tree holds it."""
    return TEXT_DROPPED.sub("", text)
