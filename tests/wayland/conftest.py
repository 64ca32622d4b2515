"""Fixtures for the Wayland tests: one headless compositor of each family per test module
(sway, GNOME Shell, KWin; each with its own buses and AT-SPI), its display server, and
gedit started on it as a Wayland client."""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import pytest
from tests.desktop.conftest import gedit_argv, kill_session, wait_until_async

from roundhouse.config import DesktopSettings
from roundhouse.devices.contract import WindowInfo
from roundhouse.devices.linux.desktops.desktop import Desktop, VirtualDesktop
from roundhouse.devices.linux.display.base import DisplayServer
from roundhouse.devices.linux.display.choose import open_display

SESSIONS = ("sway", "gnome", "kde")

StartGedit = Callable[..., Awaitable[tuple[subprocess.Popen[bytes], WindowInfo]]]


@pytest.fixture(scope="module", params=SESSIONS)
def session(request: pytest.FixtureRequest) -> Iterator[Desktop]:
    """A virtual Wayland desktop of each kind in turn."""
    with VirtualDesktop(DesktopSettings(session=request.param)) as desktop:
        yield desktop


@pytest.fixture(scope="module")
def display(session: Desktop) -> Iterator[DisplayServer]:
    with open_display(session) as opened:
        yield opened


@pytest.fixture
def start_gedit(session: Desktop, display: DisplayServer) -> Iterator[StartGedit]:
    """start_gedit(*files) starts gedit on the session and returns it with its window,
    active; every gedit started is killed after the test."""
    started: list[subprocess.Popen[bytes]] = []

    async def start(*files: Path) -> tuple[subprocess.Popen[bytes], WindowInfo]:
        process = subprocess.Popen(
            gedit_argv(*map(str, files)),
            env=session.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        started.append(process)
        name = files[0].name if files else "Untitled"

        async def shown() -> WindowInfo | None:
            for window in await asyncio.to_thread(display.windows.list_windows):
                if window.pid == process.pid and name in window.title:
                    if await asyncio.to_thread(display.windows.viewable, window.xid):
                        return window
            return None

        window = await wait_until_async(shown, 30, f"gedit's window for {name}")
        return process, await display.windows.activate(window.xid, timeout=10)

    yield start
    for process in started:
        kill_session(process)
