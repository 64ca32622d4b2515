"""Clicks at scale (issue 45): on a two-monitor sway desktop, the second monitor at scale
1.5, a pixel click from each computer-use family, at the point its model sees a control on
the screenshot it was sent (shrunk to that family's size), lands on that control: gedit's
"Open" on the second monitor opens its file chooser. Each model runs through its real
client against its rejecting fake: Claude, OpenAI's preview, Gemini (0-999), UI-TARS-1.5
(pixels of the smart-resized image) and Qwen3-VL (0-999 over a factor-32 image)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.desktop.conftest import wait_until_async
from tests.person.conftest import Apps, move_to, settings_for

from roundhouse.config import Settings
from roundhouse.core.states import RoundState
from roundhouse.devices.base import LocalDispatcher
from roundhouse.devices.contract import Control, Rect
from roundhouse.devices.linux.desktops.desktop import Desktop
from roundhouse.devices.linux.desktops.virtual import VirtualDesktop
from roundhouse.devices.linux.tools import DesktopTools, desktop_registry
from roundhouse.engine.compose import compose_session
from roundhouse.engine.round import NoSnapshots
from roundhouse.models.anthropic.fake import FakeAnthropic
from roundhouse.models.anthropic.fake import Turn as ClaudeTurn
from roundhouse.models.computer.screen import ScreenMap, screen_map_for
from roundhouse.models.gemini.fake import Call as GeminiCall
from roundhouse.models.gemini.fake import FakeGemini
from roundhouse.models.gemini.fake import Turn as GeminiTurn
from roundhouse.models.local.fake import FakeLocal
from roundhouse.models.local.fake import Turn as LocalTurn
from roundhouse.models.openai_computer.fake import FakeOpenAIComputer
from roundhouse.models.openai_computer.fake import Turn as OpenAITurn

KEY = "test-key"


@pytest.fixture(scope="module")
def sway_two_monitors() -> Iterator[Desktop]:
    with VirtualDesktop(settings_for("sway", monitors=2).desktop) as started:
        yield started


@pytest.fixture(autouse=True)
def loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RH_LOOPBACK_ONLY", "1")


# Each family's screenshot target and grid (models/computer/screen.py).
TARGETS: dict[str, tuple[str, int | None]] = {
    "anthropic": ("anthropic", None),
    "openai": ("openai", None),
    "gemini": ("gemini", 1000),
    "uitars": ("qwen25", None),
    "qwen3": ("qwen3", 1000),
}


def scripted(family: str, point: tuple[int, int]) -> tuple[Any, dict[str, Any]]:
    """The family's fake, scripted to click at `point` and then finish, and its settings."""
    x, y = point
    if family == "anthropic":
        click = {"action": "left_click", "coordinate": [x, y]}
        fake = FakeAnthropic([ClaudeTurn(actions=(click,)), ClaudeTurn(text="clicked")], key=KEY)
        return fake, {"model": "anthropic:claude-sonnet-4-5", "anthropic": {"api_key": KEY}}
    if family == "openai":
        action = {"type": "click", "x": x, "y": y, "button": "left"}
        fake = FakeOpenAIComputer([OpenAITurn(action=action), OpenAITurn(text="clicked")], key=KEY)
        return fake, {"model": "openai-computer:computer-use-preview", "openai": {"api_key": KEY}}
    if family == "gemini":
        call = GeminiCall("click_at", {"x": x, "y": y})
        fake = FakeGemini([GeminiTurn(calls=(call,)), GeminiTurn(text="clicked")], key=KEY)
        model = "gemini-2.5-computer-use-preview-10-2025"
        return fake, {"model": f"gemini:{model}", "gemini": {"api_key": KEY}}
    if family == "uitars":
        turns = [
            LocalTurn(text=f"Thought: Open.\nAction: click(start_box='({x},{y})')"),
            LocalTurn(text="Thought: Done.\nAction: finished(content='clicked')"),
        ]
        return FakeLocal(turns, key=KEY), {
            "model": "uitars:ui-tars-1.5-7b", "openai": {"api_key": KEY},
        }  # fmt: skip
    said = [
        {"action": "left_click", "coordinate": [x, y]},
        {"action": "answer", "text": "clicked"},
    ]
    bodies = [json.dumps({"name": "computer_use", "arguments": a}) for a in said]
    turns = [LocalTurn(text=f"<tool_call>\n{body}\n</tool_call>") for body in bodies]
    return FakeLocal(turns, key=KEY), {
        "model": "qwen-vl:qwen3-vl-8b-instruct", "openai": {"api_key": KEY},
    }  # fmt: skip


@pytest.mark.parametrize("family", list(TARGETS))
async def test_a_pixel_click_lands_on_the_control_of_the_scaled_monitor(
    family: str, sway_two_monitors: Desktop, apps: Apps, tmp_path: Path
) -> None:
    desktop = sway_two_monitors
    base = settings_for("sway", monitors=2)
    async with await DesktopTools.open(desktop, base) as tools:
        window = await apps.start(desktop, tools, ["gedit", "--standalone"], "Untitled")
        second = tools.screen.monitors()[1]
        assert second.scale == 1.5
        window = await move_to(desktop, tools, window.xid, second)
        listed = await tools.get_controls(window.xid)
        opening = next(
            c for c in (Control.model_validate(c) for c in listed["controls"]) if c.name == "Open"
        )
        assert second.rect.contains(opening.rect)
        whole = await tools.capture_desktop_screenshot()
        region = Rect(*whole["rect"])
        pixels = (whole["width"], whole["height"])
        target, grid = TARGETS[family]
        screen: ScreenMap = screen_map_for(region, pixels, target, grid=grid)
        x, y = screen.to_model(*opening.rect.center)
        fake, model = scripted(family, (round(x), round(y)))
        with fake:
            section = next(key for key in model if key != "model")
            model[section]["base_url"] = fake.base_url
            config = Settings.model_validate(
                {
                    **base.model_dump(),
                    "logs": tmp_path / "logs",
                    "workdir": tmp_path,
                    "agent": "computer",
                    **model,
                }
            )
            async with compose_session(
                config, dispatcher=LocalDispatcher(desktop_registry(tools)), snapshots=NoSnapshots()
            ) as session:
                outcome = await session.run_round("open a file in gedit")
            refusals = fake.refusals
        assert refusals == []
        assert outcome.state is RoundState.FINISH

        async def chooser() -> bool:
            windows = await asyncio.to_thread(tools.windows.list_windows)
            return any(w.pid == window.pid and w.xid != window.xid for w in windows)

        await wait_until_async(chooser, 10, "gedit's file chooser, from the model's click")
        await tools.press_keys("Escape")
