"""Reads kept warm never serve a stale control (atspi_kept): on real GTK 3 (gedit), GTK 4
(GNOME Calculator), Qt (the test app) and LibreOffice Calc, a read served from what was
kept is shown first, then the window is changed behind the reader's back (by keys sent
straight to the display server, another AT-SPI client, or the application itself), and
once a reader that keeps nothing sees the change, the next read of the keeping reader
shows it too: a new row, a renamed button, a banner and a bar shown and dismissed, a
focus moved, a text and a cell typed."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from tests.desktop.conftest import (
    QT_APP_TITLE,
    StartApp,
    calc_argv,
    gedit_argv,
    kill_session,
    qt_app_argv,
    wait_for_window,
    wait_until_async,
)

from roundhouse.bench.setup import flat_ods
from roundhouse.devices.contract import Control, ControlList, WindowInfo
from roundhouse.devices.linux.atspi.client import AtspiClient
from roundhouse.devices.linux.desktops.desktop import Desktop
from roundhouse.devices.linux.display.backends import open_display
from roundhouse.devices.linux.display.base import DisplayServer

Seen = Callable[[ControlList], bool]


@dataclass
class Readers:
    keeping: AtspiClient  # keeps its reads while nothing changes
    plain: AtspiClient  # keeps nothing: it tells when a change has happened
    display: DisplayServer

    def window(self, xid: int) -> WindowInfo:
        """The window as the display server lists it now (its title may have changed)."""
        return self.display.windows.get(xid)

    async def keys(self, keys: str) -> None:
        """Keys sent straight to the display server, behind the readers' backs."""
        await asyncio.to_thread(self.display.input.press_keys, keys)

    async def type(self, text: str) -> None:
        await asyncio.to_thread(self.display.input.type_text, text)


@pytest.fixture
async def readers(desktop: Desktop) -> AsyncIterator[Readers]:
    with open_display(desktop) as display:
        keeping = AtspiClient(content=display.windows.content, drawn=display.drawn)
        plain = AtspiClient(content=display.windows.content)
        async with keeping, plain:
            await keeping.connect(desktop)
            await plain.connect(desktop)
            assert keeping.kept.enabled, "the X server reports its damage: reads are kept"
            yield Readers(keeping, plain, display)


async def served_again(readers: Readers, xid: int) -> ControlList:
    """A read made right after another, with nothing changed, is served what was kept. (A
    caret's blink elsewhere than in the focused control voids it: a few tries.)"""
    for _ in range(10):
        window = readers.window(xid)
        await readers.keeping.controls(window)
        served = readers.keeping.kept.served
        again = await readers.keeping.controls(window)
        if readers.keeping.kept.served > served:
            return again
        await asyncio.sleep(0.3)
    pytest.fail("no read was served from what was kept")


async def changed_behind(
    readers: Readers,
    xid: int,
    change: Callable[[], Awaitable[None]],
    seen: Seen,
    what: str,
) -> ControlList:
    """Keep a read of the window, make `change`, wait until the plain reader sees it, then
    read with the keeping reader: it must show it too."""
    kept = await served_again(readers, xid)
    assert not seen(kept), f"{what}: already so before the change"
    await change()

    async def seen_plainly() -> bool:
        return seen(await readers.plain.controls(readers.window(xid)))

    await wait_until_async(seen_plainly, what=what)
    after = await readers.keeping.controls(readers.window(xid))
    assert seen(after), f"{what}: the keeping reader served what it read before the change"
    return after


def named(role: str, name: str) -> Seen:
    return lambda listed: any(c.role == role and c.name == name for c in listed.controls)


def absent(seen: Seen) -> Seen:
    return lambda listed: not seen(listed)


def focused(listed: ControlList) -> Control | None:
    return next((c for c in listed.controls if "focused" in c.states), None)


# ------------------------------------------------------------ Qt


