"""Pure logic over read nodes: building the typed tree, choosing the controls a person would
operate, numbering them in reading order, and the seeds' JSON shape. No I/O here."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from roundhouse.devices.contract import (
    VALUE_ROLES,
    Context,
    Control,
    ControlList,
    Rect,
    UiNode,
    UiSnapshot,
    WindowInfo,
    readable,
)
from roundhouse.devices.linux.atspi.bus import Ref, node_id
from roundhouse.devices.linux.atspi.constants import (
    ACTION,
    COMPONENT,
    CONTAINER_ROLES,
    INTERACTIVE_ROLES,
    SCROLLING_ROLES,
    TEXT,
    TEXT_ROLES,
)
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


def build_tree(nodes: dict[Ref, RawNode], root: Ref) -> UiNode:
    raw = nodes[root]
    return UiNode(
        id=node_id(raw.ref),
        role=raw.role,
        name=raw.name,
        description=raw.description or "",
        states=raw.states,
        rect=raw.rect,
        actions=raw.actions,
        text=raw.text if raw.summary is None else raw.summary,
        children=[build_tree(nodes, child) for child in raw.children or []],
    )


def walk(node: UiNode) -> Iterator[UiNode]:
    """Depth first, in tree order."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))


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
    return usable and _operable(node.role, states, bool(node.actions)) and _placed(node, area)


def _placed(node: UiNode, area: Rect) -> bool:
    rect = node.rect
    return rect is not None and rect.width > 0 and rect.height > 0 and intersects(rect, area)


def intersects(rect: Rect, area: Rect) -> bool:
    return (
        rect.left < area.right
        and area.left < rect.right
        and rect.top < area.bottom
        and area.top < rect.bottom
    )


def intersection(first: Rect, second: Rect) -> Rect:
    return Rect(
        left=max(first.left, second.left),
        top=max(first.top, second.top),
        right=min(first.right, second.right),
        bottom=min(first.bottom, second.bottom),
    )


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


@dataclass
class View:
    """What a person sees of a window: its controls, numbered in reading order, and the
    text among them that tells what they are for."""

    controls: list[Control]
    context: list[Context]
    dialog: str | None = None  # see shown_dialog


def select_controls(root: UiNode, area: Rect) -> list[Control]:
    """The controls under `root` inside `area`, numbered 1..N in reading order."""
    return select_view(root, area).controls


def select_view(root: UiNode, area: Rect) -> View:
    """The controls under `root` inside `area`, numbered 1..N in reading order, and the
    context: named headings, labels, alerts and groups, that name no control and are not
    part of one (a link's text is the link's name), listed once."""
    controls: list[tuple[UiNode, bool]] = []
    texts: list[UiNode] = []
    _gather(root, area, root, controls, texts, inside=False)
    in_document = {id(node) for node, document in controls if document}
    ordered = reading_order([node for node, _ in controls if not _blank_cell(node)])
    listed = [
        _control(label, node, area, id(node) in in_document)
        for label, node in enumerate(ordered, start=1)
    ]
    return View(listed, _context(texts, listed), shown_dialog(root))


def shown_dialog(root: UiNode) -> str | None:
    """The title of a dialog shown inside the window, in front of its content: libadwaita
    1.5's dialogs (AdwDialog, AdwAlertDialog: Nautilus 48's New Folder, GNOME Text Editor
    48's Save Changes?) are drawn in the window they belong to, where 1.2's had a window of
    their own. Such a dialog is a showing "dialog" or "alert" spread over (at least half of)
    the window; an alert a page shows among its text is not."""
    if root.rect is None or root.rect.area <= 0:
        return None
    for node in walk(root):
        if node is root or node.role not in {"dialog", "alert"} or node.rect is None:
            continue
        if "showing" not in node.states:
            continue
        if 2 * intersection(node.rect, root.rect).area >= root.rect.area:
            return node.name or node.role
    return None


def _blank_cell(node: UiNode) -> bool:
    """A cell that shows nothing to read or act on (a GTK list's icon column, an empty
    spreadsheet cell that holds neither the focus nor the selection)."""
    return (
        node.role == "table cell"
        and not control_name(node)
        and not readable(node.text, 1)
        and not shown_states(node)
    )


