"""LibreOffice on a virtual desktop starts straight into its document: no tip of the day,
no first-start wizard, in a profile that lives and goes with the desktop."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.desktop.conftest import StartApp, wait_for_window

from roundhouse.config import DesktopSettings
from roundhouse.devices.linux.desktops.desktop import Desktop
from roundhouse.devices.linux.desktops.virtual import VirtualDesktop
from roundhouse.devices.linux.display.x11.windows import list_windows

pytestmark = pytest.mark.skipif(
    shutil.which("localc") is None, reason="LibreOffice Calc is installed by `make system-deps`"
)


def _kill_office(marker: str) -> None:
    """soffice.bin is a child of the launcher script's process: end every process started
    with this profile, and only those."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            if marker.encode() in (entry / "cmdline").read_bytes():
                os.kill(int(entry.name), signal.SIGKILL)


def _office_cpu(marker: str) -> int | None:
    """The CPU time (clock ticks) soffice.bin of this profile has used, None before it runs."""
    for entry in Path("/proc").iterdir():
        with contextlib.suppress(OSError):
            if entry.name.isdigit() and marker.encode() in (entry / "cmdline").read_bytes():
                if (entry / "comm").read_text().strip() == "soffice.bin":
                    fields = (entry / "stat").read_text().rpartition(")")[2].split()
                    return int(fields[11]) + int(fields[12])  # utime + stime
    return None


def _wait_idle(marker: str, quiet: float = 1.0, timeout: float = 60.0) -> None:
    """Until soffice.bin has used no CPU for `quiet` seconds; fails after `timeout`."""
    deadline = time.monotonic() + timeout
    used, since = _office_cpu(marker), time.monotonic()
    while time.monotonic() - since < quiet:
        assert time.monotonic() < deadline, f"soffice.bin still busy after {timeout:g} s: {used}"
        time.sleep(0.1)
        now = _office_cpu(marker)
        if now != used:
            used, since = now, time.monotonic()


@pytest.fixture
def first_start(request: pytest.FixtureRequest) -> Iterator[Desktop]:
    """A virtual desktop of this test's own, as a user's first start has: no LibreOffice
    of an earlier test on it (the full suite's shared desktop had one whose window was
    still listed, and whose instance kept a new one from opening in time)."""
    with VirtualDesktop(DesktopSettings(width=1280, height=800)) as started:
        yield started


@pytest.fixture
def office_profile(first_start: Desktop) -> Iterator[str]:
    profile = Path(first_start.env["XDG_RUNTIME_DIR"]) / "libreoffice-profile"
    yield profile.as_uri()
    _kill_office(profile.as_uri())
    # Killed with a document open, it would start the next test with Document Recovery.
    shutil.rmtree(profile, ignore_errors=True)


@pytest.mark.parametrize(
    ("program", "title"), [("localc", "LibreOffice Calc"), ("lowriter", "LibreOffice Writer")]
)
def test_calc_and_writer_start_without_first_start_dialogs(
    first_start: Desktop, launch: StartApp, office_profile: str, program: str, title: str
) -> None:
    desktop = first_start
    if shutil.which(program) is None:
        pytest.skip(f"{program} is installed by `make system-deps`")
    command = desktop.app_command([program])
    assert f"-env:UserInstallation={office_profile}" in command
    # No splash: it would be the first new window, taken for the document's.
    assert "--nologo" in command
    launch(desktop, [program])
    document = wait_for_window(desktop, title=title, timeout=90)
    # The tip of the day opens a moment after the document window, when it opens at all:
    # from an event LibreOffice posts as the document loads. Once soffice.bin has used no
    # CPU for a while, its start is over and the event handled.
    _wait_idle(office_profile)
    titles = [window.title for window in list_windows(desktop.display)]
    assert not any("Tip" in title or "Welcome" in title for title in titles), titles
    assert document.title.startswith("Untitled")


def test_the_users_own_desktop_keeps_the_users_profile(desktop: Desktop) -> None:
    users = Desktop(desktop.display, dict(desktop.env), desktop.width, desktop.height, False)
    assert not any("UserInstallation" in arg for arg in users.app_command(["localc"]))
    chosen = desktop.app_command(["soffice", "-env:UserInstallation=file:///tmp/mine", "--calc"])
    assert [a for a in chosen if "UserInstallation" in a] == [
        "-env:UserInstallation=file:///tmp/mine"
    ]
