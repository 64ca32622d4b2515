"""What the computer-agent round tests share: a session on a fake desktop whose model is a
fake vendor server (any protocol), and a gedit-like editor that records what ctrl+s saved."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from roundhouse.config import Settings
from roundhouse.devices.base import LocalDispatcher
from roundhouse.devices.contract import Rect
from roundhouse.devices.linux.tools import desktop_registry
from roundhouse.engine.compose import compose_session
from roundhouse.engine.round import NoSnapshots
from roundhouse.engine.session import Session
from roundhouse.testing.display import FakeControl, FakeDesktop
from roundhouse.testing.tools import fake_tools


@asynccontextmanager
async def computer_session(
    tmp_path: Path, fake: FakeDesktop, spec: str, vendor: dict[str, Any], **settings: Any
) -> AsyncIterator[Session]:
    """A session whose `--agent computer` model is `spec` ("anthropic:claude-sonnet-4-5"),
    `vendor` its settings section ({"anthropic": {"base_url": ..., "api_key": ...}}); any
    setting may be given (a `model` wins over `spec`)."""
    config = Settings.model_validate(
        {
            "logs": tmp_path / "logs",
            "workdir": tmp_path,
            "model": spec,
            "agent": "computer",
            "desktop": {"effect_grace": 0},
            **vendor,
            **settings,
        }
    )
    async with fake_tools(fake, config) as tools:
        async with compose_session(
            config, dispatcher=LocalDispatcher(desktop_registry(tools)), snapshots=NoSnapshots()
        ) as session:
            yield session


def editor(fake: FakeDesktop) -> tuple[FakeControl, list[str]]:
    """A gedit window with one text field; what ctrl+s saved, in order."""
    field = FakeControl.text_field("Text", Rect(left=600, top=400, right=1300, bottom=700))
    fake.open_window("Untitled - gedit", "gedit", controls=[field])
    saved: list[str] = []
    fake.on_keys("ctrl+s", lambda: saved.append(field.text))
    return field, saved
