"""The rows of a long list that are in view, without reading every row.

A list or table of thousands of rows is read for the agent only where it is visible: its
rows are in order, so bisecting on their extents finds the first row in view in about
log2(n) calls, and the rows that follow are read until one lies below the view. Qt reports
every row as showing and GTK creates row objects only when asked, so reading all of them
would cost thousands of calls for the dozen a person sees.
"""

from __future__ import annotations

import asyncio

from roundhouse.devices.contract import Rect
from roundhouse.devices.linux.atspi_bus import AtspiBus, Ref
from roundhouse.devices.linux.atspi_constants import COMPONENT, COORD_SCREEN, OFFSCREEN

LONG_LIST = 64  # children of a scrolling container worth bisecting rather than reading
MAX_ROWS_IN_VIEW = 2000  # a table in view can hold many cells
BATCH = 32


async def extents(bus: AtspiBus, ref: Ref) -> Rect | None:
    reply = await bus.call_or_none(ref, COMPONENT, "GetExtents", "u", [COORD_SCREEN])
    if not reply:
        return None
    x, y, width, height = reply[0]
    if x == OFFSCREEN or y == OFFSCREEN:
        return None
    return Rect(left=x, top=y, right=x + width, bottom=y + height)


async def rows_in_view(bus: AtspiBus, container: Ref, rows: list[Ref]) -> list[Ref] | None:
    """The slice of `rows` that lies within the container's rectangle; None when that
    cannot be told (a row without extents), so the caller reads every row."""
    view = await extents(bus, container)
    if view is None:
        return None
    low, high = 0, len(rows)
    while low < high:  # the first row whose bottom is below the top of the view
        middle = (low + high) // 2
        rect = await extents(bus, rows[middle])
        if rect is None:
            return None
        if rect.bottom <= view.top:
            low = middle + 1
        else:
            high = middle
    start = end = low
    while end < len(rows) and end - start < MAX_ROWS_IN_VIEW:
        batch = range(end, min(end + BATCH, len(rows)))
        rects = await asyncio.gather(*(extents(bus, rows[index]) for index in batch))
        for index, rect in zip(batch, rects, strict=True):
            if rect is None:
                return None
            if rect.top >= view.bottom:
                return rows[start:index]
        end = batch.stop
    return rows[start:end]
