"""Fixtures for the Wayland tests: one headless compositor of each Wayland backend per test
module (sway, labwc, GNOME Shell, KWin; each with its own buses and AT-SPI), its display
server, and gedit started on it as a Wayland client."""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import pytest
from tests.desktop.conftest import gedit_argv, kill_session, wait_until_async

from roundhouse.config import DesktopSettings
from roundhouse.devices.contract import WindowInfo
from roundhouse.devices.linux.desktops.desktop import Desktop
from roundhouse.devices.linux.desktops.virtual import VirtualDesktop
from roundhouse.devices.linux.display.backends import BACKENDS, named, open_display
from roundhouse.devices.linux.display.base import DisplayServer, RouteRefused
from roundhouse.devices.linux.display.kde.kwin import NO_GPU_FIX

SESSIONS = tuple(backend.kind for backend in BACKENDS if backend.wayland)


def skip_unless_this_release_has(kind: str) -> None:
    """Skip, saying so, where the kind's compositor is not installed because this release
    has no package of it (labwc: Debian 13 has it, Debian 12 not). One that apt knows and
    `make test` failed to install is a failure, not a skip."""
    backend = named(kind)
    missing = backend.compositor.missing()
    if not missing:
        return
    lacking = [program for program in missing if not _release_has(program)]
    if lacking:
        pytest.skip(f"this release has no package of {', '.join(lacking)} ({kind})")
    pytest.fail(f"{', '.join(missing)} not installed: make test installs them")


def _release_has(package: str) -> bool:
    known = subprocess.run(["apt-cache", "show", package], capture_output=True, timeout=60)
    return known.returncode == 0


StartGedit = Callable[..., Awaitable[tuple[subprocess.Popen[bytes], WindowInfo]]]


@pytest.fixture(scope="module", params=SESSIONS)
def session(request: pytest.FixtureRequest) -> Iterator[Desktop]:
    """A virtual Wayland desktop of each kind in turn."""
    skip_unless_this_release_has(request.param)
    with VirtualDesktop(DesktopSettings(session=request.param)) as desktop:
        yield desktop


@pytest.fixture(scope="module")
def display(session: Desktop) -> Iterator[DisplayServer]:
    with open_display(session) as opened:
        yield opened


def screen_refusal(display: DisplayServer) -> str | None:
    """Why the session's compositor serves no screenshots, or None. KWin 6 without a GPU
    render node (Debian 13's KWin 6.3 on these machines) composites with QPainter and
    serves none: there, what needs the screen must be refused at once, with that reason."""
    try:
        display.screen.desktop()
    except RouteRefused as error:
        if error.fix != NO_GPU_FIX:
            raise
        return str(error)
    return None


@pytest.fixture
def screen(display: DisplayServer) -> None:
    """For a test that needs the screen: where the compositor serves none (see
    screen_refusal), the refusal is checked to name its cause, and the rest of the test,
    which cannot run on such a machine, is skipped with that reason."""
    why = screen_refusal(display)
    if why is not None:
        assert "KWin" in why and "/dev/dri/renderD" in why
        pytest.skip(f"this compositor serves no screenshots here: {why}")


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
                # labwc's windows come without a pid (wlr-foreign-toplevel gives none).
                if window.pid in (process.pid, None) and name in window.title:
                    if await asyncio.to_thread(display.windows.viewable, window.xid):
                        return window
            return None

        window = await wait_until_async(shown, 30, f"gedit's window for {name}")
        return process, await display.windows.activate(window.xid, timeout=10)

    yield start
    for process in started:
        kill_session(process)
