"""Where things are on the screen, as a person reads them: rectangles that meet, and the
order of reading (rows top to bottom, left to right within a row). Pure logic, no I/O."""

from __future__ import annotations

from roundhouse.devices.contract import Rect, UiNode


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


def reads_before(first: Rect, second: Rect) -> bool:
    """Whether `first` comes before `second` in reading order (rows, then left to right):
    the rule tree.py's placing of a text unrolls."""
    if _same_row(first, second):
        return first.left <= second.left
    return first.top < second.top


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
