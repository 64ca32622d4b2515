"""Anthropic's finer computer actions on a real X11 desktop: a round of `--agent computer`
whose model is the fake Anthropic server (which answers only what the tool version declared
takes), its actions run by the desktop's own tools through XTest, each checked by what it
did on the desktop: where the pointer went, what was selected in a Qt line edit, which
keys the server saw held.

The session desktop is 1280x800, which Claude is shown as it is: the points of the script
are the desktop's (the coordinate map's scaling is tests/models/test_anthropic_client.py's).
"""

from __future__ import annotations

import asyncio
import base64
import io
import threading
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from PIL import Image, ImageChops, ImageStat
from tests.desktop.conftest import qt_app_argv
from tests.helpers import whole_text
from Xlib import XK  # type: ignore[import-untyped, unused-ignore]
from Xlib.display import Display  # type: ignore[import-untyped, unused-ignore]

from roundhouse.config import Settings
from roundhouse.core.commands import Command
from roundhouse.core.states import RoundState
from roundhouse.devices.base import LocalDispatcher
from roundhouse.devices.linux.atspi.client import AtspiClient
from roundhouse.devices.linux.desktops.desktop import Desktop
from roundhouse.devices.linux.tools import DesktopTools, desktop_registry
from roundhouse.engine.compose import compose_session
from roundhouse.engine.round import NoSnapshots
from roundhouse.engine.session import Session
from roundhouse.models.anthropic.fake import FakeAnthropic, Turn

KEY = "test-key"
DONE = (Turn(text="Done."), Turn(text="Done."))  # a FINISH questioned once is said again


@pytest.fixture(autouse=True)
def loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RH_LOOPBACK_ONLY", "1")
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


@asynccontextmanager
async def claude_on(
    tools: DesktopTools, server: FakeAnthropic, tmp_path: Path, model: str
) -> AsyncIterator[Session]:
    config = Settings.model_validate(
        {
            "logs": tmp_path / "logs",
            "workdir": tmp_path,
            "model": f"anthropic:{model}",
            "agent": "computer",
            "desktop": {"effect_grace": 0},
            "anthropic": {"base_url": server.base_url, "api_key": KEY, "max_retries": 1},
        }
    )
    dispatcher = LocalDispatcher(desktop_registry(tools))
    async with compose_session(config, dispatcher=dispatcher, snapshots=NoSnapshots()) as session:
        yield session


async def run_claude(
    tools: DesktopTools,
    tmp_path: Path,
    actions: Sequence[Sequence[dict[str, Any]]],
    model: str = "claude-sonnet-4-5",
) -> FakeAnthropic:
    """A round whose answers are `actions`, a turn each, then Done; the server, to read."""
    turns = [Turn(actions=tuple(step)) for step in actions]
    with FakeAnthropic([*turns, *DONE], key=KEY) as server:
        async with claude_on(tools, server, tmp_path, model) as session:
            outcome = await session.run_round("do as told")
    assert server.refusals == []  # every request was one the API takes
    assert outcome.state is RoundState.FINISH, outcome.result
    return server


def results(server: FakeAnthropic, request: int) -> list[dict[str, Any]]:
    """The tool_results a request sent, in order."""
    body: dict[str, Any] = server.received[request].body
    return [b for b in body["messages"][-1]["content"] if b["type"] == "tool_result"]


async def qt_name_field(tools: DesktopTools, text: str) -> tuple[str, tuple[int, ...]]:
    """The Qt window's "Your name" line edit holding `text`: its node id and rectangle."""
    registry = desktop_registry(tools)
    launched = await registry.call(
        Command(tool_name="launch_application", parameters={"name": " ".join(qt_app_argv())}),
        60,
    )
    assert launched.ok, launched.error
    listed = await registry.call(Command(tool_name="get_controls", parameters={}), 60)
    assert listed.ok and isinstance(listed.result, dict), listed.error
    field = next(c for c in listed.result["controls"] if c["name"] == "Your name")
    done = await registry.call(
        Command(tool_name="set_text", parameters={"label": field["label"], "text": text}), 60
    )
    assert done.ok, done.error
    rect = field["rect"]
    return field["id"], tuple(int(rect[side]) for side in ("left", "top", "right", "bottom"))


async def test_mouse_move_puts_the_pointer_where_asked(tools: DesktopTools, tmp_path: Path) -> None:
    await run_claude(tools, tmp_path, [[{"action": "mouse_move", "coordinate": [321, 234]}]])
    assert tools.input.position() == (321, 234)  # as the X server says


