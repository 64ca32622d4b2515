"""Managed containers against a fake application (tests/fake_atspi.py): never listed on any
path, read where in view, cells kept between reads, a stalled app ends the read. And the
pure pieces of the table reader."""

from __future__ import annotations

import asyncio
import gc
import time
from collections.abc import Sequence
from typing import Any

import pytest

from roundhouse.bench.naive import naive_tree
from roundhouse.devices.contract import Rect
from roundhouse.devices.linux.atspi import frames as atspi_frames
from roundhouse.devices.linux.atspi.bus import AtspiTimeout, Ref
from roundhouse.devices.linux.atspi.cells import CellRefs
from roundhouse.devices.linux.atspi.constants import (
    ACCESSIBLE,
    ACTION,
    COMPONENT,
    TABLE,
    VALUE,
    Method,
)
from roundhouse.devices.linux.atspi.fetch import fetch_node, load_cache, read_details
from roundhouse.devices.linux.atspi.frames import BIG_CACHE, FrameFinder
from roundhouse.devices.linux.atspi.node import RawNode, TreeLimits
from roundhouse.devices.linux.atspi.read import Structure, read_structure
from roundhouse.devices.linux.atspi.table import (
    CellRange,
    cell_rects,
    corner_points,
    parse_cell_name,
    summary,
)
from roundhouse.devices.linux.atspi.tree import build_tree, walk
from tests.fake_atspi import APP, SHOWN, FakeApp, FakeBus, FakeObject, Sheet

SCREEN = Rect(left=0, top=0, right=1000, bottom=700)
FILLED = {(0, 0): "101", (0, 1): "x", (5, 3): "hello", (30, 0): "below the view"}
LIST_TOP, ROW = 100, 20  # the list's view starts at y=100; rows are 20 px; row 30 at the top


def calc_like() -> FakeApp:
    """A window with a button, a sheet (20 rows × 10 columns in view) and a long list
    scrolled to row 31, both managing their descendants."""
    rows = {
        f"/row/{index}": FakeObject(
            role="list item",
            name=f"Row {index + 1}",
            interfaces=(ACCESSIBLE, COMPONENT, ACTION),
            rect=(850, LIST_TOP + (index - 30) * ROW, 150, ROW),
        )
        for index in range(100)
    }
    objects = {
        "/root": FakeObject(role="frame", name="sheet.ods", children=["/bar", "/doc", "/list"]),
        "/bar": FakeObject(role="tool bar", children=["/button"], rect=(0, 0, 1000, 40)),
        "/button": FakeObject(
            role="push button",
            name="Save",
            interfaces=(ACCESSIBLE, COMPONENT, ACTION),
            rect=(4, 4, 30, 30),
        ),
        "/doc": FakeObject(role="document spreadsheet", children=["/sheet"]),
        "/sheet": FakeObject(
            role="table",
            name="Sheet Sheet1",
            states=(*SHOWN, "focusable", "manages-descendants"),
            interfaces=(ACCESSIBLE, COMPONENT, TABLE),
            rect=(40, 100, 800, 400),
            child_count=2**34,
        ),
        "/list": FakeObject(
            role="list",
            name="Rows",
            states=(*SHOWN, "focusable", "manages-descendants"),
            interfaces=(ACCESSIBLE, COMPONENT, TABLE),
            children=list(rows),
            rect=(850, LIST_TOP, 150, 10 * ROW),
        ),
        **rows,
    }
    return FakeApp(objects, [Sheet("/sheet", (40, 100, 800, 400), dict(FILLED))])


async def read(bus: FakeBus, cells: CellRefs | None = None, **options: object) -> Structure:
    cache = await load_cache(bus, APP)
    root = cache.get((APP, "/root")) or await fetch_node(bus, (APP, "/root"))
    assert root is not None
    return await read_structure(
        bus,
        root,
        cache,
        TreeLimits(),
        lambda node: True,
        time.monotonic() + 5,
        area=SCREEN,
        cells=cells if cells is not None else CellRefs(),
        **options,  # type: ignore[arg-type]
    )


def cells_of(structure: Structure) -> dict[str, tuple[str | None, Rect | None]]:
    return {
        node.name: (node.text, node.rect)
        for node in structure.nodes.values()
        if node.role == "table cell"
    }


def names(structure: Structure) -> set[str]:
    return {node.name for node in structure.nodes.values()}


