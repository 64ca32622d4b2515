"""sleep_time is waited once at each subtask end, by the round (engine/round.py; its own test
is in tests/test_round.py). The desktop's waits, the settle after each action and the wait(0)
the round settles with after its sleep, do not wait it again: on the fake display, so that
what is waited is all that is asked."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from roundhouse.config import Settings
from roundhouse.testing.display import FakeDesktop
from roundhouse.testing.tools import fake_tools

SLEEP_TIME = 0.37  # seconds nothing else waits


async def test_the_desktops_own_waits_do_not_wait_sleep_time_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    slept: list[float] = []
    real_sleep = asyncio.sleep

    async def recording_sleep(seconds: float, *args: Any) -> Any:
        if seconds == SLEEP_TIME:
            slept.append(seconds)
            return None
        return await real_sleep(seconds, *args)

    fake = FakeDesktop(size=(800, 600))
    fake.open_window("Notes", "notes")
    settings = Settings.model_validate({"sleep_time": SLEEP_TIME, "desktop": {"effect_grace": 0}})
    async with fake_tools(fake, settings) as tools:
        monkeypatch.setattr(asyncio, "sleep", recording_sleep)
        waited = await tools.wait(0)  # the round's settle, after its own sleep
        clicked = await tools.click_coordinates(20, 20)  # an action, settled after
    assert "settle_ms" in waited and "settle_ms" in clicked  # both settled
    assert slept == []
