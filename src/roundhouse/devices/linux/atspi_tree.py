"""Pure logic over read nodes: building the typed tree, choosing the controls a person would
operate, numbering them in reading order, and the seeds' JSON shape. No I/O here."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from roundhouse.devices.contract import Control, Rect, UiNode, UiSnapshot
from roundhouse.devices.linux.atspi_bus import Ref, node_id
from roundhouse.devices.linux.atspi_constants import (
    ACTION,
    COMPONENT,
    CONTAINER_ROLES,
    INTERACTIVE_ROLES,
    SCROLLING_ROLES,
    TEXT_ROLES,
)
from roundhouse.devices.linux.atspi_node import RawNode


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


def _operable(role: str, states: set[str] | list[str], has_actions: bool) -> bool:
    if role in INTERACTIVE_ROLES or has_actions:
        return True
    return role not in CONTAINER_ROLES and ("focusable" in states or "editable" in states)


def may_be_control(node: RawNode) -> bool:
    """What can be told before reading details: every control passes, most other nodes not."""
    states = set(node.states)
    return (
        _usable(states)
        and COMPONENT in node.interfaces
        and _operable(node.role, states, ACTION in node.interfaces)
    )


def needs_rect(node: RawNode) -> bool:
    """Nodes whose rectangle the control filter reads: candidates and scrolling containers."""
    return may_be_control(node) or (node.role in SCROLLING_ROLES and COMPONENT in node.interfaces)


def is_control(node: UiNode, area: Rect) -> bool:
    """An interactive control a person sees: usable, operable, of some size, inside `area`."""
    states = set(node.states)
    rect = node.rect
    return (
        _usable(states)
        and _operable(node.role, states, bool(node.actions))
        and rect is not None
        and rect.width > 0
        and rect.height > 0
        and intersects(rect, area)
    )


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


def select_controls(root: UiNode, area: Rect) -> list[Control]:
    """The controls under `root` inside `area`, numbered 1..N in reading order."""
    found = [node for node, clip in _clipped(root, area) if is_control(node, clip)]
    return [
        Control(
            label=label,
            id=node.id,
            role=node.role,
            # GTK pads menu item names with spaces before the accelerator.
            name=(node.name or inner_name(node) or node.description).strip(),
            rect=node.rect,
            actions=node.actions,
            text=node.text,
        )
        for label, node in enumerate(reading_order(found), start=1)
        if node.rect is not None
    ]


def inner_name(node: UiNode, depth: int = 6) -> str:
    """A name for a control that has none of its own, from what it shows: the first text
    among its showing descendants (GTK's sidebar rows carry theirs on a label four levels
    down, after an icon), else the first name. Failing that, select_controls uses the
    description (GTK puts the tooltip there)."""
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
        if child.name:
            yield child
        yield from _named_descendants(child, depth - 1)


def _clipped(root: UiNode, area: Rect) -> Iterator[tuple[UiNode, Rect]]:
    """Each node with the part of the screen it can show in: scrolling containers clip their
    descendants (Qt reports rows scrolled out of a list as showing)."""
    stack = [(root, area)]
    while stack:
        node, clip = stack.pop()
        yield node, clip
        if node.role in SCROLLING_ROLES and node.rect is not None:
            clip = intersection(clip, node.rect)
        stack.extend((child, clip) for child in reversed(node.children))


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
