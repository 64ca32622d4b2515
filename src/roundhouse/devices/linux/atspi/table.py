"""The part of a huge table that is in view, read through its Table interface.

A spreadsheet's table has 2^20 × 2^14 cells and builds a cell object for each one asked for.
What a person sees is read instead:

1. the cells at the view's top-left and bottom-right corners: those found last time while
   their extents still hold the corner points, else Component.GetAccessibleAtPoint
   (stepping inwards off headers and scroll bars), and their row and column;
2. the cells between them (Table.GetAccessibleAt, or references kept from the last read:
   atspi_cells), capped at `max_cells`, and each one's text, pipelined;
3. rectangles from the first row's and first column's extents, not from every cell.

Filled cells become nodes ("B3", text "42"); empty ones are not listed, the table's summary
says which rows and columns are in view.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Iterator
from dataclasses import dataclass, replace

from roundhouse.devices.contract import Rect
from roundhouse.devices.linux.atspi.bus import AtspiBus, Ref, answered
from roundhouse.devices.linux.atspi.cells import (
    Cell,
    CellRef,
    CellRefs,
    Corners,
    Point,
    Sample,
    TableCells,
)
from roundhouse.devices.linux.atspi.constants import (
    ACCESSIBLE,
    GET_ACCESSIBLE_AT,
    GET_ACCESSIBLE_AT_POINT,
    GET_CELL_POSITION,
    GET_INDEX_IN_PARENT,
    GET_PROPERTY,
    GET_ROLE,
    GET_ROW_COLUMN_EXTENTS_AT_INDEX,
    GET_STATE,
    GET_TEXT,
    NULL_PATH,
    TABLE,
    TEXT,
    role_name,
    state_names,
)
from roundhouse.devices.linux.atspi.layout import intersection
from roundhouse.devices.linux.atspi.node import RawNode
from roundhouse.devices.linux.atspi.props import coord_type, extents

# Pixels from the view's edge where a corner cell is looked for: the first tries the corner
# itself, the next step off a header row or a scroll bar that lies inside the table.
INWARD_STEPS = (1, 4, 12, 30)
# States one cell has that the others do not share (the sample cell may have the focus).
OWN_STATES = frozenset(
    {"focused", "selected", "active", "checked", "pressed", "armed", "expanded", "collapsed"}
)


@dataclass(frozen=True)
class CellRange:
    """Rows and columns, 0-based, both ends included."""

    first_row: int
    last_row: int
    first_column: int
    last_column: int

    @property
    def rows(self) -> range:
        return range(self.first_row, self.last_row + 1)

    @property
    def columns(self) -> range:
        return range(self.first_column, self.last_column + 1)

    def cells(self) -> Iterator[Cell]:
        """Row by row, left to right."""
        return ((row, column) for row in self.rows for column in self.columns)

    def cut(self, max_cells: int) -> CellRange:
        """The top-left part with at most `max_cells` cells: whole rows where possible."""
        columns = min(len(self.columns), max(max_cells, 1))
        rows = min(len(self.rows), max(max_cells // columns, 1))
        return CellRange(
            self.first_row,
            self.first_row + rows - 1,
            self.first_column,
            self.first_column + columns - 1,
        )


def cell_range(top_left: Cell, bottom_right: Cell) -> CellRange:
    (row1, column1), (row2, column2) = top_left, bottom_right
    return CellRange(min(row1, row2), max(row1, row2), min(column1, column2), max(column1, column2))


def summary(view: CellRange, read: CellRange, rows: int, columns: int) -> str:
    """What the table control says about itself, 1-based like a person counts."""
    text = (
        f"rows {view.first_row + 1}-{view.last_row + 1}, "
        f"columns {view.first_column + 1}-{view.last_column + 1} "
        f"of {rows} × {columns} in view; empty cells are not listed"
    )
    if read != view:
        text += (
            f"; only rows {read.first_row + 1}-{read.last_row + 1}, "
            f"columns {read.first_column + 1}-{read.last_column + 1} were read"
        )
    return text


def cell_rects(
    rows: dict[int, Rect | None], columns: dict[int, Rect | None], view: Rect
) -> dict[Cell, Rect]:
    """Each cell's rectangle from its row's top and bottom (the first column's cells) and its
    column's left and right (the first row's cells), within the view."""
    rects = {}
    for row, row_rect in rows.items():
        for column, column_rect in columns.items():
            if row_rect is None or column_rect is None:
                continue
            rect = intersection(
                Rect(
                    left=column_rect.left,
                    top=row_rect.top,
                    right=column_rect.right,
                    bottom=row_rect.bottom,
                ),
                view,
            )
            if rect.width > 0 and rect.height > 0:
                rects[row, column] = rect
    return rects


def parse_cell_name(name: str) -> Cell | None:
    """ "B3" -> (2, 1): spreadsheets name cells by column letters and row number."""
    letters = name.rstrip("0123456789")
    digits = name[len(letters) :]
    if not letters or not digits or not letters.isascii() or not letters.isupper():
        return None
    column = 0
    for letter in letters:
        column = column * 26 + ord(letter) - ord("A") + 1
    return int(digits) - 1, column - 1


def corner_points(view: Rect) -> tuple[list[Point], list[Point]]:
    """Points to look for the top-left and the bottom-right cell at, corner first."""
    steps = [step for step in INWARD_STEPS if 2 * step < min(view.width, view.height)]
    top_left = [(view.left + step, view.top + step) for step in steps]
    bottom_right = [(view.right - 1 - step, view.bottom - 1 - step) for step in steps]
    return top_left, bottom_right


@dataclass
class TableView:
    cells: list[RawNode]  # the filled cells in view, row by row
    summary: str


async def read_table(
    bus: AtspiBus,
    table: RawNode,
    area: Rect,
    refs: CellRefs,
    max_cells: int,
    text_limit: int,
) -> TableView | None:
    """The filled cells of `table` in view within `area`; None when the table cannot be read
    this way (no cell found at its corners)."""
    rect, rows, columns = await asyncio.gather(
        extents(bus, table.ref),
        _table_property(bus, table.ref, "NRows"),
        _table_property(bus, table.ref, "NColumns"),
    )
    if rect is None or rows <= 0 or columns <= 0:
        return None
    view = intersection(rect, area)
    if view.width <= 0 or view.height <= 0:
        return TableView([], f"none of its {rows} × {columns} cells is in view")
    entry = refs.table(table.ref, time.monotonic())
    kept, _ = await asyncio.gather(_kept_corners(bus, entry, view), _check_kept(bus, entry))
    corners = kept or await _find_corners(bus, table.ref, view, rows, columns)
    if corners is None:
        return None
    entry.corners = corners
    in_view = cell_range(corners.first, corners.last)
    read = in_view.cut(max_cells)
    entry.keep_only(set(read.cells()))
    cells = await _read_cells(bus, table.ref, entry, read, text_limit)
    rows_at = {
        row: cells[row, read.first_column].rect
        for row in read.rows
        if (row, read.first_column) in cells
    }
    columns_at = {
        column: cells[read.first_row, column].rect
        for column in read.columns
        if (read.first_row, column) in cells
    }
    rects = cell_rects(rows_at, columns_at, view)
    nodes = [
        _cell_node(done.kept, done.text, rects[cell], corners.sample)
        for cell, done in cells.items()
        if done.text and cell in rects
    ]
    return TableView(nodes, summary(in_view, read, rows, columns))


async def _table_property(bus: AtspiBus, table: Ref, name: str) -> int:
    reply = await bus.call_or_none(table, GET_PROPERTY, [TABLE, name])
    return int(reply[0].value) if reply else 0


async def _kept_corners(bus: AtspiBus, entry: TableCells, view: Rect) -> Corners | None:
    """The corners found last time, if the same view still has the same cells at them: no
    new object is asked for (each GetAccessibleAtPoint makes one in LibreOffice)."""
    last = entry.corners
    if last is None or last.view != view:
        return None
    first, final = entry.get(last.first), entry.get(last.last)
    if first is None or final is None:
        return None
    first_rect, last_rect, states = await asyncio.gather(
        extents(bus, first.ref),
        extents(bus, final.ref),
        bus.call_or_none(first.ref, GET_STATE),
    )
    if first_rect is None or last_rect is None or states is None:
        return None
    if not (_holds(first_rect, last.first_point) and _holds(last_rect, last.last_point)):
        return None  # scrolled, or rows and columns resized
    shared = [state for state in state_names(states[0]) if state not in OWN_STATES]
    return replace(last, sample=replace(last.sample, states=shared))


def _holds(rect: Rect, point: Point) -> bool:
    return rect.left <= point[0] < rect.right and rect.top <= point[1] < rect.bottom


async def _find_corners(
    bus: AtspiBus, table: Ref, view: Rect, rows: int, columns: int
) -> Corners | None:
    first_points, last_points = corner_points(view)
    first, last = await asyncio.gather(
        _corner(bus, table, first_points, rows, columns, sample=True),
        _corner(bus, table, last_points, rows, columns, sample=False),
    )
    if first is None or last is None or first[2] is None:
        return None
    return Corners(view, first[0], last[0], first[1], last[1], first[2])


async def _corner(
    bus: AtspiBus,
    table: Ref,
    points: list[Point],
    rows: int,
    columns: int,
    *,
    sample: bool,
) -> tuple[Cell, Point, Sample | None] | None:
    """The cell at the first of `points` that holds one, the point, and (with `sample`) how
    the cell reads."""
    for x, y in points:
        reply = await bus.call_or_none(
            table, GET_ACCESSIBLE_AT_POINT, [x, y, coord_type(bus, table)]
        )
        ref = _ref(reply[0]) if reply else None
        if ref is None:
            continue
        cell, read = await asyncio.gather(_position(bus, table, ref), _sample(bus, ref, sample))
        if cell is not None and 0 <= cell[0] < rows and 0 <= cell[1] < columns:
            return cell, (x, y), read
    return None


async def _position(bus: AtspiBus, table: Ref, ref: Ref) -> Cell | None:
    """A cell's row and column: TableCell where the toolkit has it, else its index in the
    table, else its name ("B3")."""
    position, index, name = await asyncio.gather(
        bus.call_or_none(ref, GET_CELL_POSITION),
        bus.call_or_none(ref, GET_INDEX_IN_PARENT),
        bus.call_or_none(ref, GET_PROPERTY, [ACCESSIBLE, "Name"]),
    )
    if position:
        row, column = position[0]
        return int(row), int(column)
    if index and index[0] >= 0:
        # LibreOffice counts cells in an int32: past row 131072 the index overflows.
        extents = await bus.call_or_none(table, GET_ROW_COLUMN_EXTENTS_AT_INDEX, index)
        if extents and extents[0]:
            return int(extents[1]), int(extents[2])
    return parse_cell_name(str(name[0].value)) if name else None


async def _sample(bus: AtspiBus, ref: Ref, wanted: bool) -> Sample | None:
    if not wanted:
        return None
    role, states, interfaces = await asyncio.gather(
        bus.call_or_none(ref, GET_ROLE),
        bus.call_or_none(ref, GET_STATE),
        bus.interfaces(ref),
    )
    if role is None or states is None or interfaces is None:
        return None
    shared = [state for state in state_names(states[0]) if state not in OWN_STATES]
    return Sample(role_name(role[0]), shared, interfaces)


async def _check_kept(bus: AtspiBus, entry: TableCells) -> None:
    """One kept reference must still be the cell it was: else none of them is trusted."""
    kept = entry.sample()
    if kept is None:
        return
    reply = await bus.call_or_none(kept[1].ref, GET_PROPERTY, [ACCESSIBLE, "Name"])
    if reply is None or reply[0].value != kept[1].name:
        entry.cells.clear()


@dataclass(frozen=True)
class CellRead:
    kept: CellRef
    text: str
    rect: Rect | None  # read for the first row and the first column only


async def _read_cells(
    bus: AtspiBus, table: Ref, entry: TableCells, read: CellRange, text_limit: int
) -> dict[Cell, CellRead]:
    """Each cell's reference and text, and the extents of the first row's and first column's
    cells, pipelined; a kept reference that no longer answers is replaced. The kept cells
    are asked all at once as futures (a coroutine a cell cost ~1,000 tasks a read); only
    cells not kept, or gone, take the longer way."""

    def edge(cell: Cell) -> bool:
        return cell[0] == read.first_row or cell[1] == read.first_column

    async def details(cell: Cell, kept: CellRef) -> CellRead | None:
        text, rect = await asyncio.gather(
            _cell_text(bus, entry, kept.ref, text_limit),
            extents(bus, kept.ref) if edge(cell) else answered(None),
        )
        return CellRead(kept, text, rect) if text is not None else None

    async def fresh(cell: Cell) -> tuple[Cell, CellRead] | None:
        made = await _fetch_cell(bus, table, entry, cell)
        if made is None:
            return None
        done = await details(cell, made)
        return cell, done or CellRead(made, "", None)

    kept = [(cell, ref) for cell in read.cells() if (ref := entry.get(cell)) is not None]
    texts, rects = await asyncio.gather(
        asyncio.gather(*(_cell_text(bus, entry, ref.ref, text_limit) for _, ref in kept)),
        asyncio.gather(
            *(extents(bus, ref.ref) if edge(cell) else answered(None) for cell, ref in kept)
        ),
    )
    found: dict[Cell, CellRead] = {}
    for (cell, ref), text, rect in zip(kept, texts, rects, strict=True):
        if text is None:
            entry.drop(cell)  # gone (its lease ended, or the sheet changed): ask again
        else:
            found[cell] = CellRead(ref, text, rect)
    missing = [cell for cell in read.cells() if cell not in found]
    for done in await asyncio.gather(*(fresh(cell) for cell in missing)):
        if done is not None:
            found[done[0]] = done[1]
    return {cell: found[cell] for cell in read.cells() if cell in found}  # row by row


async def _fetch_cell(bus: AtspiBus, table: Ref, entry: TableCells, cell: Cell) -> CellRef | None:
    reply = await bus.call_or_none(table, GET_ACCESSIBLE_AT, list(cell))
    ref = _ref(reply[0]) if reply else None
    if ref is None:
        return None
    name = await bus.call_or_none(ref, GET_PROPERTY, [ACCESSIBLE, "Name"])
    if name is None:
        return None
    return entry.put(cell, ref, str(name[0].value), time.monotonic())


def _cell_text(bus: AtspiBus, entry: TableCells, ref: Ref, limit: int) -> Awaitable[str | None]:
    """The cell's text; None when the reference does not answer. One call a cell once this
    table has shown that GetText(0, -1) gives the whole text (LibreOffice does; its answer
    to an end offset past the end is ""); until then, and where it does not, the cell's
    CharacterCount first, so that a sheet of empty cells still costs one call a cell."""
    if entry.whole_text:
        return bus.ask(ref, GET_TEXT, [0, -1], lambda body: str(body[0])[:limit])
    return _cell_text_counted(bus, entry, ref, limit)


async def _cell_text_counted(bus: AtspiBus, entry: TableCells, ref: Ref, limit: int) -> str | None:
    count = await bus.call_or_none(ref, GET_PROPERTY, [TEXT, "CharacterCount"])
    if count is None:
        return None
    length = int(count[0].value)
    if length <= 0:
        return ""
    if entry.whole_text is None:
        reply = await bus.call_or_none(ref, GET_TEXT, [0, -1])
        if reply and str(reply[0]):
            entry.whole_text = True
            return str(reply[0])[:limit]
        entry.whole_text = False
    reply = await bus.call_or_none(ref, GET_TEXT, [0, min(length, limit)])
    return str(reply[0]) if reply else ""


def _cell_node(kept: CellRef, text: str, rect: Rect, sample: Sample) -> RawNode:
    return RawNode(
        ref=kept.ref,
        role=sample.role,
        name=kept.name,
        description="",
        states=list(sample.states),
        interfaces=sample.interfaces,
        child_count=0,
        children=[],
        rect=rect,
        text=text,
        details_read=True,
    )


def _ref(value: list[str] | tuple[str, str]) -> Ref | None:
    ref = (str(value[0]), str(value[1]))
    return ref if ref[0] and ref[1] != NULL_PATH else None
