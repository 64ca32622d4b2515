"""GNOME Shell's readiness (display/gnome/backend.py `GnomeShell.ready`) when the Shell's
main loop is held up: the real gnome-shell of a virtual desktop, stopped with SIGSTOP
while it is asked. Held up past the deadline, the start fails naming what the Shell did not
answer, with the last lines the Shell wrote; held up for less, it is ready, the questions
it did not answer in time asked again."""

from __future__ import annotations

import functools
import logging
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.desktop.conftest import wait_until
from tests.helpers import tagged
from tests.wayland.conftest import skip_unless_this_release_has

from roundhouse.config import DesktopSettings
from roundhouse.devices.linux.desktops.desktop import Desktop
from roundhouse.devices.linux.desktops.reaper import TAG_ENV
from roundhouse.devices.linux.desktops.virtual import VirtualDesktop
from roundhouse.devices.linux.display.backends import named, open_display
from roundhouse.devices.linux.display.base import DisplayUnavailable
from roundhouse.devices.linux.display.compositor import (
    READY_TIMEOUT,
    CompositorUnavailable,
    forks_never_execed,
)
from roundhouse.devices.linux.display.gnome import backend, cast, shell
from roundhouse.devices.linux.display.gnome.backend import DBUS_DAEMON, end_stuck_forks
from roundhouse.devices.linux.display.wayland.dbus import SyncBus


@pytest.fixture(scope="module", params=[False, True], ids=["unsafe", "shipped"])
def gnome(request: pytest.FixtureRequest) -> Iterator[Desktop]:
    """A virtual GNOME desktop in unsafe mode (Eval), and one as shipped (no Eval)."""
    skip_unless_this_release_has("gnome")
    with VirtualDesktop(DesktopSettings(session="gnome", shipped=request.param)) as desktop:
        yield desktop


def shell_pid(desktop: Desktop) -> int:
    (pid,) = (
        pid
        for pid in tagged(desktop.env[TAG_ENV])
        if Path(f"/proc/{pid}/comm").read_text().strip() == "gnome-shell"
    )
    return pid


def test_a_shell_that_does_not_answer_fails_the_start_naming_what(gnome: Desktop) -> None:
    pid = shell_pid(gnome)
    os.kill(pid, signal.SIGSTOP)
    try:
        with pytest.raises(CompositorUnavailable, match="GNOME Shell did not answer") as raised:
            named("gnome").compositor.ready(gnome.env, 2.0)
    finally:
        os.kill(pid, signal.SIGCONT)
    said = str(raised.value)
    assert "Overview" in said
    # What the Shell last wrote goes with it, from its log in the desktop's runtime folder.
    assert f"the last it wrote ({gnome.env['XDG_RUNTIME_DIR']}/gnome-shell.log)" in said
    # Running again, it answers: what it was asked while stopped does no harm.
    named("gnome").compositor.ready(gnome.env, READY_TIMEOUT)


def test_a_shell_held_up_for_a_while_is_ready_once_it_answers(
    gnome: Desktop, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(shell, "ATTEMPT", 0.5)  # so that it is asked again while stopped
    pid = shell_pid(gnome)
    os.kill(pid, signal.SIGSTOP)
    resume = threading.Timer(2.0, os.kill, (pid, signal.SIGCONT))
    resume.start()
    try:
        with caplog.at_level(logging.INFO, logger=shell.__name__):
            named("gnome").compositor.ready(gnome.env, READY_TIMEOUT)
    finally:
        resume.cancel()
        os.kill(pid, signal.SIGCONT)
    assert any("has not answered" in record.message for record in caplog.records)


def test_the_shells_process_is_found_through_its_bus_and_left_alone_when_nothing_is_stuck(
    gnome: Desktop, caplog: pytest.LogCaptureFixture
) -> None:
    """What frees a Shell waiting on its own fork asks the bus which process the Shell is:
    the gnome-shell of this desktop; with no fork of it stuck, it ends nothing."""
    bus = SyncBus(gnome.env["DBUS_SESSION_BUS_ADDRESS"], 10)
    try:
        (pid,) = bus.call(*DBUS_DAEMON, "GetConnectionUnixProcessID", "s", ["org.gnome.Shell"])
        assert pid == shell_pid(gnome)
        with caplog.at_level(logging.WARNING):
            end_stuck_forks(bus)
    finally:
        bus.close()
    assert not [record for record in caplog.records if "never exec'd" in record.message]
    named("gnome").compositor.ready(gnome.env, READY_TIMEOUT)  # the Shell is as it was


def test_a_fork_that_never_execs_is_told_from_one_that_did(tmp_path: Path) -> None:
    """A process that forks twice: one child sleeps where it forked (as GNOME Shell 43's
    did, deadlocked before exec: GNOME issue 6698), the other execs sleep."""
    script = (
        "import os, time\n"
        "if os.fork() == 0:\n    time.sleep(60)\n    os._exit(0)\n"
        "if os.fork() == 0:\n    os.execvp('sleep', ['sleep', '60'])\n"
        "time.sleep(60)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", script])
    try:
        wait_until(lambda: _execed(_children(parent.pid)), 10, "two children, one exec'd")
        stuck = forks_never_execed(parent.pid)
        [execed] = [pid for pid in _children(parent.pid) if pid not in stuck]
        assert len(stuck) == 1 and Path(f"/proc/{execed}/comm").read_text().strip() == "sleep"
    finally:
        for pid in _children(parent.pid):
            os.kill(pid, signal.SIGKILL)
        parent.kill()
        parent.wait()
    assert forks_never_execed(parent.pid) == []  # a process gone has none


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def _execed(children: list[int]) -> bool:
    """Whether there are two, and one runs sleep already (its exec is done)."""
    names = [Path(f"/proc/{pid}/comm").read_text().strip() for pid in children]
    return len(names) == 2 and "sleep" in names


def test_a_screen_cast_that_sends_no_frame_falls_back_to_the_shells_screenshots(
    gnome: Desktop, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    """Seen on GNOME 48 under the suite's load: two pipelines, no frame. Where the Shell
    serves screenshots (unsafe mode) the display still opens, its screenshots the Shell's;
    as shipped it cannot, and the display is refused naming the cast."""
    monkeypatch.setattr(cast, "FIRST_FRAME_QUIET", 0.3)
    monkeypatch.setattr(cast, "FIRST_FRAME_TIMEOUT", 0.5)
    silent = functools.partial(cast.CastScreen, argv=["sleep", "30"])  # a stream with no frame
    monkeypatch.setattr(backend, "CastScreen", silent)
    if request.node.callspec.params["gnome"]:  # as shipped
        with pytest.raises(DisplayUnavailable, match="screen cast sent no frame"):
            with open_display(gnome):
                pass
        return
    with open_display(gnome) as display:
        assert display.routes["screenshots"] == backend.SHELL_SCREENSHOT.name
        shot = display.screen.desktop()
    assert shot.size == (gnome.width, gnome.height) and shot.getextrema() != (
        (0, 0),
        (0, 0),
        (0, 0),
    )