@pytest.mark.parametrize(
    "bus_options",
    [
        pytest.param({}, id="GTK: the cache"),
        pytest.param({"uncached": frozenset({"/doc", "/sheet", "/list"})}, id="GTK: GetAll walk"),
        pytest.param({"cache": False, "get_all": False}, id="Qt: no cache, no GetAll"),
    ],
)
async def test_managed_containers_are_never_listed_only_read_in_view(
    bus_options: dict[str, object],
) -> None:
    bus = FakeBus(calc_like(), **bus_options)  # type: ignore[arg-type]
    structure = await read(bus)
    assert bus.faults == []
    assert structure.truncated_reason is None
    assert cells_of(structure) == {
        "A1": ("101", Rect(left=40, top=100, right=120, bottom=120)),
        "B1": ("x", Rect(left=120, top=100, right=200, bottom=120)),
        "D6": ("hello", Rect(left=280, top=200, right=360, bottom=220)),
    }
    sheet = structure.nodes[APP, "/sheet"]
    assert sheet.managed and sheet.summary == (
        "rows 1-20, columns 1-10 of 1048576 × 16384 in view; empty cells are not listed"
    )
    # The list's rows in view only: rows 31-40 of 100.
    rows = [structure.nodes[ref].name for ref in structure.nodes[APP, "/list"].children or []]
    assert rows == [f"Row {number}" for number in range(31, 41)]
    assert "Row 30" not in names(structure) and "Save" in names(structure)
    tree = build_tree(structure.nodes, (APP, "/root"))
    table = next(node for node in walk(tree) if node.role == "table")
    assert table.text == sheet.summary and [cell.name for cell in table.children] == [
        "A1",
        "B1",
        "D6",
    ]


async def test_a_short_managed_list_is_read_whole_one_child_at_a_time() -> None:
    # GTK's file dialog sidebar: a list box that manages its descendants, with a separator
    # row that has no extents (bisecting it could not tell what is in view).
    rows = {
        "/row/0": FakeObject(role="list item", name="Home", rect=(0, 40, 150, 30)),
        "/row/1": FakeObject(role="separator", rect=(-(2**31), -(2**31), 1, 1)),
        "/row/2": FakeObject(role="list item", name="Trash", rect=(0, 80, 150, 30)),
    }
    sidebar = FakeObject(
        role="list box",
        states=(*SHOWN, "manages-descendants"),
        children=list(rows),
        rect=(0, 40, 150, 400),
    )
    frame = FakeObject(role="frame", name="Open", children=["/sidebar"], rect=(0, 0, 800, 600))
    bus = FakeBus(FakeApp({"/root": frame, "/sidebar": sidebar, **rows}))
    structure = await read(bus)
    assert bus.faults == [] and ("/sidebar", "GetChildren") not in bus.log
    assert {"Home", "Trash"} <= names(structure)


async def test_a_long_managed_list_with_header_and_hidden_cells_shows_its_rows_in_view() -> None:
    # A GTK tree view: header cells first (a hidden column's has no extents), then the rows'
    # cells, the hidden column's among them; scrolled so that rows 101-110 are in view.
    offscreen = (-(2**31), -(2**31), 1, 1)
    children = {
        "/head/0": FakeObject(role="table column header", name="Name", rect=(0, 100, 300, 20)),
        "/head/1": FakeObject(role="table column header", name="Hidden", rect=offscreen),
    }
    for row in range(200):
        top = 120 + (row - 100) * 20 if row >= 100 else -20  # scrolled away: above the view
        children[f"/name/{row}"] = FakeObject(
            role="table cell", name=f"file{row + 1}", rect=(0, top, 300, 20)
        )
        children[f"/hidden/{row}"] = FakeObject(role="table cell", rect=offscreen)
    files = FakeObject(
        role="tree table",
        states=(*SHOWN, "manages-descendants"),
        children=list(children),
        rect=(0, 100, 300, 220),  # the header and ten rows
    )
    frame = FakeObject(role="frame", children=["/files"], rect=(0, 0, 800, 600))
    bus = FakeBus(FakeApp({"/root": frame, "/files": files, **children}))
    structure = await read(bus)
    shown = [structure.nodes[ref].name for ref in structure.nodes[APP, "/files"].children or []]
    assert shown == ["Name", *(f"file{row}" for row in range(101, 111))]
    assert bus.faults == [] and len(bus.log) < 200  # not one read per row
    # The rows' rectangles were read to find them in view: the details do not ask again.
    in_view = [structure.nodes[ref] for ref in structure.nodes[APP, "/files"].children or []]
    bus.log.clear()
    assert await read_details(bus, in_view, TreeLimits(), time.monotonic() + 5) is None
    assert not [call for call in bus.log if call[1] == "GetExtents"]
    assert [node.rect for node in in_view][1:3] == [
        Rect(left=0, top=120, right=300, bottom=140),
        Rect(left=0, top=140, right=300, bottom=160),
    ]


