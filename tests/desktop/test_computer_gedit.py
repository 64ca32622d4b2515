"""The end-to-end command of issue 45: `roundhouse run ... --model SPEC --agent computer
--yes` on a real Xvfb desktop with gedit open saves the file, for
`anthropic:claude-sonnet-4-5`, `openai-computer:computer-use-preview` and
`uitars:ui-tars-1.5-7b`, each against the fake of its protocol (ANTHROPIC_BASE_URL;
OPENAI_BASE_URL; for UI-TARS, a fake vLLM at OPENAI_BASE_URL and
ROUNDHOUSE_OPENAI__BASE_URL), which checks every request as the API would: headers or key,
tool version, the display declared against the screenshot sent (for UI-TARS, an image its
processor takes as it is), every call answered by its id, and (OpenAI) the safety check
acknowledged under --yes. The desktop is 1920x1080 (X11, and sway), so the screenshot is shrunk for
each and the scripted click goes through the coordinate map."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.desktop.conftest import StartApp, gedit_argv, wait_until_async

from roundhouse.config import DesktopSettings, Settings
from roundhouse.devices.contract import Rect, WindowInfo
from roundhouse.devices.linux.desktops.desktop import Desktop
from roundhouse.devices.linux.desktops.virtual import VirtualDesktop
from roundhouse.devices.linux.tools import DesktopTools
from roundhouse.models.anthropic import fake as anthropic_fake
from roundhouse.models.computer.screen import (
    ScreenMap,
    fit_anthropic,
    fit_short_side,
    smart_resize,
)
from roundhouse.models.local import fake as local_fake
from roundhouse.models.openai_computer import fake as openai_fake

KEY = "test-key"
SIZE = (1920, 1080)
CHECK = {"id": "sc_1", "code": "irrelevant_domain", "message": "Check the file name."}


@pytest.fixture(params=["x11", "sway"])
def wide_desktop(request: pytest.FixtureRequest) -> Iterator[Desktop]:
    settings = DesktopSettings(session=request.param, width=SIZE[0], height=SIZE[1])
    with VirtualDesktop(settings) as started:
        yield started


def claude_turns(at: tuple[int, int], target: Path) -> list[dict[str, Any]]:
    return [
        {"actions": [{"action": "left_click", "coordinate": list(at)}]},
        {
            "actions": [
                {"action": "type", "text": "native hello"},
                {"action": "key", "text": "ctrl+s"},
            ]
        },
        {"actions": [{"action": "type", "text": str(target)}]},
        {"actions": [{"action": "key", "text": "Return"}]},
        {"text": f"The text is saved as {target}."},
    ]


def openai_turns(at: tuple[int, int], target: Path) -> list[dict[str, Any]]:
    return [
        {"action": {"type": "click", "x": at[0], "y": at[1], "button": "left"}},
        {"action": {"type": "type", "text": "native hello"}},
        {"action": {"type": "keypress", "keys": ["CTRL", "S"]}},
        {"action": {"type": "type", "text": str(target)}, "safety_checks": [CHECK]},
        {"action": {"type": "keypress", "keys": ["ENTER"]}},
        {"text": f"The text is saved as {target}."},
    ]


def uitars_turns(at: tuple[int, int], target: Path) -> list[dict[str, Any]]:
    """UI-TARS-1.5's own text: Thought, then Action calls, points on the smart-resized image."""
    return [
        {"text": f"Thought: I click gedit's text.\nAction: click(start_box='({at[0]},{at[1]})')"},
        {
            "text": "Thought: I type the text and save it.\n"
            "Action: type(content='native hello')\n\nhotkey(key='ctrl s')"
        },
        {"text": f"Thought: I name the file.\nAction: type(content='{target}')"},
        {"text": "Thought: I save it.\nAction: hotkey(key='enter')"},
        {"text": f"Thought: Saved.\nAction: finished(content='The text is saved as {target}.')"},
    ]


async def gedit_window(desktop: Desktop, pid: int) -> WindowInfo:
    """gedit's window, as the desktop's own backend lists it (X11 or sway)."""
    settings = Settings(desktop=DesktopSettings(session=desktop.kind))
    async with await DesktopTools.open(desktop, settings) as tools:

        async def shown() -> WindowInfo | None:
            for window in await asyncio.to_thread(tools.windows.list_windows):
                if window.pid == pid and "Untitled" in window.title:
                    return window
            return None

        return await wait_until_async(shown, 30, "gedit's window")


FAMILIES = {
    "anthropic:claude-sonnet-4-5": (fit_anthropic, claude_turns),
    "openai-computer:computer-use-preview": (fit_short_side, openai_turns),
    "uitars:ui-tars-1.5-7b": (smart_resize, uitars_turns),
}


@pytest.mark.parametrize("spec", list(FAMILIES))
async def test_a_computer_use_model_saves_a_file_in_gedit(
    spec: str, wide_desktop: Desktop, launch: StartApp, tmp_path: Path
) -> None:
    gedit = launch(wide_desktop, gedit_argv())
    window = await gedit_window(wide_desktop, gedit.pid)
    target = tmp_path / "native.txt"
    fit, turns = FAMILIES[spec]
    # Where the model sees the middle of gedit's text on the image it is sent.
    x, y = ScreenMap(Rect(0, 0, *SIZE), fit(*SIZE)).to_model(*window.rect.center)
    script = tmp_path / "turns.json"
    script.write_text(json.dumps(turns((round(x), round(y)), target)), encoding="utf-8")
    source = Path(__file__).parents[2] / "src"  # this checkout's, first
    env = {
        **wide_desktop.env,
        "RH_LOOPBACK_ONLY": "1",
        "PYTHONPATH": os.pathsep.join([str(source), str(source.parent)]),
        "ROUNDHOUSE_DESKTOP__HAND_BACK_AFTER": "3",
    }
    argv = [
        sys.executable,
        "-m",
        "roundhouse",
        "run",
        f"type 'native hello' into gedit and save it as {target}",
        "--model",
        spec,
        "--agent",
        "computer",
        "--yes",
        "--desktop",
        "current",
        "--logs",
        str(tmp_path / "logs"),
    ]
    fake: anthropic_fake.FakeAnthropic | openai_fake.FakeOpenAIComputer | local_fake.FakeLocal
    if spec.startswith("uitars:"):
        fake = local_fake.FakeLocal(local_fake.load_script(script), key=KEY)
        env |= {
            "OPENAI_BASE_URL": fake.base_url,
            "ROUNDHOUSE_OPENAI__BASE_URL": fake.base_url,
            "OPENAI_API_KEY": KEY,
        }
    elif spec.startswith("anthropic:"):
        fake = anthropic_fake.FakeAnthropic(anthropic_fake.load_script(script), key=KEY)
        env |= {"ANTHROPIC_BASE_URL": fake.base_url, "ANTHROPIC_API_KEY": KEY}
    else:
        fake = openai_fake.FakeOpenAIComputer(openai_fake.load_script(script), key=KEY)
        env |= {"OPENAI_BASE_URL": fake.base_url, "OPENAI_API_KEY": KEY}
    with fake:
        done = await asyncio.to_thread(
            subprocess.run,
            argv,
            env=env,
            cwd=tmp_path,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=240,
            check=False,
        )
        refusals, left = fake.refusals, fake.remaining
    said = f"stdout:\n{done.stdout.decode()}\nstderr:\n{done.stderr.decode()[-3000:]}"
    assert refusals == [], said  # every request was one the API takes
    assert done.returncode == 0, said
    assert left == 0, said
    assert target.read_text(encoding="utf-8").rstrip("\n") == "native hello", said
