"""What a managed container shows (see atspi_node): never its children, only the part in view.

- A wide table (a spreadsheet: 16384 columns) is read through its Table interface from the
  cells at its visible corners (atspi_table): filled cells come back read whole, and a
  summary of the rows and columns in view stands for the empty ones.
- A list, or a table narrow enough that its rows' cells follow one another, is bisected
  over GetChildAtIndex and extents (atspi_scroll); its rows in view are then read like any
  other node.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from roundhouse.devices.contract import Rect
from roundhouse.devices.linux.atspi.bus import AtspiBus, Ref
from roundhouse.devices.linux.atspi.cells import CellRefs
from roundhouse.devices.linux.atspi.constants import (
    GET_PROPERTY,
    TABLE,
)
from roundhouse.devices.linux.atspi.node import RawNode, TreeLimits
from roundhouse.devices.linux.atspi.props import child_count
from roundhouse.devices.linux.atspi.scroll import children_in_view
from roundhouse.devices.linux.atspi.table import read_table

# A table with more columns than this does not hold its rows in view one after another in
# child order (a spreadsheet row has 16384 cells): it is read by its corners instead.
LIST_COLUMNS = 64
NO_COUNT = 2**31 - 1  # what LibreOffice's table says its child count is (2^34 overflows)


@dataclass
class InView:
    nodes: list[RawNode] = field(default_factory=list)  # read whole (cells): not read again
    children: list[Ref] = field(default_factory=list)  # to read like any other node
    summary: str | None = None  # the container's text


async def read_in_view(
    bus: AtspiBus,
    node: RawNode,
    area: Rect,
    cells: CellRefs,
    limits: TreeLimits,
    rects: dict[Ref, Rect],
) -> InView:
    """What `node` shows; the rectangles read of its rows in view go into `rects`."""
    count = await child_count(bus, node.ref)  # the app's cache says -1 for these
    columns = await _columns(bus, node.ref) if TABLE in node.interfaces else 0
    listable = count is not None and 0 <= count < NO_COUNT
    if TABLE in node.interfaces and (not listable or columns > LIST_COLUMNS):
        table = await read_table(bus, node, area, cells, limits.max_cells, limits.text_limit)
        if table is not None:
            return InView(nodes=table.cells, summary=table.summary)
    if count is not None and listable and columns <= LIST_COLUMNS:
        rows = await children_in_view(bus, node.ref, count, area, rects)
        if rows is not None:
            return InView(children=rows)
        return InView(summary=f"{count} items; which of them are in view cannot be told")
    return InView(summary="its items cannot be read")


async def _columns(bus: AtspiBus, ref: Ref) -> int:
    reply = await bus.call_or_none(ref, GET_PROPERTY, [TABLE, "NColumns"])
    return int(reply[0].value) if reply else 0
