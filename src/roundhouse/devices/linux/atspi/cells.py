"""Cell references kept between reads, so that reading a sheet again does not make the
application build its cells again (pure bookkeeping; the time is passed in).

LibreOffice 7.4 makes a new accessible object for every Table.GetAccessibleAt and
GetAccessibleAtPoint, and its memory is not given back: reading the ~500 cells in view on
every observation grew soffice by ~4 MB a read. The AT-SPI bridge ends each object 16 s
after handing it out (its "lease"); until then the kept reference is used. One kept cell is
checked at the start of a read and the rest are dropped if it no longer answers; a cell
that stops answering mid-read is asked for again. The corner cells found last time are
checked by their extents before any new one is asked for at the view's corners. One
CellRefs belongs to one bus connection: object paths mean nothing on another.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from roundhouse.devices.contract import Rect
from roundhouse.devices.linux.atspi.bus import Ref

# Seconds a kept reference is trusted at most. The bridge ends LibreOffice's cells sooner
# (16 s) and the check finds that; this bounds trust where nothing ends them.
MAX_AGE = 60.0
MAX_TABLES = 4

Cell = tuple[int, int]  # (row, column), 0-based
Point = tuple[int, int]


@dataclass(frozen=True)
class Sample:
    """A cell read whole, whose role, states and interfaces the other cells are given."""

    role: str
    states: list[str]
    interfaces: frozenset[str]


@dataclass(frozen=True)
class Corners:
    """The cells found at a view's corners, and where they were looked for."""

    view: Rect
    first: Cell
    last: Cell
    first_point: Point
    last_point: Point
    sample: Sample


@dataclass(frozen=True)
class CellRef:
    ref: Ref
    name: str
    taken: float  # time.monotonic() when the application handed it out


@dataclass
class TableCells:
    """The cells of one table that were read last, and what was learned about it."""

    cells: dict[Cell, CellRef] = field(default_factory=dict)
    # Whether GetText(0, -1) gives a cell's whole text (None: not seen yet). Until a filled
    # cell has shown it, each cell's CharacterCount is asked first.
    whole_text: bool | None = None
    corners: Corners | None = None  # found by the last read
    used: float = 0.0

    def get(self, cell: Cell) -> CellRef | None:
        return self.cells.get(cell)

    def put(self, cell: Cell, ref: Ref, name: str, now: float) -> CellRef:
        # Oldest first: the cell `sample` checks is the one whose lease ends first.
        self.cells.pop(cell, None)
        self.cells[cell] = kept = CellRef(ref, name, now)
        return kept

    def drop(self, cell: Cell) -> None:
        self.cells.pop(cell, None)

    def keep_only(self, cells: set[Cell]) -> None:
        """Forget cells no longer in view: the cache never holds more than one view."""
        for cell in [cell for cell in self.cells if cell not in cells]:
            del self.cells[cell]

    def sample(self) -> tuple[Cell, CellRef] | None:
        """The oldest kept cell, to check that the kept references still answer."""
        return next(iter(self.cells.items()), None)


class CellRefs:
    def __init__(self, max_age: float = MAX_AGE, max_tables: int = MAX_TABLES) -> None:
        self.max_age = max_age
        self.max_tables = max_tables
        self._tables: dict[Ref, TableCells] = {}

    def table(self, ref: Ref, now: float) -> TableCells:
        """The kept cells of a table, without those too old to trust."""
        entry = self._tables.pop(ref, None) or TableCells()
        self._tables[ref] = entry  # the most recently used last
        entry.used = now
        for cell in [cell for cell, kept in entry.cells.items() if now - kept.taken > self.max_age]:
            del entry.cells[cell]
        while len(self._tables) > self.max_tables:
            del self._tables[next(iter(self._tables))]
        return entry

    def __len__(self) -> int:
        return sum(len(entry.cells) for entry in self._tables.values())
