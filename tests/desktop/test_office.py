"""LibreOffice Calc on a real (virtual) desktop: a sheet is a table of 2^20 × 2^14 cells that
manages its descendants. Its children are never asked for; the cells in view are read
through the Table interface, their references kept between reads so that soffice does not
grow, and an application that stops answering ends the read with what it has."""

from __future__ import annotations

import os
import re
import signal
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from tests.desktop.conftest import StartApp, calc_argv, wait_for_window, wait_until_async

from roundhouse.bench.setup import flat_ods, held_still
from roundhouse.devices.contract import Control, ControlList, WindowInfo
from roundhouse.devices.linux.atspi import frames as atspi_frames
from roundhouse.devices.linux.atspi.bus import Ref, parse_node_id
from roundhouse.devices.linux.atspi.client import AtspiClient, TreeLimits
from roundhouse.devices.linux.atspi.table import parse_cell_name
from roundhouse.devices.linux.atspi.tree import walk
from roundhouse.devices.linux.desktops.desktop import Desktop
from roundhouse.devices.linux.display.x11.input import XInput

ROWS, COLUMNS = 50, 20
EMPTY = "C3"  # one cell left empty: empty cells are not listed
SUMMARY = re.compile(
    r"rows 1-(\d+), columns 1-(\d+) of 1048576 × 16384 in view; empty cells are not listed"
)


def cell_text(row: int, column: int) -> str:
    """What the generated sheet holds at (row, column), 0-based; "" for an empty cell."""
    if parse_cell_name(EMPTY) == (row, column) or row >= ROWS or column >= COLUMNS:
        return ""
    if column % 2 == 0:
        return str((row + 1) * 100 + column + 1)  # a number: 101 in A1
    return f"R{row + 1}C{column + 1}"


def write_sheet(path: Path) -> Path:
    """The sheet of cell_text: numbers in even columns (0-based), text in odd ones."""
    return flat_ods(
        path,
        [
            [_typed(cell_text(row, column), column) for column in range(COLUMNS)]
            for row in range(ROWS)
        ],
    )


def _typed(text: str, column: int) -> int | str:
    return int(text) if text and column % 2 == 0 else text


@pytest.fixture
async def client(desktop: Desktop) -> AsyncIterator[AtspiClient]:
    async with AtspiClient() as connected:
        await connected.connect(desktop)
        yield connected


