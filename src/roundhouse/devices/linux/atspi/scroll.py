"""The rows of a long list that are in view, without reading every row.

A list or table of thousands of rows is read for the agent only where it is visible: its
rows are in order, so bisecting on their extents finds the first row in view in about
log2(n) calls, and the rows that follow are read until one lies below the view. Qt reports
every row as showing and GTK creates row objects only when asked, so reading all of them
would cost thousands of calls for the dozen a person sees. A list that manages its
descendants is never listed at all: its rows are asked for one by one (GetChildAtIndex).

"In view" is within the container's rectangle clipped to the area the caller gives (the
window on screen): a web page's table reports its whole height, thousands of pixels below
the window, and taken alone would put every row in view.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from roundhouse.devices.contract import Rect
from roundhouse.devices.linux.atspi.bus import AtspiBus, Ref
from roundhouse.devices.linux.atspi.constants import (
    GET_ACCESSIBLE_AT_POINT,
    GET_CHILD_AT_INDEX,
    GET_INDEX_IN_PARENT,
    NULL_PATH,
)
from roundhouse.devices.linux.atspi.layout import intersection
from roundhouse.devices.linux.atspi.props import coord_type, extents

LONG_LIST = 64  # children of a scrolling container worth bisecting rather than reading
MAX_ROWS_IN_VIEW = 2000  # a table in view can hold many cells
BATCH = 32
PROBES = 8  # rows looked at past one without extents, while bisecting
MIDDLE_STEP = 5  # pixels: where to look again when the middle of a view hits no child
UNPLACED_RUN = 32  # children without extents in a row, after rows in view: the view ended

RowAt = Callable[[int], Awaitable[Ref | None]]


async def rows_in_view(
    bus: AtspiBus, container: Ref, rows: list[Ref], area: Rect, rects: dict[Ref, Rect]
) -> list[Ref] | None:
    """The slice of `rows` that lies within the container's rectangle inside `area`; None
    when that cannot be told (a row without extents), so the caller reads every row. The
    rectangles read of the rows in view are put in `rects` (not to be asked again)."""

    async def listed(index: int) -> Ref | None:
        return rows[index]

    return await _in_view(bus, container, len(rows), listed, area, rects)


async def children_in_view(
    bus: AtspiBus, container: Ref, count: int, area: Rect, rects: dict[Ref, Rect]
) -> list[Ref] | None:
    """The children of a container that must not be listed, that lie within its rectangle
    inside `area`; None when that cannot be told. A short one (GTK's sidebars, whose
    separators have no extents) is read whole, one child at a time: there is nothing to save
    by bisecting."""

    def child(index: int) -> Awaitable[Ref | None]:  # a future (see AtspiBus.ask)
        return bus.ask(container, GET_CHILD_AT_INDEX, [index], _child_ref)

    if count <= LONG_LIST:
        found = await asyncio.gather(*(child(index) for index in range(count)))
        return [ref for ref in found if ref is not None]
    return await _in_view(bus, container, count, child, area, rects, hit_test=True)


def _child_ref(body: list[Any]) -> Ref | None:
    ref = (str(body[0][0]), str(body[0][1]))
    return ref if ref[0] and ref[1] != NULL_PATH else None


async def _in_view(
    bus: AtspiBus,
    container: Ref,
    count: int,
    row_at: RowAt,
    area: Rect,
    rects: dict[Ref, Rect],
    *,
    hit_test: bool = False,
) -> list[Ref] | None:
    """Bisect for the first row in view, then read on until a row lies below the view.

    Rows without extents (a hidden column's cells and header in a GTK tree view) are not in
    view and tell nothing: the bisection looks past them to the next row that has some. A
    start found too early only costs reading more; rows read that lie above the view are
    left out. The first few children are looked at on their own: a header.

    GTK gives the cells of rows out of view no extents at all, above the view as below it,
    which leaves the bisection blind once the list is scrolled. With `hit_test`, the child
    at the middle of the view (Component.GetAccessibleAtPoint) bounds the search: a child
    before it without extents lies above the view.
    """
    whole = await extents(bus, container)
    if whole is None:
        return None
    view = intersection(whole, area)
    if view.width <= 0 or view.height <= 0:
        return []  # the container lies outside the area: none of its rows is in view
    in_view = await _child_at_middle(bus, container, view, row_at, count) if hit_test else None
    low, high = 0, count if in_view is None else in_view + 1
    seen: dict[int, Rect] = {}
    while low < high:  # the first row whose bottom is below the top of the view
        middle = (low + high) // 2
        placed = await _next_placed(bus, row_at, middle, high)
        if placed is None:
            return None  # (the row went away)
        index, rect = placed
        if rect is not None:
            seen[index] = rect
        above = rect.bottom <= view.top if rect is not None else in_view is not None
        if above:
            low = index + 1
        else:
            high = middle
    # A table's header comes first among its children and stays in view when its rows
    # scroll: the bisection passes over it.
    found = await _leading_in_view(bus, row_at, min(low, PROBES), view, rects)
    end, read, unplaced, placed_in_view = low, 0, 0, False
    size = _rows_that_fit(seen.get(low), view)
    while end < count and read < MAX_ROWS_IN_VIEW:
        batch = range(end, min(end + size, count))
        asked = await asyncio.gather(*(row_at(index) for index in batch))
        rows = [row for row in asked if row is not None]
        if len(rows) < len(asked):
            return None
        row_rects = await asyncio.gather(*(extents(bus, row) for row in rows))
        for row, rect in zip(rows, row_rects, strict=True):
            if rect is None:
                unplaced += 1
                # GTK gives the cells of rows out of view no extents at all: a long run
                # of them after rows in view (not the header) is the end of the view.
                if placed_in_view and unplaced >= UNPLACED_RUN:
                    return found
                continue
            unplaced = 0
            if rect.top >= view.bottom:
                return found
            if rect.bottom > view.top:
                found.append(row)
                rects[row] = rect
                placed_in_view = True
        end, read, size = batch.stop, read + len(batch), BATCH
    return found


async def _child_at_middle(
    bus: AtspiBus, container: Ref, view: Rect, row_at: RowAt, count: int
) -> int | None:
    """The index of a child in view, the one at the middle of the view (or a few pixels
    lower: the middle may fall between two rows); None where the container does not say,
    or names something that is not its own child in view."""
    x, y = view.center
    coords = coord_type(bus, container)
    for point in ((x, y), (x, y + MIDDLE_STEP)):
        reply = await bus.call_or_none(container, GET_ACCESSIBLE_AT_POINT, [*point, coords])
        if reply and reply[0][0] and reply[0][1] != NULL_PATH:
            break
    else:
        return None
    hit = (str(reply[0][0]), str(reply[0][1]))
    index = await bus.call_or_none(hit, GET_INDEX_IN_PARENT)
    if not index or not 0 <= int(index[0]) < count:
        return None
    rect = await extents(bus, hit)
    # (a deeper object's index would be one in its own parent)
    if rect is None or await row_at(int(index[0])) != hit:
        return None
    return int(index[0]) if rect.bottom > view.top and rect.top < view.bottom else None


async def _leading_in_view(
    bus: AtspiBus, row_at: RowAt, count: int, view: Rect, rects: dict[Ref, Rect]
) -> list[Ref]:
    rows = [row for row in await asyncio.gather(*(row_at(i) for i in range(count))) if row]
    read = await asyncio.gather(*(extents(bus, row) for row in rows))
    found = []
    for row, rect in zip(rows, read, strict=True):
        if rect is not None and rect.bottom > view.top and rect.top < view.bottom:
            found.append(row)
            rects[row] = rect
    return found


async def _next_placed(
    bus: AtspiBus, row_at: RowAt, index: int, end: int
) -> tuple[int, Rect | None] | None:
    """The first row from `index` on (before `end`, and at most PROBES of them) that has
    extents, with them; (index, None) when none has. None when a row went away."""
    for probe in range(index, min(index + PROBES, end)):
        row = await row_at(probe)
        if row is None:
            return None
        rect = await extents(bus, row)
        if rect is not None:
            return probe, rect
    return index, None


def _rows_that_fit(first: Rect | None, view: Rect) -> int:
    """How many rows to read first: as many as fit below the first row in view, and the one
    after (that tells the end), if rows are as tall as the first."""
    if first is None or first.height <= 0:
        return BATCH
    return min(max((view.bottom - first.top) // first.height + 2, 1), BATCH)