@pytest.fixture
def qt_commands(desktop: Desktop) -> Iterator[tuple[subprocess.Popen[bytes], WindowInfo]]:
    """The Qt test app, obeying lines written to its standard input."""
    process = subprocess.Popen(
        desktop.app_command([*qt_app_argv(), "--commands"]),
        env=desktop.env,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        yield process, wait_for_window(desktop, pid=process.pid, title=QT_APP_TITLE)
    finally:
        kill_session(process)
        if process.stdin is not None:
            process.stdin.close()


def tell(process: subprocess.Popen[bytes], line: str) -> Callable[[], Awaitable[None]]:
    async def told() -> None:
        assert process.stdin is not None
        process.stdin.write(f"{line}\n".encode())
        process.stdin.flush()

    return told


async def test_qt_renamed_button_new_row_and_banner(
    readers: Readers, qt_commands: tuple[subprocess.Popen[bytes], WindowInfo]
) -> None:
    process, window = qt_commands
    await wait_until_async(
        lambda: readers_ready(readers, window.xid, named("push button", "Press me")),
        what="the Qt app's button",
    )
    await changed_behind(
        readers,
        window.xid,
        tell(process, "rename Send now"),
        named("push button", "Send now"),
        "the button renamed",
    )
    await changed_behind(
        readers, window.xid, tell(process, "row Row zero"), named("list item", "Row zero"),
        "a new row at the top of the list",
    )  # fmt: skip
    banner = named("push button", "Dismiss")
    await changed_behind(readers, window.xid, tell(process, "banner"), banner, "a banner shown")
    await changed_behind(
        readers, window.xid, tell(process, "dismiss"), absent(banner), "the banner dismissed"
    )


async def readers_ready(readers: Readers, xid: int, seen: Seen) -> bool:
    return seen(await readers.plain.controls(readers.window(xid)))


# ------------------------------------------------------------ GTK 3


def search_field(listed: ControlList) -> Control | None:
    return next((c for c in listed.controls if c.role == "text" and c.name == "Search"), None)


def document_view(listed: ControlList) -> Control | None:
    return next((c for c in listed.controls if c.role == "text" and c.name == ""), None)


def document_holds(text: str) -> Seen:
    def holds(listed: ControlList) -> bool:
        view = document_view(listed)
        return view is not None and text in (view.text or "")

    return holds


def search_bar_focused(listed: ControlList) -> bool:
    field = search_field(listed)
    return field is not None and "focused" in field.states


def back_in_document(listed: ControlList) -> bool:
    view = document_view(listed)
    return search_field(listed) is None and view is not None and "focused" in view.states


@pytest.mark.skipif(shutil.which("gedit") is None, reason="gedit: make system-deps")
async def test_gtk3_search_bar_focus_and_text(
    readers: Readers, desktop: Desktop, launch: StartApp, tmp_path: Path
) -> None:
    document = tmp_path / "kept.txt"
    document.write_text("one line\n")
    process = launch(desktop, gedit_argv(str(document)))
    window = wait_for_window(desktop, pid=process.pid, title=document.name)
    await wait_until_async(
        lambda: readers_ready(readers, window.xid, back_in_document), what="gedit's document"
    )
    # GTK 3 maps the search bar and moves the focus into it, and back, announcing neither.
    await changed_behind(
        readers, window.xid, lambda: readers.keys("ctrl+f"), search_bar_focused,
        "gedit's search bar shown and focused",
    )  # fmt: skip
    await changed_behind(
        readers, window.xid, lambda: readers.keys("Escape"), back_in_document,
        "the search bar gone, the focus back in the document",
    )  # fmt: skip
    await changed_behind(
        readers, window.xid, lambda: readers.type("kept "), document_holds("kept "),
        "text typed into the document",
    )  # fmt: skip


# ------------------------------------------------------------ GTK 4


def display_shows(text: str) -> Seen:
    def shows(listed: ControlList) -> bool:
        return any(c.role == "text" and (c.text or "") == text for c in listed.controls)

    return shows


def focus_on_role(role: str) -> Seen:
    def on(listed: ControlList) -> bool:
        now = focused(listed)
        return now is not None and now.role == role

    return on


@pytest.mark.skipif(shutil.which("gnome-calculator") is None, reason="make system-deps")
async def test_gtk4_display_and_focus(readers: Readers, desktop: Desktop, launch: StartApp) -> None:
    process = launch(desktop, ["gnome-calculator"])
    window = wait_for_window(desktop, pid=process.pid)
    await wait_until_async(
        lambda: readers_ready(readers, window.xid, named("push button", "7")),
        what="Calculator's keypad",
    )
    await changed_behind(
        readers, window.xid, lambda: readers.type("7"), display_shows("7"), "a digit typed"
    )
    await changed_behind(
        readers, window.xid, lambda: readers.type("3"), display_shows("73"), "another digit"
    )
    # Tab moves the focus from the display to the keypad's first button (Calculator 43
    # names it "Clear Display [Escape]", 48 "C"): a push button, where a stale read would
    # still show the display focused.
    await changed_behind(
        readers, window.xid, lambda: readers.keys("Tab"), focus_on_role("push button"),
        "the focus moved off the display",
    )  # fmt: skip


@pytest.mark.skipif(shutil.which("gnome-calculator") is None, reason="make system-deps")
async def test_a_windows_first_read_is_not_served_again(
    readers: Readers, desktop: Desktop, launch: StartApp
) -> None:
    """GTK 4 builds its tree once asked and announces nothing when it has, so a read made
    as the window opens may find its frame alone: a window's first read is never served
    again, and the keypad shows once built."""
    process = launch(desktop, ["gnome-calculator"])
    window = wait_for_window(desktop, pid=process.pid)

    def drawn() -> bool:  # as an agent's first look finds it: the window shows something
        image = readers.display.screen.region(readers.window(window.xid).rect)
        colours = image.convert("RGB").getcolors(maxcolors=64)
        return colours is None or len(colours) > 8  # None: more than 64

    await wait_until_async(lambda: asyncio.to_thread(drawn), what="the window drawn")
    await readers.keeping.controls(readers.window(window.xid))
    served = readers.keeping.kept.served
    await readers.keeping.controls(readers.window(window.xid))
    assert readers.keeping.kept.served == served, "the first read was served again"

    async def keypad() -> bool:
        listed = await readers.keeping.controls(readers.window(window.xid))
        return named("push button", "7")(listed)

    await wait_until_async(keypad, what="the keypad")


# ------------------------------------------------------------ LibreOffice Calc


def cell_holds(name: str, text: str) -> Seen:
    def holds(listed: ControlList) -> bool:
        return any(c.role == "table cell" and c.name == name and c.text == text
                   for c in listed.controls)  # fmt: skip

    return holds


@pytest.mark.skipif(shutil.which("soffice") is None, reason="LibreOffice: make system-deps")
async def test_calc_cells_typed(
    readers: Readers, desktop: Desktop, launch: StartApp, tmp_path: Path
) -> None:
    sheet = flat_ods(tmp_path / "kept.fods", [["head", "x"], [1, 2]])
    launch(desktop, calc_argv(tmp_path / "profile", sheet))
    window = wait_for_window(desktop, title=sheet.name, timeout=90)
    await wait_until_async(
        lambda: readers_ready(readers, window.xid, cell_holds("A1", "head")),
        timeout=90,
        what="Calc's sheet",
    )
    # The cursor is in A1: a new row of values goes in below the two rows there are.
    await readers.keys("ctrl+Home Down Down")
    await changed_behind(
        readers, window.xid, lambda: readers.type("4242\t"), cell_holds("A3", "4242"),
        "a value typed into a new row",
    )  # fmt: skip
    await changed_behind(
        readers, window.xid, lambda: readers.type("kept\n"), cell_holds("B3", "kept"),
        "a text typed beside it",
    )  # fmt: skip