async def test_a_scrolled_list_whose_rows_out_of_view_have_no_extents_shows_its_rows() -> None:
    # GTK's tree view (a file manager's details view) scrolled to its end: the cells of rows
    # out of view, above it as below, have no extents, so bisecting on them tells nothing;
    # the child at the middle of the view does.
    offscreen = (-(2**31), -(2**31), 1, 1)
    children = {
        "/head": FakeObject(role="table column header", name="Name", rect=(0, 100, 300, 20))
    }
    for row in range(500):
        top = 120 + (row - 490) * 20
        in_view = row >= 490
        children[f"/row/{row}"] = FakeObject(
            role="table cell",
            name=f"file{row + 1}",
            rect=(0, top, 300, 20) if in_view else offscreen,
        )
    files = FakeObject(
        role="tree table",
        states=(*SHOWN, "manages-descendants"),
        children=list(children),
        rect=(0, 100, 300, 220),  # the header and ten rows
    )
    frame = FakeObject(role="frame", children=["/files"], rect=(0, 0, 800, 600))
    bus = FakeBus(FakeApp({"/root": frame, "/files": files, **children}))
    structure = await read(bus)
    shown = [structure.nodes[ref].name for ref in structure.nodes[APP, "/files"].children or []]
    assert shown == ["Name", *(f"file{row}" for row in range(491, 501))]
    assert bus.faults == [] and len(bus.log) < 200  # not one read per row


async def test_a_tall_list_is_read_only_where_it_lies_in_the_window() -> None:
    # A web page's table reports its whole height, far below the window: the rows below
    # the window are not in view, however tall the table says it is.
    rows = {
        f"/row/{index}": FakeObject(
            role="table row", name=f"Row {index + 1}", rect=(0, 100 + index * 20, 300, 20)
        )
        for index in range(1000)
    }
    table = FakeObject(role="table", children=list(rows), rect=(0, 100, 300, 20 * 1000))
    frame = FakeObject(role="frame", children=["/table"], rect=(0, 0, 1000, 700))
    bus = FakeBus(FakeApp({"/root": frame, "/table": table, **rows}), cache=False)
    structure = await read(bus, in_view_only=True)
    shown = [structure.nodes[ref].name for ref in structure.nodes[APP, "/table"].children or []]
    assert shown == [f"Row {index}" for index in range(1, 31)]  # y 100-700: the window
    assert len(bus.log) < 400  # not one read per row


async def test_the_naive_walk_lists_no_managed_container_either() -> None:
    bus = FakeBus(calc_like(), cache=False, get_all=False)
    tree = await naive_tree(bus, (APP, "/root"))
    assert bus.faults == []
    assert tree is not None
    found = {node.name: node for node in walk(tree)}
    assert found["Sheet Sheet1"].children == [] and found["Rows"].children == []
    assert "Save" in found


async def test_cell_references_are_kept_between_reads_and_replaced_when_gone() -> None:
    app = calc_like()
    bus = FakeBus(app)
    kept = CellRefs()
    first = await read(bus, kept)
    made = app.cells_made
    assert made == 200 + 2  # the cells in view, and the two corners
    second = await read(bus, kept)
    assert app.cells_made == made  # the corner cells kept still lie at the corners
    assert cells_of(second) == cells_of(first)
    app.expire()  # the bridge's lease ended: every kept reference is gone
    third = await read(bus, kept)
    assert cells_of(third) == cells_of(first)
    assert app.cells_made == made + 202


async def test_a_scrolled_sheet_is_read_from_its_new_corners() -> None:
    app = calc_like()
    bus, kept = FakeBus(app), CellRefs()
    await read(bus, kept)
    app.sheets["/sheet"].first = (25, 0)  # scrolled: the kept corners lie elsewhere now
    scrolled = await read(bus, kept)
    assert set(cells_of(scrolled)) == {"A31"}
    assert scrolled.nodes[APP, "/sheet"].summary is not None
    assert scrolled.nodes[APP, "/sheet"].summary.startswith("rows 26-45, columns 1-10 of")