class CallSpy:
    """Records every AT-SPI call a client makes: (object, member)."""

    def __init__(self, client: AtspiClient, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls: list[tuple[Ref, str]] = []
        self.before_call = lambda: None
        real = client.bus._request  # where call() and call_or_none() both go

        def request(call: Any) -> Any:
            self.calls.append((call.ref, call.method.member))
            self.before_call()
            return real(call)

        monkeypatch.setattr(client.bus, "_request", request)

    def members_called_on(self, ref: Ref) -> set[str]:
        return {member for called, member in self.calls if called == ref}


async def open_calc(desktop: Desktop, launch: StartApp, tmp_path: Path, *files: Path) -> WindowInfo:
    launch(desktop, calc_argv(tmp_path / "profile", *files))
    title = files[0].name if files else "Untitled"
    # A fresh profile is made at the first start: slow on a loaded machine.
    return wait_for_window(desktop, title=title, timeout=90)


async def controls_when(
    client: AtspiClient, window: WindowInfo, role: str, name: str | None = None
) -> ControlList:
    """The controls once one of `role` (and `name`) is among them: the sheet loads after
    the window maps, and its table shows up only then."""

    async def ready() -> ControlList | None:
        listed = await client.controls(window)
        return listed if find(listed, role, name) is not None else None

    return await wait_until_async(ready, timeout=60, what=f"a {role} control named {name!r}")


def find(listed: ControlList, role: str, name: str | None = None) -> Control | None:
    for control in listed.controls:
        if control.role == role and (name is None or control.name == name):
            return control
    return None


def in_view(table: Control) -> tuple[int, int]:
    """Rows and columns in view, from the table's summary."""
    match = SUMMARY.fullmatch(table.text or "")
    assert match is not None, table.text
    return int(match[1]), int(match[2])


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError(f"no VmRSS for process {pid}")


async def test_calc_cells_in_view_are_read_by_name_value_and_place(
    desktop: Desktop,
    launch: StartApp,
    client: AtspiClient,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    spy = CallSpy(client, monkeypatch)
    window = await open_calc(desktop, launch, tmp_path, write_sheet(tmp_path / "cells.fods"))
    listed = await controls_when(client, window, "table cell", "A1")
    assert not listed.truncated
    table = find(listed, "table")
    assert table is not None
    rows, columns = in_view(table)
    assert rows >= 10 and columns >= 5  # a 1280×800 window shows ~33 × 15
    cells = {control.name: control for control in listed.controls if control.role == "table cell"}
    filled = {
        f"{chr(ord('A') + column)}{row + 1}": cell_text(row, column)
        for row in range(rows)
        for column in range(columns)
        if cell_text(row, column)
    }
    assert {name: cell.text for name, cell in cells.items()} == filled
    assert cells["A1"].text == "101" and cells["B1"].text == "R1C2" and EMPTY not in cells
    # A grid inside the table: B1 right of A1, A2 below it, edges shared.
    a1, b1, a2 = cells["A1"].rect, cells["B1"].rect, cells["A2"].rect
    assert a1.width > 20 and a1.height > 8
    assert (b1.left, b1.top, b1.bottom) == (a1.right, a1.top, a1.bottom)
    assert (a2.top, a2.left, a2.right) == (a1.bottom, a1.left, a1.right)
    for cell in cells.values():
        assert table.rect.left <= cell.rect.left < cell.rect.right <= table.rect.right
        assert table.rect.top <= cell.rect.top < cell.rect.bottom <= table.rect.bottom

    # The whole tree (what `roundhouse tree --window Calc` prints) holds the same cells.
    snapshot = await client.ui_tree(window)
    assert snapshot.root is not None and not snapshot.truncated
    in_tree = {node.name: node.text for node in walk(snapshot.root) if node.role == "table cell"}
    assert in_tree == filled
    # Never once was the sheet asked for its children, though it was read many times.
    sheet = parse_node_id(table.id)
    assert "GetChildren" not in spy.members_called_on(sheet)
    assert "GetAccessibleAtPoint" in spy.members_called_on(sheet)


async def test_a_closed_menu_is_not_read_and_an_open_one_lists_its_items(
    desktop: Desktop,
    launch: StartApp,
    client: AtspiClient,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Calc's menu bar holds ~270 items the bridge does not cache: closed, none shows, and a
    read asks a closed menu nothing; open ("selected"), its items are controls."""
    window = await open_calc(desktop, launch, tmp_path, write_sheet(tmp_path / "menus.fods"))
    await controls_when(client, window, "table cell", "A1")
    # One CI run's first read that held A1 held no File menu (not seen again in 9 runs
    # beside two busy loops; LibreOffice refills its menu bar once the document is in):
    # the menu is waited for as well, and what is asserted of it below is unchanged.
    listed = await controls_when(client, window, "menu", "File")
    file_menu = find(listed, "menu", "File")
    assert file_menu is not None
    assert find(listed, "menu item") is None
    # Once: LibreOffice's own menu bar beside GTK's is zero pixels high.
    menus = [control.name for control in listed.controls if control.role == "menu"]
    assert menus.count("File") == 1, menus
    spy = CallSpy(client, monkeypatch)
    await client.controls(window)
    assert "GetChildren" not in spy.members_called_on(parse_node_id(file_menu.id))
    with XInput(desktop.display) as keyboard:
        keyboard.press_keys("alt+f")
    opened = await controls_when(client, window, "menu item")
    items = [control.name for control in opened.controls if control.role == "menu item"]
    assert any(name.startswith("Save As") for name in items), items
    assert not [name for name in set(items) if name and items.count(name) > 1], items
    with XInput(desktop.display) as keyboard:
        keyboard.press_keys("Escape")


async def test_reading_calc_again_and_again_does_not_grow_soffice(
    desktop: Desktop, launch: StartApp, client: AtspiClient, tmp_path: Path
) -> None:
    window = await open_calc(desktop, launch, tmp_path, write_sheet(tmp_path / "memory.fods"))
    assert window.pid is not None
    assert Path(f"/proc/{window.pid}/comm").read_text().strip() == "soffice.bin"
    await controls_when(client, window, "table cell", "A1")
    before = rss_mb(window.pid)
    for _ in range(20):
        listed = await client.controls(window)
        assert find(listed, "table cell", "A1") is not None
    grown = rss_mb(window.pid) - before
    # Without kept cell references each read made soffice build ~500 cells: ~4 MB a read.
    assert grown < 50, f"soffice grew {grown:.0f} MB over 20 reads"


async def test_calc_read_by_walking_lists_what_its_cache_would(
    desktop: Desktop,
    launch: StartApp,
    client: AtspiClient,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """LibreOffice's cache is slow to list (~1,100 objects): reads of what shows walk it
    instead (atspi_frames.SLOW_CACHE), and must see exactly what the cache gives."""
    window = await open_calc(desktop, launch, tmp_path, write_sheet(tmp_path / "walk.fods"))
    await controls_when(client, window, "table cell", "A1")
    await held_still(client, window)
    frame = await client.find_frame(window)
    assert frame is not None
    monkeypatch.setattr(atspi_frames, "SLOW_CACHE", 60.0)  # never slow: the cache is used
    client.frames.walked.clear()
    cached = await client.controls(window)
    assert frame.app not in client.frames.walked
    monkeypatch.setattr(atspi_frames, "SLOW_CACHE", -1.0)  # always slow
    await client.controls(window)  # lists it once more, and finds it slow
    assert frame.app in client.frames.walked
    spy = CallSpy(client, monkeypatch)
    walked = await client.controls(window)
    assert walked.controls == cached.controls
    # It speaks ATK: a node's name, description and child count come in one GetAll.
    members = [member for _, member in spy.calls]
    assert "GetItems" not in members and members.count("GetAll") > 50
    assert walked.context == cached.context
    assert find(walked, "table cell", "A1") is not None


async def test_an_empty_sheet_reads_in_a_moment(
    desktop: Desktop, launch: StartApp, client: AtspiClient, tmp_path: Path
) -> None:
    window = await open_calc(desktop, launch, tmp_path)
    await controls_when(client, window, "table")
    started = time.monotonic()
    listed = await client.controls(window)
    elapsed = time.monotonic() - started
    assert not listed.truncated
    assert elapsed < 3.0, f"an empty sheet took {elapsed:.1f} s"
    table = find(listed, "table")
    assert table is not None
    rows, columns = in_view(table)
    assert rows >= 10 and columns >= 5
    assert find(listed, "table cell") is None  # nothing filled, nothing listed


async def test_calc_that_stops_answering_mid_read_ends_the_read_truncated(
    desktop: Desktop,
    launch: StartApp,
    client: AtspiClient,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    window = await open_calc(desktop, launch, tmp_path, write_sheet(tmp_path / "stop.fods"))
    assert window.pid is not None
    pid = window.pid
    await controls_when(client, window, "table cell", "A1")
    client.bus.timeout = 1.0  # only now: a loaded machine may stall a live app that long
    spy = CallSpy(client, monkeypatch)
    stopped = False

    def stop_after_the_frame_is_found() -> None:
        nonlocal stopped
        if len(spy.calls) == 40 and not stopped:
            os.kill(pid, signal.SIGSTOP)
            stopped = True

    spy.before_call = stop_after_the_frame_is_found
    budget = 6.0
    try:
        started = time.monotonic()
        listed = await client.controls(window, TreeLimits(time_limit=budget))
        elapsed = time.monotonic() - started
    finally:
        os.kill(pid, signal.SIGCONT)
    assert stopped
    assert elapsed < budget
    assert listed.truncated and listed.truncated_reason is not None
    assert "stopped answering" in listed.truncated_reason
