"""The accessibility bus of a desktop dies: the next read says so, the one after connects
to the bus D-Bus starts again, and nothing hangs."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.desktop.conftest import QT_APP_TITLE, StartApp, qt_app_argv, wait_for_window

from roundhouse.config import DesktopSettings, Settings
from roundhouse.devices.linux.atspi.client import AtspiError
from roundhouse.devices.linux.desktops.desktop import Desktop
from roundhouse.devices.linux.desktops.virtual import VirtualDesktop
from roundhouse.devices.linux.tools import DesktopTools


@pytest.fixture
def own_desktop() -> Iterator[Desktop]:
    """A desktop of this test's own: its bus is killed, the session's must live on."""
    with VirtualDesktop(DesktopSettings(width=1024, height=768)) as started:
        yield started


def accessibility_bus_processes(desktop: Desktop) -> list[int]:
    """The bus launcher, the accessibility bus's dbus-daemon and the registry that serve
    this desktop (activated from its session bus, so they carry its address)."""
    assert desktop.bus_address is not None
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            name = (entry / "comm").read_text().strip()
            command = (entry / "cmdline").read_bytes()
            environ = (entry / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        ours = f"DBUS_SESSION_BUS_ADDRESS={desktop.bus_address}".encode() in environ
        if ours and (name.startswith("at-spi") or b"accessibility.conf" in command):
            found.append(int(entry.name))
    return found


async def test_a_dead_accessibility_bus_is_reported_then_replaced(
    own_desktop: Desktop, launch: StartApp
) -> None:
    process = launch(own_desktop, qt_app_argv())
    window = wait_for_window(own_desktop, pid=process.pid, title=QT_APP_TITLE)
    async with await DesktopTools.open(own_desktop, Settings()) as tools:
        assert tools.tree is not None
        before = await tools.tree.controls(window)
        assert "Press me" in [c.name for c in before.controls]

        killed = accessibility_bus_processes(own_desktop)
        assert killed, "no accessibility bus processes found for this desktop"
        for pid in killed:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)

        async with asyncio.timeout(30):  # nothing may hang
            with pytest.raises(AtspiError, match="connection was lost"):
                await tools.tree.controls(window)
            after = await tools.tree.controls(window)
        # A new bus (D-Bus starts one on demand) knows nothing of the running app, and
        # the note says why and what to do.
        assert not after.tree_available and after.note is not None
        assert "accessibility bus was restarted" in after.note
        assert "restart the application" in after.note
        assert set(accessibility_bus_processes(own_desktop)).isdisjoint(killed)
