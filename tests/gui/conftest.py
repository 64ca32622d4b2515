"""GUI rounds on a fresh virtual desktop per test: real Xvfb, AT-SPI, gedit and Qt."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from roundhouse.agents.user import NonInteractiveUser, UserChannel
from roundhouse.config import DesktopSettings, Settings
from roundhouse.core.events import Event, EventBus
from roundhouse.core.states import AgentKind
from roundhouse.devices.base import Dispatcher, LocalDispatcher
from roundhouse.devices.linux.desktops.desktop import Desktop, VirtualDesktop
from roundhouse.devices.linux.tools import DesktopTools, desktop_registry
from roundhouse.devices.shell import ShellTools
from roundhouse.engine.compose import compose_session
from roundhouse.engine.session import Session
from roundhouse.logs.store import LogStore
from roundhouse.models import ModelPool
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
            {"logs": tmp_path / "logs", "workdir": tmp_path, "task": "gui", **settings}
        )
        bus = EventBus()
        if events is not None:
            bus.subscribe(events.append)
        async with await DesktopTools.open(desktop, config) as tools:
            if dispatcher is None:
                extra = ShellTools(config).tools()
                dispatcher = LocalDispatcher(desktop_registry(tools, extra=extra))
            session = compose_session(
                config,
                kind=AgentKind.HOST,
                store=LogStore.create(config.logs, config.task),
                dispatcher=dispatcher,
                user=user or NonInteractiveUser(assume_yes=False),
                events=bus,
                models=ModelPool(config, models),
            )
            try:
                yield session
            finally:
                await session.models.close()
                tools.launcher.kill_launched()

    return open_session
