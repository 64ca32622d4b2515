"""A fake AT-SPI application behind a fake bus, for tests of the readers without a desktop.

It answers the calls the readers make, the way the toolkits measured on the desktop do:
a GTK-like app fills Cache.GetItems (and counts no children of a managed container: -1)
and implements Properties.GetAll; a Qt-like app does neither. A sheet is a LibreOffice-like
table: GetAccessibleAt and GetAccessibleAtPoint build a new cell object every time, which
lives until `expire()` (the bridge's lease), and GetChildren on it is recorded as a fault.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from dbus_fast.signature import Variant

from roundhouse.devices.linux.atspi.bus import (
    AtspiBus,
    AtspiError,
    AtspiTimeout,
    NodeGone,
    Ref,
    WindowGone,
)
from roundhouse.devices.linux.atspi.constants import (
    ACCESSIBLE,
    ACTION,
    APPLICATION,
    COMPONENT,
    GET_ACCESSIBLE_AT,
    GET_ACCESSIBLE_AT_POINT,
    GET_ACTIONS,
    GET_ALL_PROPERTIES,
    GET_CHILD_AT_INDEX,
    GET_CHILDREN,
    GET_EXTENTS,
    GET_INDEX_IN_PARENT,
    GET_INTERFACES,
    GET_LOCALIZED_ACTION_NAME,
    GET_PROPERTY,
    GET_ROLE,
    GET_ROLE_NAME,
    GET_ROW_COLUMN_EXTENTS_AT_INDEX,
    GET_STATE,
    GET_TEXT,
    NULL_PATH,
    ROLES,
    ROOT_PATH,
    STATES,
    TABLE,
    TEXT,
    VALUE,
    Method,
)

APP = ":1.42"
T = TypeVar("T")
SHOWN = ("enabled", "showing", "visible")


def state_words(names: Sequence[str]) -> list[int]:
    words = [0, 0]
    for name in names:
        number = STATES.index(name)
        words[number // 32] |= 1 << (number % 32)
    return words


@dataclass
class FakeObject:
    role: str
    name: str = ""
    states: tuple[str, ...] = SHOWN
    interfaces: tuple[str, ...] = (ACCESSIBLE, COMPONENT)
    children: list[str] = field(default_factory=list)  # object paths
    rect: tuple[int, int, int, int] = (0, 0, 0, 0)  # x, y, width, height
    text: str | None = None
    parent: str = ""
    child_count: int | None = None  # what ChildCount says; None: len(children)
    value: float = 0.0  # Value.CurrentValue, where it has the Value interface

    @property
    def count(self) -> int:
        return len(self.children) if self.child_count is None else self.child_count


@dataclass
class Sheet:
    """A LibreOffice-like table of 2^20 × 2^14 cells, scrolled to `first` (row, column)."""

    path: str
    rect: tuple[int, int, int, int]
    cells: dict[tuple[int, int], str]  # the filled cells' text
    first: tuple[int, int] = (0, 0)
    cell_size: tuple[int, int] = (80, 20)
    rows: int = 2**20
    columns: int = 2**14

    def cell_at(self, x: int, y: int) -> tuple[int, int] | None:
        left, top, width, height = self.rect
        if not (left <= x < left + width and top <= y < top + height):
            return None
        return (
            self.first[0] + (y - top) // self.cell_size[1],
            self.first[1] + (x - left) // self.cell_size[0],
        )

    def cell_rect(self, row: int, column: int) -> tuple[int, int, int, int]:
        left, top, width, height = self.rect
        x = left + (column - self.first[1]) * self.cell_size[0]
        y = top + (row - self.first[0]) * self.cell_size[1]
        # Clipped to the view, as LibreOffice reports it; off the view: (x0-1, y0-1, 0, 0).
        right = min(x + self.cell_size[0], left + width)
        bottom = min(y + self.cell_size[1], top + height)
        if x < left or y < top or right <= x or bottom <= y:
            return (left - 1, top - 1, 0, 0)
        return (x, y, right - x, bottom - y)


def cell_name(row: int, column: int) -> str:
    letters = ""
    column += 1
    while column:
        column, rest = divmod(column - 1, 26)
        letters = chr(ord("A") + rest) + letters
    return f"{letters}{row + 1}"


class FakeApp:
    def __init__(self, objects: dict[str, FakeObject], sheets: Sequence[Sheet] = ()) -> None:
        self.objects = objects
        self.sheets = {sheet.path: sheet for sheet in sheets}
        for path, node in objects.items():
            for child in node.children:
                objects[child].parent = path
        self._numbers = itertools.count(1000)
        self.cells_made = 0
        self.positions: dict[str, tuple[int, int]] = {}  # cell object -> (row, column)
        self.whole_text_works = True  # GetText(0, -1); False: answers "" as some apps do

    def ref(self, path: str) -> Ref:
        return (APP, path)

    def make_cell(self, sheet: Sheet, row: int, column: int) -> str:
        """A new object for the cell, as LibreOffice makes one per request."""
        path = f"/cell/{next(self._numbers)}"
        self.cells_made += 1
        self.objects[path] = FakeObject(
            role="table cell",
            name=cell_name(row, column),
            states=(*SHOWN, "focusable", "selectable", "transient"),
            interfaces=(ACCESSIBLE, COMPONENT, TEXT),
            rect=sheet.cell_rect(row, column),
            parent=sheet.path,
        )
        self.positions[path] = (row, column)
        return path

    def expire(self) -> None:
        """The bridge's lease ends: every cell object made so far is gone."""
        for path in [path for path in self.objects if path.startswith("/cell/")]:
            del self.objects[path]