async def test_a_cell_changed_between_reads_is_read_anew() -> None:
    app = calc_like()
    bus = FakeBus(app)
    kept = CellRefs()
    await read(bus, kept)
    app.sheets["/sheet"].cells[0, 0] = "changed"
    again = await read(bus, kept)
    assert cells_of(again)["A1"][0] == "changed"


async def test_text_is_read_where_the_whole_text_cannot_be_asked_for() -> None:
    app = calc_like()
    app.whole_text_works = False  # GetText(0, -1) answers ""
    structure = await read(FakeBus(app))
    assert {name: text for name, (text, _) in cells_of(structure).items()} == {
        "A1": "101",
        "B1": "x",
        "D6": "hello",
    }


@pytest.mark.parametrize("filled", [{}, FILLED], ids=["empty sheet", "filled sheet"])
async def test_a_cell_in_view_costs_one_call_once_the_sheet_is_known(
    filled: dict[tuple[int, int], str],
) -> None:
    app = calc_like()
    app.sheets["/sheet"].cells = dict(filled)
    bus, kept = FakeBus(app), CellRefs()
    await read(bus, kept)
    bus.log.clear()
    await read(bus, kept)
    text_calls = [path for path, member in bus.log if member in ("Get", "GetText")]
    cell_calls = [path for path in text_calls if path.startswith("/cell/")]
    # One a cell, and one kept cell's name, checked before any is trusted.
    assert len(cell_calls) == 200 + 1
    assert app.cells_made == 202  # none but in the first read


async def test_a_sheet_scrolled_away_shows_its_cells_in_view() -> None:
    app = calc_like()
    app.sheets["/sheet"].first = (25, 0)  # rows 26-45 in view
    structure = await read(FakeBus(app))
    assert {name for name in cells_of(structure)} == {"A31"}
    assert structure.nodes[APP, "/sheet"].summary == (
        "rows 26-45, columns 1-10 of 1048576 × 16384 in view; empty cells are not listed"
    )


async def test_far_down_a_sheet_cells_are_placed_by_name() -> None:
    # Past row 131072, LibreOffice's int32 cell index overflows: the "A200001" name tells.
    app = calc_like()
    sheet = app.sheets["/sheet"]
    sheet.first = (200000, 2)
    sheet.cells = {(200000, 2): "far", (200001, 3): "away"}
    structure = await read(FakeBus(app))
    assert {name: text for name, (text, _) in cells_of(structure).items()} == {
        "C200001": "far",
        "D200002": "away",
    }
    assert structure.nodes[APP, "/sheet"].summary is not None
    assert structure.nodes[APP, "/sheet"].summary.startswith(
        "rows 200001-200020, columns 3-12 of 1048576 × 16384"
    )


async def test_an_app_that_stops_answering_ends_the_read_with_what_it_has() -> None:
    bus = FakeBus(calc_like(), cache=False, get_all=False)
    bus.stall_after = 40
    started = time.monotonic()
    structure = await read(bus)
    assert time.monotonic() - started < 2
    assert structure.stalled and structure.truncated_reason is not None
    assert "stopped answering" in structure.truncated_reason
    assert (APP, "/root") in structure.nodes


async def test_a_stalled_read_of_details_leaves_no_read_running() -> None:
    """One node's read that fails ends the read at once; the other nodes' reads must end
    with it, not run on until the loop ends (asyncio then printed a traceback for each)."""

    class OneFails(FakeBus):
        """The first call fails at once; every other one is still waiting for its answer."""

        async def call(self, ref: Ref, method: Method, body: Sequence[Any] = ()) -> list[Any]:
            self.calls += 1
            if self.calls == 1:
                raise AtspiTimeout(f"{ref[0]} did not answer {method.member}")
            await asyncio.sleep(30)
            return []

    structure = await read(FakeBus(calc_like(), cache=False, get_all=False))
    nodes = list(structure.nodes.values())
    for node in nodes:
        node.details_read, node.rect_read = False, False
    bus = OneFails(calc_like())
    started = time.monotonic()
    stopped = await read_details(bus, nodes, TreeLimits(), time.monotonic() + 5)
    assert stopped is not None and "stopped answering" in stopped
    assert time.monotonic() - started < 2
    assert [task for task in asyncio.all_tasks() if task is not asyncio.current_task()] == []


