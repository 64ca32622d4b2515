"""GNOME Shell's readiness (display/gnome/backend.py `GnomeShell.ready`) when the Shell's
main loop is held up: the real gnome-shell of a virtual desktop, stopped with SIGSTOP
while it is asked. Held up past the deadline, the start fails naming what the Shell did not
answer, with the last lines the Shell wrote; held up for less, it is ready, the questions
it did not answer in time asked again."""

from __future__ import annotations

import logging
import os
import signal
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.helpers import tagged
from tests.wayland.conftest import skip_unless_this_release_has

from roundhouse.config import DesktopSettings
from roundhouse.devices.linux.desktops.desktop import Desktop
from roundhouse.devices.linux.desktops.reaper import TAG_ENV
from roundhouse.devices.linux.desktops.virtual import VirtualDesktop
from roundhouse.devices.linux.display.backends import named
from roundhouse.devices.linux.display.compositor import READY_TIMEOUT, CompositorUnavailable
from roundhouse.devices.linux.display.gnome import shell


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
