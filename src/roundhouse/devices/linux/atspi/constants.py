"""AT-SPI numbers and names: roles, states, interfaces, D-Bus names (pure data).

The role and state tables are libatspi's AtspiRole and AtspiStateType in order (at-spi2-core
2.46); the names are what Atspi.role_get_name and pyatspi show.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

from roundhouse.devices.contract import CLICKABLE_ROLES

REGISTRY_BUS = "org.a11y.atspi.Registry"
ROOT_PATH = "/org/a11y/atspi/accessible/root"
REGISTRY_PATH = "/org/a11y/atspi/registry"
CACHE_PATH = "/org/a11y/atspi/cache"
NULL_PATH = "/org/a11y/atspi/null"

ACCESSIBLE = "org.a11y.atspi.Accessible"
ACTION = "org.a11y.atspi.Action"
COMPONENT = "org.a11y.atspi.Component"
TEXT = "org.a11y.atspi.Text"
TABLE = "org.a11y.atspi.Table"
TABLE_CELL = "org.a11y.atspi.TableCell"
EDITABLE_TEXT = "org.a11y.atspi.EditableText"
VALUE = "org.a11y.atspi.Value"
PROPERTIES = "org.freedesktop.DBus.Properties"

COORD_SCREEN = 0
COORD_WINDOW = 1  # relative to the object's top-level window
# Roles whose Value is what a person reads of them. LibreOffice gives every toolbar button
# a Value of 0 (Calc's view listed more than 60 `= '0'`), GTK 3 its split panes the
# divider's position: a value that tells nothing is neither asked for nor shown.
VALUE_READ_ROLES = frozenset(
    {"slider", "spin button", "scroll bar", "progress bar", "level bar", "dial", "meter"}
)
# Extents of objects that are not on screen.
OFFSCREEN = -2147483648

ROLES = (
    "invalid",
    "accelerator label",
    "alert",
    "animation",
    "arrow",
    "calendar",
    "canvas",
    "check box",
    "check menu item",
    "color chooser",
    "column header",
    "combo box",
    "date editor",
    "desktop icon",
    "desktop frame",
    "dial",
    "dialog",
    "directory pane",
    "drawing area",
    "file chooser",
    "filler",
    "focus traversable",
    "font chooser",
    "frame",
    "glass pane",
    "html container",
    "icon",
    "image",
    "internal frame",
    "label",
    "layered pane",
    "list",
    "list item",
    "menu",
    "menu bar",
    "menu item",
    "option pane",
    "page tab",
    "page tab list",
    "panel",
    "password text",
    "popup menu",
    "progress bar",
    "push button",
    "radio button",
    "radio menu item",
    "root pane",
    "row header",
    "scroll bar",
    "scroll pane",
    "separator",
    "slider",
    "spin button",
    "split pane",
    "status bar",
    "table",
    "table cell",
    "table column header",
    "table row header",
    "tearoff menu item",
    "terminal",
    "text",
    "toggle button",
    "tool bar",
    "tool tip",
    "tree",
    "tree table",
    "unknown",
    "viewport",
    "window",
    "extended",
    "header",
    "footer",
    "paragraph",
    "ruler",
    "application",
    "autocomplete",
    "editbar",
    "embedded",
    "entry",
    "chart",
    "caption",
    "document frame",
    "heading",
    "page",
    "section",
    "redundant object",
    "form",
    "link",
    "input method window",
    "table row",
    "tree item",
    "document spreadsheet",
    "document presentation",
    "document text",
    "document web",
    "document email",
    "comment",
    "list box",
    "grouping",
    "image map",
    "notification",
    "info bar",
    "level bar",
    "title bar",
    "block quote",
    "audio",
    "video",
    "definition",
    "article",
    "landmark",
    "log",
    "marquee",
    "math",
    "rating",
    "timer",
    "static",
    "math fraction",
    "math root",
    "subscript",
    "superscript",
    "description list",
    "description term",
    "description value",
    "footnote",
    "content deletion",
    "content insertion",
    "mark",
    "suggestion",
    "push button menu",
)
STATES = (
    "invalid",
    "active",
    "armed",
    "busy",
    "checked",
    "collapsed",
    "defunct",
    "editable",
    "enabled",
    "expandable",
    "expanded",
    "focusable",
    "focused",
    "has-tooltip",
    "horizontal",
    "iconified",
    "modal",
    "multi-line",
    "multiselectable",
    "opaque",
    "pressed",
    "resizable",
    "selectable",
    "selected",
    "sensitive",
    "showing",
    "single-line",
    "stale",
    "transient",
    "vertical",
    "visible",
    "manages-descendants",
    "indeterminate",
    "required",
    "truncated",
    "animated",
    "invalid-entry",
    "supports-autocompletion",
    "selectable-text",
    "is-default",
    "visited",
    "checkable",
    "has-popup",
    "read-only",
)

# Roles a person operates; other nodes count as controls only when focusable, editable or
# actionable.
INTERACTIVE_ROLES = CLICKABLE_ROLES | {
    "push button menu",
    "tearoff menu item",
    "menu",
    "entry",
    "password text",
    "spin button",
    "slider",
    "tree item",
}

# Containers that take the keyboard focus (GTK's split panes, scrolled windows) without being
# something a person operates.
CONTAINER_ROLES = frozenset(
    {
        "application",
        "filler",
        "frame",
        "glass pane",
        "internal frame",
        "layered pane",
        "menu bar",
        "page tab list",
        "panel",
        "root pane",
        "scroll pane",
        "split pane",
        "status bar",
        "tool bar",
        "viewport",
        "window",
        "dialog",
        # Web pages' structure: Chromium makes documents, forms and sections focusable or
        # gives them actions, and none of them is what a person operates.
        "document web",
        "document frame",
        "document email",
        "form",
        "section",
        "grouping",
        "landmark",
        "article",
        "html container",
        "info bar",
        "block quote",
        "description list",
    }
)

# Containers that scroll: what lies outside them is not seen, whatever its states say.
SCROLLING_ROLES = frozenset(
    {"scroll pane", "viewport", "list", "list box", "table", "tree", "tree table"}
)

# Nodes whose name is text a person reads (to name a control that has no name).
TEXT_ROLES = frozenset({"label", "static", "text", "heading", "paragraph", "caption"})


def role_name(number: int) -> str:
    return ROLES[number] if 0 <= number < len(ROLES) else f"role {number}"


def state_names(bits: Sequence[int]) -> list[str]:
    """The names of the states set in AT-SPI's two 32-bit words, in table order."""
    # A GetItems reply holds ~2,000 state sets but only a few dozen different ones: the
    # bit loop took ~30 ms a LibreOffice read before it was remembered.
    return list(_state_names(tuple(bits[:2])))


@cache
def _state_names(words: tuple[int, ...]) -> tuple[str, ...]:
    names = []
    for word_index, word in enumerate(words):
        for bit in range(32):
            if word & (1 << bit):
                number = word_index * 32 + bit
                names.append(STATES[number] if number < len(STATES) else f"state {number}")
    return tuple(names)