def _control(label: int, node: UiNode, area: Rect, in_document: bool = False) -> Control:
    """The control as listed: its rectangle is the part of it inside `area` (the window).
    What lies outside is not drawn: GNOME Calculator 48 reports its Undo button one pixel
    left of its window, and a click or a mark must land on what shows."""
    assert node.rect is not None  # is_control keeps placed nodes only
    name = control_name(node)
    return Control(
        label=label,
        id=node.id,
        role=node.role,
        name=name,
        rect=intersection(node.rect, area),
        actions=node.actions,
        text=node.text,
        states=shown_states(node),
        in_document=in_document,
    )


def keep_numbers(previous: ControlList | None, fresh: ControlList) -> ControlList:
    """`fresh`, with each control keeping the number it had in `previous` when the window
    holds the very same controls (only moved, resized or changed in state or text): a model
    that planned "click 7" must find 7 where it was. Any control come or gone renumbers."""
    if previous is None or previous.window is None or fresh.window is None:
        return fresh
    if previous.window.xid != fresh.window.xid:
        return fresh
    kept = {control.id: control.label for control in previous.controls}
    if set(kept) != {control.id for control in fresh.controls} or len(kept) != len(fresh.controls):
        return fresh
    renumber = {control.label: kept[control.id] for control in fresh.controls}
    if all(old == new for old, new in renumber.items()):
        return fresh  # numbered alike already (a read kept: atspi_kept): nothing to copy
    controls = sorted(
        (c.model_copy(update={"label": renumber[c.label]}) for c in fresh.controls),
        key=lambda control: control.label,
    )
    context = [
        item.model_copy(update={"before": renumber.get(item.before, item.before)})
        for item in fresh.context
    ]
    return fresh.model_copy(update={"controls": controls, "context": context})


def _gather(
    node: UiNode,
    clip: Rect,
    root: UiNode,
    controls: list[tuple[UiNode, bool]],
    texts: list[UiNode],
    inside: bool,
) -> None:
    """Collect controls everywhere, each with whether it lies in a document (a web page, an
    office document: the window's content, not its chrome), and context outside them
    (iteratively: trees are deep)."""
    stack = [(node, clip, inside, False)]
    while stack:
        current, area, within, document = stack.pop()
        document = document or current.role.startswith("document")
        if is_control(current, area, document):
            controls.append((current, document))
            within = True  # what shows inside a control is part of it: its name or value
        elif not within and current is not root and _is_context(current, area, root.name):
            texts.append(current)
            # A heading's or label's own text is not listed again; an alert's message is.
            within = current.role in TEXT_ROLES
        if current.role in BOUNDING_ROLES and current.rect is not None:
            area = intersection(area, current.rect)
        if current.role == "menu" and _placed(current, area):
            # A menu's items pop up over the window, outside the bar that holds the menu
            # (LibreOffice's menu bar sits in a 25-pixel scroll pane that clipped them all).
            area = clip
        if _collapsed(current):
            continue  # its popup shows nothing, whatever its states say (Firefox's select)
        stack.extend((child, area, within, document) for child in reversed(current.children))


def _collapsed(node: UiNode) -> bool:
    return (
        node.role == "combo box" and "expandable" in node.states and ("expanded" not in node.states)
    )


def _is_context(node: UiNode, area: Rect, title: str) -> bool:
    if not _context_text(node) or "showing" not in node.states:
        return False
    if not _placed(node, area):
        return False
    if node.role in READ_ROLES or node.role in TEXT_READ_ROLES:
        return True
    # A container tells something only with a name none of its descendants shows (Chromium's
    # document is named after the page's heading, a GTK frame after its label) and that
    # the window's title does not say already (a page's title).
    if node.role not in CONTAINER_ROLES or readable(node.name, MAX_NAME) in title:
        return False
    return not any(
        readable(inner.name, MAX_NAME) == readable(node.name, MAX_NAME)
        for inner in walk(node)
        if inner is not node
    )


def _context(texts: list[UiNode], controls: list[Control]) -> list[Context]:
    """Each text once, placed before the first control that follows it in reading order;
    texts that name a control (its label) are left out: the control carries the name."""
    named = {control.name for control in controls}
    # Each control's row band and left edge, once: every text is placed against them all.
    bands = [
        (c.label, c.rect.top, c.rect.bottom, (c.rect.top + c.rect.bottom) / 2, c.rect.left)
        for c in controls
    ]
    seen: set[str] = set()
    context = []
    for node in reading_order(texts):
        text = _context_text(node)
        labels_a_control = node.role in LABEL_ROLES and text in named
        if labels_a_control or text in seen or node.rect is None:
            continue
        seen.add(text)
        before = _first_read_after(node.rect, bands, default=len(controls) + 1)
        context.append(Context(role=node.role, text=text, rect=node.rect, before=before))
    return context


