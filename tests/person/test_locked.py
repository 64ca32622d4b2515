"""A locked screen is an outcome, not a place to type: with a real locker up (i3lock on
X11, swaylock on sway), a run FAILs naming it, and no action is run."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.desktop.conftest import kill_session, wait_until
from tests.person.conftest import KINDS, settings_for

from roundhouse.config import Settings
from roundhouse.core.commands import ResultStatus
from roundhouse.core.states import RoundState
from roundhouse.devices.base import LocalDispatcher
from roundhouse.devices.linux.desktops.desktop import Desktop
from roundhouse.devices.linux.desktops.virtual import VirtualDesktop
from roundhouse.devices.linux.display.backends import open_display
from roundhouse.devices.linux.tools import DesktopTools, desktop_registry, person_tools
from roundhouse.devices.shell import ShellTools
from roundhouse.engine.compose import compose_session

LOCKERS = {"x11": ["i3lock", "--nofork"], "sway": ["swaylock"]}


@pytest.fixture(params=KINDS)
def locked(request: pytest.FixtureRequest) -> Iterator[Desktop]:
    """A virtual desktop whose screen a real locker has locked."""
    with VirtualDesktop(settings_for(request.param).desktop) as desktop:
        locker = subprocess.Popen(
            LOCKERS[desktop.kind],
            env=desktop.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            with open_display(desktop) as display:
                wait_until(display.watch.blocked, 20, "the locker to lock the screen")
            yield desktop
        finally:
            kill_session(locker)


async def test_a_run_on_a_locked_screen_fails_naming_it_and_acts_not(
    locked: Desktop, tmp_path: Path
) -> None:
    config = Settings.model_validate(
        {
            "logs": tmp_path / "logs",
            "workdir": tmp_path,
            "task": "locked",
            "agent": "host",
            "desktop": {"session": locked.kind},
        }
    )
    async with await DesktopTools.open(locked, config) as tools:
        registry = desktop_registry(
            tools, extra=[*person_tools(tools), *ShellTools(config).tools()]
        )
        async with compose_session(config, dispatcher=LocalDispatcher(registry)) as session:
            outcome = await session.run_round("open gedit and type hello")
    assert outcome.state is RoundState.FAIL
    assert outcome.result is not None and "the screen is locked" in outcome.result
    acted = [
        action
        for step in outcome.steps
        for action in step.actions
        if action.result is not None
        and action.result.status is ResultStatus.SUCCESS
        and action.function not in ("run_shell", "wait")
    ]
    assert acted == []  # nothing was launched, clicked or typed
