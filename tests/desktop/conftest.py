"""Fixtures for tests that drive real applications on a real (virtual) desktop.

`desktop` is one Xvfb + buses + openbox for the whole session; `launch` starts an app on
it and kills it after the test; the wait helpers poll instead of sleeping a fixed time.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from pathlib import Path
from typing import Protocol, TypeVar

import pytest

from roundhouse.config import DesktopSettings
from roundhouse.devices.contract import WindowInfo
from roundhouse.devices.linux.desktops.desktop import Desktop
from roundhouse.devices.linux.desktops.virtual import VirtualDesktop
from roundhouse.devices.linux.display.x11.windows import list_windows

T = TypeVar("T")
QT_APP = Path(__file__).with_name("qt_app.py")
QT_APP_TITLE = "Roundhouse Qt test"


@pytest.fixture(scope="session")
def desktop() -> Iterator[Desktop]:
    with VirtualDesktop(DesktopSettings(width=1280, height=800)) as started:
        yield started


class StartApp(Protocol):
    def __call__(
        self, desktop: Desktop, argv: Sequence[str], cwd: Path | None = None
    ) -> subprocess.Popen[bytes]: ...


@pytest.fixture
def launch() -> Iterator[StartApp]:
    """launch(desktop, argv) starts an app with the desktop's environment, in a session of its
    own; at teardown the whole session is killed (LibreOffice's launcher forks soffice.bin,
    which would otherwise outlive the test)."""
    started: list[subprocess.Popen[bytes]] = []

    def start(
        desktop: Desktop, argv: Sequence[str], cwd: Path | None = None
    ) -> subprocess.Popen[bytes]:
        process = subprocess.Popen(
            desktop.app_command(argv),
            env=desktop.env,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        started.append(process)
        return process

    yield start
    for process in started:
        kill_session(process)


def kill_session(process: subprocess.Popen[bytes], timeout: float = 10.0) -> None:
    """Kill every process of `process`'s session and wait until none is left. (A pid stays
    reserved while it names a live process group, so the group cannot be another's.)"""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGCONT)  # a stopped process dies only once continued
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    wait_until(lambda: not session_members(process.pid), timeout, "the session to end")


def session_members(sid: int) -> list[int]:
    """Pids of the live (not zombie) processes in session `sid`."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue  # it ended while we looked
        # pid (comm) state ppid pgrp session ...: comm may hold spaces and parentheses
        fields = stat[stat.rindex(")") + 2 :].split()
        if fields[0] != "Z" and int(fields[3]) == sid:
            members.append(int(entry.name))
    return members


def qt_app_argv() -> list[str]:
    return [sys.executable, str(QT_APP)]


def gedit_argv(*files: str) -> list[str]:
    # --standalone: gedit is D-Bus activatable and would hand a second start to the first.
    # A test that acts on gedit's window waits for a title naming its file (see
    # wait_for_window): gedit maps the window before it opens the file, then presents the
    # window again once the document is loaded, taking the focus back from whatever was
    # activated in between. That was the cause of test_activate's flake under load.
    return ["gedit", "--standalone", *files]


# A first start of LibreOffice shows a "Tip of the Day" dialog (a second window of the same
# process) that takes the focus; a profile saying it was shown before prevents it.
OFFICE_SETTINGS = """<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry"
 xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<item oor:path="/org.openoffice.Office.Common/Misc">
 <prop oor:name="ShowTipOfTheDay" oor:op="fuse"><value>false</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Misc">
 <prop oor:name="FirstRun" oor:op="fuse"><value>false</value></prop></item>
<item oor:path="/org.openoffice.Setup/Office">
 <prop oor:name="FirstStartWizardCompleted" oor:op="fuse"><value>true</value></prop></item>
</oor:items>
"""


def calc_argv(profile: Path, *files: Path) -> list[str]:
    """LibreOffice Calc with a throw-away profile in `profile` (a fresh directory per test:
    a killed instance leaves its profile locked). The GTK 3 plugin is the one whose tree
    reaches AT-SPI (the "gen" plugin exposes nothing)."""
    user = profile / "user"
    user.mkdir(parents=True, exist_ok=True)
    (user / "registrymodifications.xcu").write_text(OFFICE_SETTINGS)
    return [
        "env",
        "SAL_USE_VCLPLUGIN=gtk3",
        "soffice",
        f"-env:UserInstallation={profile.as_uri()}",
        "--calc",
        "--norestore",
        "--nologo",
        *map(str, files),
    ]


def wait_until(
    predicate: Callable[[], T | None], timeout: float = 20.0, what: str = "condition"
) -> T:
    """Poll until predicate() returns something truthy; fail the test after `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(0.05)


async def wait_until_async(
    predicate: Callable[[], Awaitable[T | None]], timeout: float = 20.0, what: str = "condition"
) -> T:
    deadline = time.monotonic() + timeout
    while True:
        value = await predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout:g} s waiting for {what}")
        await asyncio.sleep(0.05)


def wait_for_window(
    desktop: Desktop,
    pid: int | None = None,
    title: str | None = None,
    timeout: float = 20.0,
) -> WindowInfo:
    """The first top-level window of `pid` whose title contains `title`."""

    def find() -> WindowInfo | None:
        for window in list_windows(desktop.display):
            if pid is not None and window.pid != pid:
                continue
            if title is not None and title not in window.title:
                continue
            return window
        return None

    return wait_until(find, timeout, f"a window (pid={pid}, title={title!r})")


# --- screenshots/input/windows fixtures ---
# Connections to the session desktop for the screenshot, input and window tests. Apps
# these tests start through a Launcher are killed when the test ends.

from collections.abc import AsyncIterator  # noqa: E402

from roundhouse.config import Settings  # noqa: E402
from roundhouse.devices.linux.apps.launch import Launcher  # noqa: E402
from roundhouse.devices.linux.display.x11.input import XInput  # noqa: E402
from roundhouse.devices.linux.display.x11.screen import Screen  # noqa: E402
from roundhouse.devices.linux.display.x11.windows import WindowManager  # noqa: E402
from roundhouse.devices.linux.tools import DesktopTools  # noqa: E402


@pytest.fixture
def screen(desktop: Desktop) -> Iterator[Screen]:
    with Screen(desktop.display) as opened:
        yield opened


@pytest.fixture
def xinput(desktop: Desktop) -> Iterator[XInput]:
    with XInput(desktop.display) as opened:
        yield opened


@pytest.fixture
def windows(desktop: Desktop) -> Iterator[WindowManager]:
    with WindowManager(desktop.display) as manager:
        yield manager


@pytest.fixture
def launcher(desktop: Desktop, windows: WindowManager) -> Iterator[Launcher]:
    with Launcher(windows, desktop.env) as opened:
        yield opened
        opened.kill_launched()


@pytest.fixture
async def tools(desktop: Desktop) -> AsyncIterator[DesktopTools]:
    """The device tools on the session desktop; apps they launch are killed afterwards."""
    opened = await DesktopTools.open(desktop, Settings())
    async with opened:
        yield opened
        opened.launcher.kill_launched()
