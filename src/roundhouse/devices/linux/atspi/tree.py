"""The typed tree of a window, and what a person sees of it: its controls numbered in reading
order with the text among them that says what they are for (`select_view`), the numbers
kept while the window holds the same controls (`keep_numbers`), and the seeds' JSON shape.
Which nodes are controls is controls.py's; where they are and in what order they read,
layout.py's. Pure logic, no I/O."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from roundhouse.devices.contract import (
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
from roundhouse.devices.linux.atspi.constants import CONTAINER_ROLES, TEXT_ROLES
from roundhouse.devices.linux.atspi.controls import (
    BOUNDING_ROLES,
    LABEL_ROLES,
    MAX_NAME,
    MAX_TEXT,
    READ_ROLES,
    TEXT_READ_ROLES,
    control_name,
    is_control,
    placed,
    shown_states,
)
from roundhouse.devices.linux.atspi.layout import intersection, reading_order
from roundhouse.devices.linux.atspi.node import RawNode


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
        if current.role == "menu" and placed(current, area):
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
    if not placed(node, area):
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
