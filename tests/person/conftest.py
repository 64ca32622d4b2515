"""Fixtures for a person's desktop (issue 35): virtual desktops of X11 and sway made as a
person's are (two monitors, a keyboard layout), the desktop tools on them, and the apps the
tests drive, started and moved where a person would have them."""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import AsyncIterator, Iterator, Sequence

import pytest
from tests.desktop.conftest import kill_session, wait_until_async

from roundhouse.config import DesktopSettings, Settings
from roundhouse.devices.contract import Rect, WindowInfo
from roundhouse.devices.linux.desktops.desktop import Desktop
from roundhouse.devices.linux.desktops.virtual import VirtualDesktop
from roundhouse.devices.linux.display.base import Monitor
from roundhouse.devices.linux.display.wlroots.sway import SwayIpc, sway_socket
from roundhouse.devices.linux.tools import DesktopTools

# The kinds whose virtual desktops have two monitors and any layout.
KINDS = ("x11", "sway")
# Those whose virtual desktops have two monitors.
MONITORS = (*KINDS, "kde")
# The kinds whose display server sees the person: their input, and a locked screen.
WATCHED = (*KINDS, "gnome", "kde")


def settings_for(kind: str, **desktop: object) -> Settings:
    return Settings(desktop=DesktopSettings(session=kind, **desktop))


@pytest.fixture(scope="module", params=MONITORS)
def two_monitors(request: pytest.FixtureRequest) -> Iterator[Desktop]:
    """A virtual desktop of each kind with a second monitor (at scale 1.5 on sway and
    kde)."""
    with VirtualDesktop(settings_for(request.param, monitors=2).desktop) as started:
        yield started


@pytest.fixture
async def tools_on(two_monitors: Desktop) -> AsyncIterator[DesktopTools]:
    settings = settings_for(two_monitors.kind, monitors=2)
    async with await DesktopTools.open(two_monitors, settings) as opened:
        yield opened


