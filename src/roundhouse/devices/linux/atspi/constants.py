"""AT-SPI numbers and names: roles, states, interfaces, D-Bus names (pure data).

The role and state tables are libatspi's AtspiRole and AtspiStateType in order (at-spi2-core
2.46); the names are what Atspi.role_get_name and pyatspi show.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import NamedTuple

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
SELECTION = "org.a11y.atspi.Selection"
APPLICATION = "org.a11y.atspi.Application"
CACHE = "org.a11y.atspi.Cache"
REGISTRY = "org.a11y.atspi.Registry"  # the interface; REGISTRY_BUS names the bus
PROPERTIES = "org.freedesktop.DBus.Properties"


class Method(NamedTuple):
    """A D-Bus method, with the signature of what it is sent: written once here, where each
    call would otherwise spell out its interface, member and signature again."""

    interface: str
    member: str
    signature: str = ""


# The methods the readers and the tools call (at-spi2-core's xml/*.xml).
GET_ROLE = Method(ACCESSIBLE, "GetRole")
GET_ROLE_NAME = Method(ACCESSIBLE, "GetRoleName")
GET_STATE = Method(ACCESSIBLE, "GetState")
GET_INTERFACES = Method(ACCESSIBLE, "GetInterfaces")
GET_ATTRIBUTES = Method(ACCESSIBLE, "GetAttributes")
GET_RELATION_SET = Method(ACCESSIBLE, "GetRelationSet")
GET_CHILDREN = Method(ACCESSIBLE, "GetChildren")
GET_CHILD_AT_INDEX = Method(ACCESSIBLE, "GetChildAtIndex", "i")
GET_INDEX_IN_PARENT = Method(ACCESSIBLE, "GetIndexInParent")
GET_ACTIONS = Method(ACTION, "GetActions")
GET_ACTION_NAME = Method(ACTION, "GetName", "i")
GET_LOCALIZED_ACTION_NAME = Method(ACTION, "GetLocalizedName", "i")
DO_ACTION = Method(ACTION, "DoAction", "i")
GET_EXTENTS = Method(COMPONENT, "GetExtents", "u")
GRAB_FOCUS = Method(COMPONENT, "GrabFocus")
GET_ACCESSIBLE_AT_POINT = Method(COMPONENT, "GetAccessibleAtPoint", "iiu")
GET_TEXT = Method(TEXT, "GetText", "ii")
GET_CHARACTER_EXTENTS = Method(TEXT, "GetCharacterExtents", "iu")
SET_TEXT_CONTENTS = Method(EDITABLE_TEXT, "SetTextContents", "s")
INSERT_TEXT = Method(EDITABLE_TEXT, "InsertText", "isi")
GET_ACCESSIBLE_AT = Method(TABLE, "GetAccessibleAt", "ii")
GET_ROW_COLUMN_EXTENTS_AT_INDEX = Method(TABLE, "GetRowColumnExtentsAtIndex", "i")
GET_CELL_POSITION = Method(TABLE_CELL, "GetPosition")
GET_SELECTED_CHILD = Method(SELECTION, "GetSelectedChild", "i")
GET_APPLICATION_BUS_ADDRESS = Method(APPLICATION, "GetApplicationBusAddress")
GET_CACHED_ITEMS = Method(CACHE, "GetItems")
REGISTER_EVENT = Method(REGISTRY, "RegisterEvent", "sass")
GET_PROPERTY = Method(PROPERTIES, "Get", "ss")  # (interface, property name)
GET_ALL_PROPERTIES = Method(PROPERTIES, "GetAll", "s")  # (interface)
SET_PROPERTY = Method(PROPERTIES, "Set", "ssv")  # (interface, property name, value)

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