async def test_a_read_cancelled_from_outside_leaves_nothing_for_asyncio_to_print() -> None:
    """A read of details cancelled while its calls wait (a sibling read failed, or the
    caller's own deadline came): its reads end with it, and no gather is left holding an
    exception nobody took. Python 3.11's wait_for did not take it from the gather it waited
    on, and asyncio printed "_GatheringFuture exception was never retrieved" on the
    person's terminal (a fresh clone's run of the shipped GNOME, in a CLI's stderr)."""

    class Waits(FakeBus):
        async def call(self, ref: Ref, method: Method, body: Sequence[Any] = ()) -> list[Any]:
            await asyncio.sleep(30)
            return []

    structure = await read(FakeBus(calc_like(), cache=False, get_all=False))
    nodes = list(structure.nodes.values())
    for node in nodes:
        node.details_read, node.rect_read = False, False
    unretrieved: list[dict[str, Any]] = []
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(lambda _loop, context: unretrieved.append(context))
    try:
        reading = asyncio.ensure_future(
            read_details(Waits(calc_like()), nodes, TreeLimits(), time.monotonic() + 5)
        )
        await asyncio.sleep(0.05)  # the calls are out
        reading.cancel()
        with pytest.raises(asyncio.CancelledError):
            await reading
        await asyncio.sleep(0)
        gc.collect()  # a future's "never retrieved" is said when it is collected
        await asyncio.sleep(0)
    finally:
        loop.set_exception_handler(None)
    assert unretrieved == []
    assert [task for task in asyncio.all_tasks() if task is not asyncio.current_task()] == []


async def test_the_time_limit_ends_a_read_of_a_stalled_app_too() -> None:
    bus = FakeBus(calc_like(), cache=False, get_all=False)
    bus.stall_after, bus.timeout = 10, 30.0  # a call would wait longer than the read may
    cache: dict[tuple[str, str], RawNode] = {}
    root = await fetch_node(bus, (APP, "/root"))
    assert root is not None
    started = time.monotonic()
    structure = await read_structure(
        bus, root, cache, TreeLimits(), lambda node: True, time.monotonic() + 0.5
    )
    assert time.monotonic() - started < 2
    assert structure.truncated_reason == "time limit"


def test_a_range_too_big_is_cut_to_whole_rows() -> None:
    view = CellRange(first_row=10, last_row=109, first_column=0, last_column=29)
    assert view.cut(1000) == CellRange(10, 42, 0, 29)  # 33 rows of 30 cells
    assert view.cut(10) == CellRange(10, 10, 0, 9)  # not even one row: its first cells
    assert view.cut(5000) == view
    assert summary(view, view.cut(1000), 2**20, 2**14) == (
        "rows 11-110, columns 1-30 of 1048576 × 16384 in view; empty cells are not listed"
        "; only rows 11-43, columns 1-30 were read"
    )


def test_cell_rectangles_come_from_the_first_row_and_column() -> None:
    view = Rect(left=0, top=0, right=150, bottom=100)
    rows = {
        0: Rect(left=0, top=0, right=60, bottom=20),
        1: Rect(left=0, top=20, right=60, bottom=40),
    }
    columns = {
        0: Rect(left=0, top=0, right=60, bottom=20),
        1: Rect(left=60, top=0, right=200, bottom=20),
    }
    rects = cell_rects(rows, columns, view)
    assert rects[1, 1] == Rect(left=60, top=20, right=150, bottom=40)  # clipped to the view
    assert rects[0, 0] == Rect(left=0, top=0, right=60, bottom=20)
    assert cell_rects({0: None}, columns, view) == {}


def test_cell_names_give_row_and_column() -> None:
    assert parse_cell_name("A1") == (0, 0)
    assert parse_cell_name("AB12") == (11, 27)
    assert parse_cell_name("XFD1048576") == (2**20 - 1, 2**14 - 1)
    assert parse_cell_name("Sheet1") is None and parse_cell_name("a1") is None
    assert parse_cell_name("12") is None and parse_cell_name("") is None


def test_corners_are_looked_for_stepping_inwards() -> None:
    top_left, bottom_right = corner_points(Rect(left=10, top=20, right=110, bottom=60))
    assert top_left == [(11, 21), (14, 24), (22, 32)]  # 30 px would leave the 40 px view
    assert bottom_right == [(108, 58), (105, 55), (97, 47)]


