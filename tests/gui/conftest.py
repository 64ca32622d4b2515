"""GUI rounds on a fresh virtual desktop per test: real Xvfb, AT-SPI, gedit and Qt."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from roundhouse.config import DesktopSettings, Settings
from roundhouse.core.events import Event
from roundhouse.core.user import NonInteractiveUser, UserChannel
from roundhouse.devices.base import Dispatcher, LocalDispatcher
from roundhouse.devices.linux.desktops.desktop import Desktop
from roundhouse.devices.linux.desktops.virtual import VirtualDesktop
from roundhouse.devices.linux.tools import DesktopTools, desktop_registry
from roundhouse.devices.shell import ShellTools
from roundhouse.engine.compose import compose_session
from roundhouse.engine.session import Session
from roundhouse.models.base import LanguageModel

QT_APP = Path(__file__).parents[1] / "desktop" / "qt_app.py"
QT_COMMAND = f"{sys.executable} {QT_APP}"


@pytest.fixture
def desktop() -> Iterator[Desktop]:
    with VirtualDesktop(DesktopSettings()) as started:
        yield started


GuiSession = Callable[..., AbstractAsyncContextManager[Session]]


@pytest.fixture
def gui_session(desktop: Desktop, tmp_path: Path) -> GuiSession:
    @asynccontextmanager
    async def open_session(
        user: UserChannel | None = None,
        events: list[Event] | None = None,
        dispatcher: Dispatcher | None = None,
        models: dict[str, LanguageModel] | None = None,
        **settings: Any,
    ) -> AsyncIterator[Session]:
        config = Settings.model_validate(
            {
                "logs": tmp_path / "logs",
                "workdir": tmp_path,
                "task": "gui",
                "agent": "host",
                **settings,
            }
        )
        observers = [events.append] if events is not None else []
        # The session's desktop is this test session's: its device is swapped in, as the
        # one seam compose_session offers for it.
        async with await DesktopTools.open(desktop, config) as tools:
            if dispatcher is None:
                extra = ShellTools(config).tools()
                dispatcher = LocalDispatcher(desktop_registry(tools, extra=extra))
            try:
                async with compose_session(
                    config,
                    user=user or NonInteractiveUser(assume_yes=False),
                    observers=observers,
                    dispatcher=dispatcher,
                    models=models,
                ) as session:
                    yield session
            finally:
                tools.launcher.kill_launched()

    return open_session