class Apps:
    """Apps started on a desktop, each killed when the test ends."""

    def __init__(self) -> None:
        self.started: list[subprocess.Popen[bytes]] = []

    async def start(
        self, desktop: Desktop, tools: DesktopTools, argv: Sequence[str], title: str
    ) -> WindowInfo:
        """Start `argv` and return its window (whose title holds `title`), active."""
        process = subprocess.Popen(
            desktop.app_command(argv),
            env=desktop.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        self.started.append(process)

        async def shown() -> WindowInfo | None:
            for window in await asyncio.to_thread(tools.windows.list_windows):
                if title in window.title and tools.windows.viewable(window.xid):
                    return window
            return None

        window = await wait_until_async(shown, 30, f"a window titled {title!r}")
        return await tools.windows.activate(window.xid, timeout=10)


@pytest.fixture
def apps() -> Iterator[Apps]:
    started = Apps()
    yield started
    for process in started.started:
        kill_session(process)


async def move_to(desktop: Desktop, tools: DesktopTools, xid: int, monitor: Monitor) -> WindowInfo:
    """Put the window on `monitor` as a person would drag it there, and wait until it is:
    sway moves it to the monitor's output; on X11 openbox is asked to move its frame; KWin
    moves it (and sizes it to fit: a KDE desktop's second monitor is 853x533)."""
    if desktop.kind == "kde":
        from roundhouse.devices.linux.display.kde.kwin import KWinWindows

        assert isinstance(tools.windows, KWinWindows)
        area = monitor.rect
        window = tools.windows.get(xid)
        width = min(window.rect.width, area.width - 40)
        height = min(window.rect.height, area.height - 40)
        to = Rect(area.left + 20, area.top + 20, area.left + 20 + width, area.top + 20 + height)
        await asyncio.to_thread(tools.windows.move, xid, to)
        # KWin 6 puts a window moved and resized at its place once the client acks the
        # configure, and GTK 3 acks it at its next frame: a gedit with nothing to draw
        # stayed where it was, 1 run in 3 on Debian 13 (a key typed into it then moved it
        # at once). A person's drag passes the pointer over the header bar, whose buttons
        # light up under it: gedit draws, and the move lands.
        frame = window.rect
        for x in range(frame.left + 20, frame.right - 20, 30):
            await asyncio.to_thread(tools.display.input.move, x, frame.top + 20)
    elif desktop.kind == "sway":
        ipc = SwayIpc(sway_socket(desktop.env))
        try:
            ipc.command(f"[con_id={xid}] move container to output {monitor.name}")
            ipc.command(f"[con_id={xid}] focus")
        finally:
            ipc.close()
    else:
        _x11_move(desktop.display, xid, monitor.rect.left + 40, monitor.rect.top + 40)

    async def there() -> WindowInfo | None:
        window = tools.windows.get(xid)
        return window if monitor.rect.contains(window.rect) else None

    await wait_until_async(there, 10, f"the window on monitor {monitor.number}")
    return await tools.windows.activate(xid, timeout=10)


def _x11_move(display: str, xid: int, x: int, y: int) -> None:
    """_NET_MOVERESIZE_WINDOW: the window manager moves the frame (gravity from the window,
    x and y given, from a pager: source 2)."""
    from Xlib import X  # type: ignore[import-untyped, unused-ignore]
    from Xlib.display import Display  # type: ignore[import-untyped, unused-ignore]
    from Xlib.protocol import event  # type: ignore[import-untyped, unused-ignore]

    connection = Display(display)
    try:
        root = connection.screen().root
        window = connection.create_resource_object("window", xid)
        flags = (1 << 8) | (1 << 9) | (2 << 12)  # x, y; source: a pager
        message = event.ClientMessage(
            window=window,
            client_type=connection.intern_atom("_NET_MOVERESIZE_WINDOW"),
            data=(32, [flags, x, y, 0, 0]),
        )
        mask = X.SubstructureRedirectMask | X.SubstructureNotifyMask
        root.send_event(message, event_mask=mask)
        connection.sync()
    finally:
        connection.close()


def person_moves(desktop: Desktop, to: tuple[int, int] = (600, 400)) -> None:
    """ "The person": a second input client, not roundhouse's, moves the pointer."""
    if desktop.kind == "sway":
        _virtual_mouse_moves(desktop, to)
    elif desktop.kind == "gnome":
        _remote_desktop_moves(desktop, to)
    elif desktop.kind == "kde":
        from roundhouse.devices.linux.display.kde.fakeinput import FakeInput

        with FakeInput(desktop.env) as theirs:  # a fake-input client of its own
            theirs.move(*to)
    else:
        from roundhouse.devices.linux.display.x11.input import XInput

        with XInput(desktop.display) as mine:
            mine.move(*to)


def _virtual_mouse_moves(desktop: Desktop, to: tuple[int, int]) -> None:
    """A mouse of its own (a wlroots virtual pointer, no keyboard: a person's mouse is one
    device) moves to `to` on a desktop of `desktop.width` x `desktop.height`."""
    from roundhouse.devices.linux.display.wayland.wire import Connection

    with Connection.open(desktop.env) as wayland:
        seat = wayland.bind("wl_seat", 1)
        manager = wayland.bind("zwlr_virtual_pointer_manager_v1", 1)
        pointer = wayland.new_id()
        wayland.request(manager, 0, "on", seat, pointer)  # create_virtual_pointer
        for x, y in ((to[0] - 1, to[1]), to):
            # motion_absolute(time, x, y, x_extent, y_extent), then frame
            wayland.request(pointer, 1, "uuuuu", 0, x, y, desktop.width, desktop.height)
            wayland.request(pointer, 4)
        wayland.roundtrip()
        wayland.request(pointer, 8)  # destroy
        wayland.roundtrip()


def _remote_desktop_moves(desktop: Desktop, to: tuple[int, int]) -> None:
    """A remote desktop of its own (a session of Mutter's, on a bus connection of its own,
    as another program makes one) moves the pointer to `to`."""
    from roundhouse.devices.linux.display.gnome.remote import MutterInput
    from roundhouse.devices.linux.display.wayland.dbus import SyncBus

    bus = SyncBus(desktop.env["DBUS_SESSION_BUS_ADDRESS"])
    try:
        theirs = MutterInput(bus, desktop.env, (desktop.width, desktop.height))
        try:
            theirs.move(*to)
        finally:
            theirs.close()
    finally:
        bus.close()