def test_kept_cells_age_out_and_few_tables_are_kept() -> None:
    refs = CellRefs(max_age=10, max_tables=2)
    table = refs.table((APP, "/t1"), now=0)
    table.put((0, 0), (APP, "/c1"), "A1", now=0)
    table.put((0, 1), (APP, "/c2"), "B1", now=5)
    assert refs.table((APP, "/t1"), now=12).get((0, 0)) is None  # 12 s old: dropped
    assert refs.table((APP, "/t1"), now=12).get((0, 1)) is not None
    table.keep_only({(5, 5)})
    assert len(refs) == 0
    table.put((5, 5), (APP, "/c3"), "F6", now=12)
    refs.table((APP, "/t2"), now=13)
    refs.table((APP, "/t3"), now=14)  # the least recently used table goes
    assert refs.table((APP, "/t1"), now=15).get((5, 5)) is None


async def test_a_slow_big_cache_is_walked_instead_on_reads_of_what_shows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    items = {
        f"/item/{index}": FakeObject(role="menu item", name=f"Item {index}")
        for index in range(BIG_CACHE + 1)
    }
    bus = FakeBus(FakeApp({"/": FakeObject(role="frame", children=list(items)), **items}))
    finder = FrameFinder()
    monkeypatch.setattr(atspi_frames, "SLOW_CACHE", -1.0)  # any GetItems is "slow"

    def listings() -> int:
        return sum(1 for _, member in bus.log if member == "GetItems")

    assert len(await finder.cache_of(bus, APP, showing_only=True)) == BIG_CACHE + 2
    assert await finder.cache_of(bus, APP, showing_only=True) == {}  # walked: not asked
    assert listings() == 1
    # The whole tree needs every node: the cache lists them in one call.
    assert len(await finder.cache_of(bus, APP, showing_only=False)) == BIG_CACHE + 2
    assert listings() == 2


async def test_a_toolkit_that_caches_documents_is_walked_on_reads_of_what_shows() -> None:
    """Chromium's cache holds every object of the page it has handed out (25,248 for a table
    of 2,500 rows): a read of what shows walks from the frame, also a new process's first,
    and asks the properties of a level in one GetAll; the whole tree still lists the cache."""
    items = {f"/row/{index}": FakeObject(role="table row") for index in range(BIG_CACHE + 1)}
    app = FakeApp({"/": FakeObject(role="frame", children=list(items)), **items})
    bus = FakeBus(app, toolkit="Chromium")
    finder = FrameFinder()
    assert await finder.cache_of(bus, APP, showing_only=True) == {}
    assert not [member for _, member in bus.log if member == "GetItems"]
    assert await finder._get_all(bus, APP, {})  # Chromium's bridge implements GetAll
    assert len(await finder.cache_of(bus, APP, showing_only=False)) == BIG_CACHE + 2
    qt = FakeBus(FakeApp({"/": FakeObject(role="frame")}), cache=False, toolkit="Qt")
    assert not await FrameFinder()._get_all(qt, APP, {})  # Qt's does not


async def test_a_small_or_quick_cache_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    small = FakeBus(FakeApp({"/": FakeObject(role="frame")}))
    finder = FrameFinder()
    monkeypatch.setattr(atspi_frames, "SLOW_CACHE", -1.0)
    for _ in range(2):
        assert len(await finder.cache_of(small, APP, showing_only=True)) == 1
    monkeypatch.setattr(atspi_frames, "SLOW_CACHE", 60.0)
    items = {f"/item/{index}": FakeObject(role="label") for index in range(BIG_CACHE + 1)}
    big = FakeBus(FakeApp({"/": FakeObject(role="frame", children=list(items)), **items}))
    for _ in range(2):
        assert len(await finder.cache_of(big, APP, showing_only=True)) == BIG_CACHE + 2
    assert finder.walked == set()


async def test_a_value_that_tells_nothing_is_neither_read_nor_shown() -> None:
    """LibreOffice gives each toolbar button a Value of 0 (Calc listed 60 `= '0'`); a
    slider's value is what a person reads of it."""
    with_value = (ACCESSIBLE, COMPONENT, ACTION, VALUE)
    app = FakeApp(
        {
            "/root": FakeObject(role="frame", children=["/bold", "/zoom"], rect=(0, 0, 400, 300)),
            "/bold": FakeObject(
                role="push button", name="Bold", interfaces=with_value, rect=(4, 4, 30, 30)
            ),
            "/zoom": FakeObject(
                role="slider", name="Zoom", interfaces=with_value, rect=(40, 4, 100, 30), value=42.0
            ),
        }
    )
    bus = FakeBus(app)
    structure = await read(bus)
    await read_details(bus, structure.nodes.values(), TreeLimits(), time.monotonic() + 5)
    assert structure.nodes[APP, "/bold"].text is None
    assert structure.nodes[APP, "/zoom"].text == "42"
