"""An application whose bridge offers its own socket (gedit: at-spi2-atk) is called there,
not through the bus daemon: what is read is the same, and a killed or stopped application
is still an error, never a hang nor a lost bus."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import AsyncIterator

import pytest
from tests.desktop.conftest import StartApp, gedit_argv, wait_for_window, wait_until_async

from roundhouse.bench.setup import held_still
from roundhouse.devices.contract import ControlList, WindowInfo
from roundhouse.devices.linux.atspi.bus import PeerBus
from roundhouse.devices.linux.atspi.client import AtspiClient, AtspiTimeout, WindowGone
from roundhouse.devices.linux.desktops.desktop import Desktop


@pytest.fixture
async def client(desktop: Desktop) -> AsyncIterator[AtspiClient]:
    async with AtspiClient() as connected:
        await connected.connect(desktop)
        yield connected


async def _gedit(
    desktop: Desktop, launch: StartApp, client: AtspiClient
) -> tuple[subprocess.Popen[bytes], WindowInfo, ControlList]:
    """gedit started, its window, and its controls once its buttons are read."""
    process = launch(desktop, gedit_argv())
    window = wait_for_window(desktop, pid=process.pid)

    async def ready() -> ControlList | None:
        listed = await client.controls(window)
        return listed if any(c.role == "push button" for c in listed.controls) else None

    return process, window, await wait_until_async(ready, what="gedit's buttons")


def _seen(listed: ControlList) -> list[tuple[str, str, str, object]]:
    return [(c.id, c.role, c.name, c.rect) for c in listed.controls]


async def test_an_app_is_read_on_its_own_socket_and_reads_the_same(
    desktop: Desktop, launch: StartApp, client: AtspiClient
) -> None:
    _, window, _ = await _gedit(desktop, launch, client)
    await held_still(client, window)  # gedit's header bar fills in after its first buttons
    direct = await client.controls(window)
    frame = await client.find_frame(window)
    assert frame is not None
    peer = client.bus.direct[frame.app]
    assert isinstance(peer, PeerBus) and peer.connected

    async with AtspiClient() as through_bus:
        await through_bus.connect(desktop)
        through_bus.bus.direct[frame.app] = None  # asked before, offered none: the bus
        by_bus = await through_bus.controls(window)
        assert through_bus.bus.direct == {frame.app: None}
        again = await client.controls(window)
    assert _seen(by_bus) == _seen(again) == _seen(direct)


async def test_a_killed_app_read_directly_is_gone_and_the_bus_is_kept(
    desktop: Desktop, launch: StartApp, client: AtspiClient
) -> None:
    process, window, _ = await _gedit(desktop, launch, client)
    process.kill()
    process.wait()
    with pytest.raises(WindowGone):
        await client.controls(window)
    assert client.bus.connected  # the bus was not lost, only the application


async def test_a_stopped_app_read_directly_times_out(
    desktop: Desktop, launch: StartApp, client: AtspiClient
) -> None:
    process, window, listed = await _gedit(desktop, launch, client)
    frame = await client.find_frame(window)
    assert frame is not None and client.bus.direct[frame.app] is not None
    client.bus.timeout = 0.5  # only now: a loaded machine may stall a live app that long
    os.kill(process.pid, signal.SIGSTOP)
    try:
        with pytest.raises(AtspiTimeout, match="did not answer"):
            await client.states(listed.controls[0].id)
        with pytest.raises(AtspiTimeout):
            await client.controls(window)
    finally:
        os.kill(process.pid, signal.SIGCONT)
    client.bus.timeout = 3.0
    again = await client.controls(window)  # it answers again
    assert listed.controls[0].id in [c.id for c in again.controls]