class FakeBus(AtspiBus):
    """Answers from a FakeApp; `faults` lists the calls no reader may make."""

    def __init__(
        self,
        app: FakeApp,
        *,
        cache: bool = True,
        get_all: bool = True,
        uncached: frozenset[str] = frozenset(),
        toolkit: str = "gtk",
    ) -> None:
        self.app = app
        self.cache = cache
        self.toolkit = toolkit  # Application.ToolkitName (GTK 3's bridge says "gtk")
        self.uncached = uncached  # paths GetItems leaves out (they are walked)
        self.get_all = get_all
        self.timeout = 0.5
        self.calls = 0
        self.log: list[tuple[str, str]] = []  # (path, member)
        self.faults: list[str] = []
        self.stall_after: int | None = None  # answer nothing after this many calls
        self.direct = {}  # no application socket of its own: all calls come here
        self.window_coords = set()  # every fake application speaks the screen's coordinates

    @property
    def connected(self) -> bool:
        return True

    async def call(self, ref: Ref, method: Method, body: Sequence[Any] = ()) -> list[Any]:
        self.calls += 1
        member = method.member
        self.log.append((ref[1], member))
        if self.stall_after is not None and self.calls > self.stall_after:
            await asyncio.sleep(self.timeout)
            raise AtspiTimeout(f"{ref[0]} did not answer {member} within {self.timeout:g} s")
        await asyncio.sleep(0)  # a round trip: let the other calls in flight go
        if member == "GetItems":
            return [self._items()] if self.cache else [[]]
        if ref[1] == ROOT_PATH and method == GET_PROPERTY and body[0] == APPLICATION:
            return [Variant("s", self.toolkit if body[1] == "ToolkitName" else "1.0")]
        node = self.app.objects.get(ref[1])
        if node is None:
            raise NodeGone(f"{ref[1]} does not exist")
        handler = self._handlers().get(method)
        if handler is None:
            raise NodeGone(f"{ref[1]} has no {method.interface}.{member}")
        return handler(ref[1], node, list(body))

    async def call_or_none(
        self, ref: Ref, method: Method, body: Sequence[Any] = ()
    ) -> list[Any] | None:
        try:
            return await self.call(ref, method, body)
        except (WindowGone, AtspiTimeout):
            raise
        except AtspiError:
            return None

    async def ask(
        self, ref: Ref, method: Method, body: Sequence[Any], then: Callable[[list[Any]], T]
    ) -> T | None:
        reply = await self.call_or_none(ref, method, body)
        return None if reply is None else then(reply)

    async def interfaces(self, ref: Ref) -> frozenset[str] | None:
        reply = await self.call_or_none(ref, GET_INTERFACES)
        return None if reply is None else frozenset(reply[0])

    def _handlers(self) -> dict[Method, Callable[[str, FakeObject, list[Any]], list[Any]]]:
        return {
            GET_ROLE: lambda path, node, body: [ROLES.index(node.role)],
            GET_ROLE_NAME: lambda path, node, body: [node.role],
            GET_STATE: lambda path, node, body: [state_words(node.states)],
            GET_INTERFACES: lambda path, node, body: [list(node.interfaces)],
            GET_CHILDREN: self._children,
            GET_CHILD_AT_INDEX: lambda path, node, body: [self.app.ref(node.children[body[0]])],
            GET_INDEX_IN_PARENT: self._index,
            GET_PROPERTY: self._get,
            GET_ALL_PROPERTIES: self._get_all,
            GET_EXTENTS: self._extents,
            GET_ACCESSIBLE_AT_POINT: self._at_point,
            GET_ACCESSIBLE_AT: self._accessible_at,
            GET_ROW_COLUMN_EXTENTS_AT_INDEX: self._row_column,
            GET_TEXT: self._text,
            GET_ACTIONS: lambda path, node, body: [[("click", "", "")]],
            GET_LOCALIZED_ACTION_NAME: lambda path, node, body: ["click"],
        }

    def _children(self, path: str, node: FakeObject, body: list[Any]) -> list[Any]:
        if path in self.app.sheets or "manages-descendants" in node.states:
            self.faults.append(f"GetChildren on {path}")
        return [[self.app.ref(child) for child in node.children]]

    def _index(self, path: str, node: FakeObject, body: list[Any]) -> list[Any]:
        sheet = self.app.sheets.get(node.parent)
        if sheet is not None:
            row, column = self.app.positions[path]
            index = row * sheet.columns + column
            return [index if index < 2**31 else -1]
        parent = self.app.objects.get(node.parent)
        return [parent.children.index(path) if parent else -1]

    def _get(self, path: str, node: FakeObject, body: list[Any]) -> list[Any]:
        interface, name = body
        sheet = self.app.sheets.get(path)
        values: dict[tuple[str, str], Variant] = {
            (ACCESSIBLE, "Name"): Variant("s", node.name),
            (ACCESSIBLE, "Description"): Variant("s", ""),
            (ACCESSIBLE, "ChildCount"): Variant("i", min(node.count, 2**31 - 1)),
        }
        if ACTION in node.interfaces:
            values[ACTION, "NActions"] = Variant("i", 1)
        if TEXT in node.interfaces:
            values[TEXT, "CharacterCount"] = Variant("i", len(self._live_text(path, node)))
        if VALUE in node.interfaces:
            values[VALUE, "CurrentValue"] = Variant("d", node.value)
        if sheet is not None:
            values[TABLE, "NRows"] = Variant("i", sheet.rows)
            values[TABLE, "NColumns"] = Variant("i", sheet.columns)
        if (interface, name) not in values:
            raise NodeGone(f"{path} has no property {interface}.{name}")
        return [values[interface, name]]

    def _get_all(self, path: str, node: FakeObject, body: list[Any]) -> list[Any]:
        if not self.get_all or body[0] != ACCESSIBLE:
            raise NodeGone("GetAll is not implemented")  # as Qt answers
        names = ("Name", "Description", "ChildCount")
        return [{name: self._get(path, node, [ACCESSIBLE, name])[0] for name in names}]

    def _at_point(self, path: str, node: FakeObject, body: list[Any]) -> list[Any]:
        sheet = self.app.sheets.get(path)
        if sheet is None:
            return [self._child_at(node, body[0], body[1])]
        cell = sheet.cell_at(body[0], body[1])
        if cell is None:
            return [(APP, NULL_PATH)]
        return [self.app.ref(self.app.make_cell(sheet, *cell))]

    def _child_at(self, node: FakeObject, x: int, y: int) -> Ref:
        """The child whose rectangle holds the point, as GTK's tree view answers."""
        for child in node.children:
            left, top, width, height = self.app.objects[child].rect
            if left <= x < left + width and top <= y < top + height:
                return self.app.ref(child)
        return (APP, NULL_PATH)

    def _accessible_at(self, path: str, node: FakeObject, body: list[Any]) -> list[Any]:
        sheet = self.app.sheets[path]
        return [self.app.ref(self.app.make_cell(sheet, body[0], body[1]))]

    def _row_column(self, path: str, node: FakeObject, body: list[Any]) -> list[Any]:
        sheet = self.app.sheets[path]
        row, column = divmod(body[0], sheet.columns)
        return [True, row, column, 1, 1, False]

    def _extents(self, path: str, node: FakeObject, body: list[Any]) -> list[Any]:
        """A cell lies where its sheet is scrolled to now; other objects where they are."""
        position = self.app.positions.get(path)
        if position is not None:
            return [self.app.sheets[node.parent].cell_rect(*position)]
        return [node.rect]

    def _live_text(self, path: str, node: FakeObject) -> str:
        """A cell shows what its sheet holds now; other objects their own text."""
        position = self.app.positions.get(path)
        if position is not None:
            return self.app.sheets[node.parent].cells.get(position, "")
        return node.text or ""

    def _text(self, path: str, node: FakeObject, body: list[Any]) -> list[Any]:
        text = self._live_text(path, node)
        start, end = body
        if end == -1:
            return [text if self.app.whole_text_works else ""]
        return [text[start:end] if end <= len(text) else ""]  # LibreOffice: "" past the end

    def _items(self) -> list[Any]:
        items = []
        for path, node in self.app.objects.items():
            if path.startswith("/cell/") or path in self.uncached:
                continue  # the bridge does not cache leased objects
            parent = self.app.objects.get(node.parent)
            managed = "manages-descendants" in node.states
            items.append(
                [
                    self.app.ref(path),
                    self.app.ref("/root"),
                    self.app.ref(node.parent or NULL_PATH),
                    parent.children.index(path) if parent else -1,
                    -1 if managed else node.count,
                    list(node.interfaces),
                    node.name,
                    ROLES.index(node.role),
                    "",
                    state_words(node.states),
                ]
            )
        return items