async def test_cursor_position_answers_where_the_pointer_is(
    tools: DesktopTools, tmp_path: Path
) -> None:
    await asyncio.to_thread(tools.input.move, 412, 333)
    server = await run_claude(tools, tmp_path, [[{"action": "cursor_position"}]])
    [result] = results(server, 1)
    assert result["content"][0] == {"type": "text", "text": "X=412,Y=333"}


async def test_triple_click_selects_the_whole_line(tools: DesktopTools, tmp_path: Path) -> None:
    field, (left, top, right, bottom) = await qt_name_field(tools, "alpha beta gamma")
    on_text = [left + 30, (top + bottom) // 2]  # "alpha" (Qt selects all on the text only)
    steps: list[list[dict[str, Any]]] = [
        [{"action": "triple_click", "coordinate": on_text}],
        [{"action": "key", "text": "BackSpace"}],
    ]
    await run_claude(tools, tmp_path, steps)
    assert isinstance(tools.tree, AtspiClient)
    assert await whole_text(tools.tree, field) == ""  # all of it was selected, and deleted


async def test_a_button_held_down_across_a_move_drags_a_selection(
    tools: DesktopTools, tmp_path: Path
) -> None:
    field, (left, top, right, bottom) = await qt_name_field(tools, "alpha beta gamma")
    row = (top + bottom) // 2
    steps: list[list[dict[str, Any]]] = [
        [{"action": "mouse_move", "coordinate": [right - 4, row]}],  # past the text's end
        [
            {"action": "left_mouse_down"},
            {"action": "mouse_move", "coordinate": [(left + right) // 2, row]},
            {"action": "mouse_move", "coordinate": [left + 2, row]},  # before its start
            {"action": "left_mouse_up"},
        ],
        [{"action": "type", "text": "Y"}],
    ]
    await run_claude(tools, tmp_path, steps)
    assert isinstance(tools.tree, AtspiClient)
    assert await whole_text(tools.tree, field) == "Y"  # the drag selected it all


async def test_a_click_with_shift_held_extends_the_selection(
    tools: DesktopTools, tmp_path: Path
) -> None:
    field, (left, top, right, bottom) = await qt_name_field(tools, "alpha beta gamma")
    row = (top + bottom) // 2
    steps: list[list[dict[str, Any]]] = [
        [{"action": "left_click", "coordinate": [right - 4, row]}],  # the caret at the end
        [{"action": "left_click", "coordinate": [left + 2, row], "text": "shift"}],
        [{"action": "type", "text": "W"}],
    ]
    await run_claude(tools, tmp_path, steps)
    assert isinstance(tools.tree, AtspiClient)
    assert await whole_text(tools.tree, field) == "W"


async def test_hold_key_keeps_the_key_down_for_its_duration(
    desktop: Desktop, tools: DesktopTools, tmp_path: Path
) -> None:
    seen: list[bool] = []
    stop = threading.Event()

    def watch() -> None:  # the server's keyboard, on a connection of its own
        display = Display(desktop.display)
        shift = display.keysym_to_keycode(XK.XK_Shift_L)
        while not stop.is_set():
            keys = display.query_keymap()
            seen.append(bool(keys[shift // 8] & (1 << (shift % 8))))
            stop.wait(0.05)
        display.close()

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        hold = {"action": "hold_key", "text": "shift", "duration": 1}
        await run_claude(tools, tmp_path, [[hold]])
    finally:
        stop.set()
        watcher.join()
    assert seen.count(True) >= 10  # down about a second (0.05 s a look)
    assert seen[-1] is False  # and released


async def test_zoom_answers_the_region_enlarged_to_the_display(
    tools: DesktopTools, tmp_path: Path
) -> None:
    await qt_name_field(tools, "zoom here")
    zoom = {"action": "zoom", "region": [0, 0, 640, 400]}
    server = await run_claude(tools, tmp_path, [[zoom]], model="claude-opus-4-5")
    [result] = results(server, 1)
    assert result["content"][0] == {"type": "text", "text": "the zoomed region"}
    zoomed, screen = (image(block) for block in result["content"][1:])
    assert zoomed.size == screen.size == (1280, 800)
    quarter = screen.crop((0, 0, 640, 400)).resize((1280, 800))
    difference = ImageStat.Stat(ImageChops.difference(zoomed, quarter)).mean
    assert max(difference) < 8  # the top-left quarter of the same screen


def image(block: dict[str, Any]) -> Image.Image:
    data = base64.b64decode(block["source"]["data"])
    with Image.open(io.BytesIO(data)) as opened:
        return opened.convert("RGB")