def _first_read_after(
    rect: Rect, bands: list[tuple[int, int, int, float, int]], default: int
) -> int:
    """The label of the first control that `rect` reads before (_reads_before, unrolled:
    Calc places ~15 texts among ~600 cells on every read)."""
    top, bottom, left = rect.top, rect.bottom, rect.left
    middle = (top + bottom) / 2
    for label, band_top, band_bottom, band_middle, band_left in bands:
        if band_top <= middle < band_bottom and top <= band_middle < bottom:
            if left <= band_left:
                return label
        elif top < band_top:
            return label
    return default


def _context_text(node: UiNode) -> str:
    """What a person reads of a text node: its name, else (a nameless heading or paragraph)
    its text; a container only by its name."""
    if node.name or node.role not in TEXT_READ_ROLES:
        return readable(node.name, MAX_TEXT)
    return readable(node.text, MAX_TEXT)


def _reads_before(first: Rect, second: Rect) -> bool:
    """Whether `first` comes before `second` in reading order (rows, then left to right)."""
    if _same_row(first, second):
        return first.left <= second.left
    return first.top < second.top


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


def reading_order(nodes: list[UiNode]) -> list[UiNode]:
    """Rows top to bottom, left to right within a row; ties keep tree order.

    Two nodes share a row when each one's vertical centre lies within the other, so a tall
    text area does not swallow the short buttons beside or over it.
    """
    placed = [node for node in nodes if node.rect is not None]
    placed.sort(key=lambda node: (_rect(node).top, _rect(node).left))
    rows: list[list[UiNode]] = []
    for node in placed:
        if rows and _same_row(_rect(rows[-1][0]), _rect(node)):
            rows[-1].append(node)
        else:
            rows.append([node])
    return [node for row in rows for node in sorted(row, key=lambda node: _rect(node).left)]


def _same_row(first: Rect, second: Rect) -> bool:
    def inside(rect: Rect, band: Rect) -> bool:
        return band.top <= (rect.top + rect.bottom) / 2 < band.bottom

    return inside(first, second) and inside(second, first)


def _rect(node: UiNode) -> Rect:
    assert node.rect is not None  # reading_order only keeps placed nodes
    return node.rect


def ui_tree_json(snapshot: UiSnapshot) -> dict[str, Any]:
    """The seeds' shape ({"root": {control_type, name, automation_id, bounding_box,
    children}}) with our fields added to every node."""
    window = snapshot.window.model_dump(mode="json") if snapshot.window is not None else None
    return {
        "root": _node_json(snapshot.root) if snapshot.root is not None else None,
        "window": window,
        "node_count": snapshot.node_count,
        "truncated": snapshot.truncated,
        "truncated_reason": snapshot.truncated_reason,
        "tree_available": snapshot.tree_available,
        "elapsed_ms": round(snapshot.elapsed_ms, 1),
    }


def _node_json(node: UiNode) -> dict[str, Any]:
    return {
        "control_type": node.role,
        "name": node.name,
        "automation_id": node.id,
        "bounding_box": node.rect.as_list() if node.rect is not None else None,
        "id": node.id,
        "role": node.role,
        "description": node.description,
        "states": node.states,
        "actions": node.actions,
        "text": node.text,
        "children": [_node_json(child) for child in node.children],
    }


def no_tree_note(window: WindowInfo, bus_restarted: bool = False) -> str:
    name = window.application or window.title or "this application"
    if bus_restarted:
        # Applications join the accessibility bus once, at start: a bus that died and was
        # started again knows none of those that were running.
        return (
            f"the accessibility bus was restarted and {name} is not on the new one "
            "(restart the application to read its controls); use screenshots and coordinates"
        )
    return f"{name} exposes no accessibility tree; use screenshots and coordinates"


def focused_rect(shown: Iterable[Control | UiNode]) -> Rect | None:
    """Where the focused one of them is (None: none is, or it has no place)."""
    return next((one.rect for one in shown if "focused" in one.states), None)
