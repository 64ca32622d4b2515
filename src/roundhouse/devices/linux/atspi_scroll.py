"""The rows of a long list that are in view, without reading every row.

A list or table of thousands of rows is read for the agent only where it is visible: its
rows are in order, so bisecting on their extents finds the first row in view in about
log2(n) calls, and the rows that follow are read until one lies below the view. Qt reports
every row as showing and GTK creates row objects only when asked, so reading all of them
would cost thousands of calls for the dozen a person sees. A list that manages its
descendants is never listed at all: its rows are asked for one by one (GetChildAtIndex).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from roundhouse.devices.contract import Rect
from roundhouse.devices.linux.atspi_bus import AtspiBus, Ref
from roundhouse.devices.linux.atspi_constants import ACCESSIBLE, NULL_PATH
from roundhouse.devices.linux.atspi_props import extents

LONG_LIST = 64  # children of a scrolling container worth bisecting rather than reading
MAX_ROWS_IN_VIEW = 2000  # a table in view can hold many cells
BATCH = 32

RowAt = Callable[[int], Awaitable[Ref | None]]


async def rows_in_view(bus: AtspiBus, container: Ref, rows: list[Ref]) -> list[Ref] | None:
    """The slice of `rows` that lies within the container's rectangle; None when that
    cannot be told (a row without extents), so the caller reads every row."""

    async def listed(index: int) -> Ref | None:
        return rows[index]

    return await _in_view(bus, container, len(rows), listed)


async def children_in_view(bus: AtspiBus, container: Ref, count: int) -> list[Ref] | None:
    """The children of a container that must not be listed, that lie within its rectangle;
    None when that cannot be told. A short one (GTK's sidebars, whose separators have no
    extents) is read whole, one child at a time: there is nothing to save by bisecting."""

    async def child(index: int) -> Ref | None:
        reply = await bus.call_or_none(container, ACCESSIBLE, "GetChildAtIndex", "i", [index])
        if not reply:
            return None
        ref = (str(reply[0][0]), str(reply[0][1]))
        return ref if ref[0] and ref[1] != NULL_PATH else None

    if count <= LONG_LIST:
        found = await asyncio.gather(*(child(index) for index in range(count)))
        return [ref for ref in found if ref is not None]
    return await _in_view(bus, container, count, child)


async def _in_view(bus: AtspiBus, container: Ref, count: int, row_at: RowAt) -> list[Ref] | None:
    view = await extents(bus, container)
    if view is None:
        return None
    low, high = 0, count
    seen: dict[int, Rect] = {}
    while low < high:  # the first row whose bottom is below the top of the view
        middle = (low + high) // 2
        row = await row_at(middle)
        rect = await extents(bus, row) if row is not None else None
        if rect is None:
            return None
        seen[middle] = rect
        if rect.bottom <= view.top:
            low = middle + 1
        else:
            high = middle
    found: list[Ref] = []
    end = low
    size = _rows_that_fit(seen.get(low), view)
    while end < count and len(found) < MAX_ROWS_IN_VIEW:
        batch = range(end, min(end + size, count))
        asked = await asyncio.gather(*(row_at(index) for index in batch))
        rows = [row for row in asked if row is not None]
        if len(rows) < len(asked):
            return None
        rects = await asyncio.gather(*(extents(bus, row) for row in rows))
        for row, rect in zip(rows, rects, strict=True):
            if rect is None:
                return None
            if rect.top >= view.bottom:
                return found
            found.append(row)
        end, size = batch.stop, BATCH
    return found


def _rows_that_fit(first: Rect | None, view: Rect) -> int:
    """How many rows to read first: as many as fit below the first row in view, and the one
    after (that tells the end), if rows are as tall as the first."""
    if first is None or first.height <= 0:
        return BATCH
    return min(max((view.bottom - first.top) // first.height + 2, 1), BATCH)
