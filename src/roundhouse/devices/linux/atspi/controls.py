"""Which read nodes are controls a person operates, which are text a person reads, and what
each is called and shows of its state. Pure logic, no I/O: the reader asks these of raw
nodes before it reads their details (may_be_control, needs_rect), and tree.py of the typed
tree when it lists a window's controls (is_control, control_name, shown_states)."""

from __future__ import annotations

from collections.abc import Iterator

from roundhouse.devices.contract import VALUE_ROLES, Rect, UiNode, readable
from roundhouse.devices.linux.atspi.constants import (
    ACTION,
    COMPONENT,
    CONTAINER_ROLES,
    INTERACTIVE_ROLES,
    SCROLLING_ROLES,
    TEXT,
    TEXT_ROLES,
)
from roundhouse.devices.linux.atspi.layout import intersects
from roundhouse.devices.linux.atspi.node import RawNode

MAX_NAME = 80  # characters of a control's name shown; longer ones are cut with "…"
MAX_TEXT = 160  # of a context text
# Text a person reads to act (a label, a heading, an alert), when it names no control.
READ_ROLES = frozenset(
    {"label", "static", "heading", "caption", "alert", "notification", "status bar", "text"}
)
# Nameless, these still hold text a person reads (Firefox names none of them).
TEXT_READ_ROLES = frozenset({"heading", "paragraph", "label", "static", "caption"})
# Controls one types into: their descendants (icons, buttons) do not name them.
TYPED_ROLES = frozenset({"entry", "password text", "text", "spin button"})
# Text that labels a control, when it reads as a control's name: the control says it.
LABEL_ROLES = frozenset({"label", "static", "caption", "text", "paragraph"})
# Never operated, though toolkits make them focusable (Firefox's toolbar separators).
# GTK's file chooser is a focusable box around the controls one works with.
NEVER_CONTROLS = frozenset({"separator", "file chooser", "font chooser", "color chooser"})
CHECKABLE_ROLES = frozenset(
    {"check box", "radio button", "toggle button", "check menu item", "radio menu item"}
)


# What lies outside these is not seen: scrolled out, or in a menu bar that is not drawn
# (LibreOffice keeps its own menu bar, zero pixels high, beside the toolkit's: every menu
# was listed twice).
BOUNDING_ROLES = SCROLLING_ROLES | {"menu bar"}


def _usable(states: set[str] | list[str]) -> bool:
    return (
        "showing" in states
        and "visible" in states
        and ("enabled" in states or "focusable" in states or "editable" in states)
    )


def _greyed(role: str, states: set[str] | list[str]) -> bool:
    """A control shown greyed out: showing, of a role one operates, but neither enabled nor
    focusable (Chromium's disabled button). Listed, as "disabled", inside a document only
    (a web page), where a disabled twin of a control must not make the planner click
    another control of that name; elsewhere the window's chrome keeps them out of the list."""
    return "showing" in states and "visible" in states and role in INTERACTIVE_ROLES


def _operable(role: str, states: set[str] | list[str], has_actions: bool) -> bool:
    """Whether a person operates a node of this role and state. Containers never: Chromium
    gives panels and documents actions and the focus, and they are not what one clicks;
    text only where it is edited (gedit's document, a Writer paragraph)."""
    if role in INTERACTIVE_ROLES:
        return True
    if role in CONTAINER_ROLES or role in NEVER_CONTROLS:
        return False
    if role in TEXT_ROLES or role in READ_ROLES:
        return "editable" in states
    return has_actions or "focusable" in states or "editable" in states


def may_be_control(node: RawNode) -> bool:
    """What can be told before reading details: every control passes, most other nodes not."""
    states = set(node.states)
    return (
        (_usable(states) or _greyed(node.role, states))
        and COMPONENT in node.interfaces
        and _operable(node.role, states, ACTION in node.interfaces)
    )


def may_be_context(node: RawNode) -> bool:
    """A node that may be listed as text a person reads: showing, with a name of its own,
    or text of its own to read (Firefox's headings and paragraphs are nameless)."""
    if not node.showing or COMPONENT not in node.interfaces:
        return False
    if readable(node.name, MAX_NAME):
        return node.role in READ_ROLES or node.role in CONTAINER_ROLES
    return context_needs_text(node)


def context_needs_text(node: RawNode) -> bool:
    """A nameless text node whose words must be read (its Text) to be listed."""
    return node.role in TEXT_READ_ROLES and TEXT in node.interfaces and not node.name


def needs_rect(node: RawNode) -> bool:
    """Nodes whose rectangle the control filter reads: candidates, text a person may read,
    and the containers that bound what shows (BOUNDING_ROLES)."""
    return (
        may_be_control(node)
        or may_be_context(node)
        or (node.role in BOUNDING_ROLES and COMPONENT in node.interfaces)
    )


def is_control(node: UiNode, area: Rect, document: bool = False) -> bool:
    """An interactive control a person sees: usable (in a `document`, greyed out too),
    operable, of some size, inside `area`; not a cell that holds cells (GTK's row of a
    list: its cells are what shows)."""
    states = set(node.states)
    if node.role == "table cell" and any(child.role == "table cell" for child in node.children):
        return False
    usable = _usable(states) or (document and _greyed(node.role, states))
    return usable and _operable(node.role, states, bool(node.actions)) and placed(node, area)


def placed(node: UiNode, area: Rect) -> bool:
    rect = node.rect
    return rect is not None and rect.width > 0 and rect.height > 0 and intersects(rect, area)


def control_name(node: UiNode) -> str:
    """Its own name (the reader fills an empty one from the labelled-by relation), else the
    text it shows on a descendant (not an entry's: those are its icons), else its own text
    (not an entry's: that is its value), else its description (GTK puts the tooltip there)."""
    typed_into = node.role in TYPED_ROLES or "editable" in node.states
    for candidate in (
        node.name,
        "" if typed_into else inner_name(node),
        "" if node.role in VALUE_ROLES or "editable" in node.states else node.text,
        node.description,
    ):
        if name := readable(candidate, MAX_NAME):
            return name
    return ""


def shown_states(node: UiNode) -> list[str]:
    """The states a person sees, compactly: only those that tell something of this kind of
    control (every button is "enabled"; a check box is checked or not)."""
    states = set(node.states)
    shown = []
    if "focused" in states:
        shown.append("focused")
    if node.role in CHECKABLE_ROLES or "checkable" in states:
        shown.append("checked" if "checked" in states or "pressed" in states else "unchecked")
    if "selected" in states:
        shown.append("selected")
    if "expandable" in states:
        shown.append("expanded" if "expanded" in states else "collapsed")
    if "enabled" not in states and "sensitive" not in states:
        shown.append("disabled")
    if "editable" in states and node.role not in ("entry", "password text", "spin button"):
        shown.append("editable")  # a cell, a document or a Qt text field one can type into
    return shown


def inner_name(node: UiNode, depth: int = 6) -> str:
    """A name for a control that has none of its own, from what it shows: the first text
    among its showing descendants (GTK's sidebar rows carry theirs on a label four levels
    down, after an icon), else the first name."""
    named = list(_named_descendants(node, depth))
    for child in named:
        if child.role in TEXT_ROLES:
            return child.name
    return named[0].name if named else ""


def _named_descendants(node: UiNode, depth: int) -> Iterator[UiNode]:
    if depth == 0:
        return
    for child in node.children:
        if "showing" not in child.states:
            continue  # what is not on screen does not name anything
        if readable(child.name, MAX_NAME):
            yield child
        yield from _named_descendants(child, depth - 1)
