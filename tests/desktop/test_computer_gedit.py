"""The end-to-end command of issue 45 for Claude: `roundhouse run ... --model
anthropic:claude-sonnet-4-5 --agent computer --yes` on a real Xvfb desktop with gedit
open, against the fake Anthropic server (ANTHROPIC_BASE_URL), which checks every request
as the API would: headers, tool version, the display declared against the screenshot
sent, and every tool_use answered by its id. The desktop is 1920x1080, so the screenshot
is shrunk for Claude and the scripted click goes through the coordinate map."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.desktop.conftest import StartApp, gedit_argv, wait_for_window

from roundhouse.config import DesktopSettings
from roundhouse.devices.contract import Rect
from roundhouse.devices.linux.desktops.desktop import Desktop
from roundhouse.devices.linux.desktops.virtual import VirtualDesktop
from roundhouse.models.anthropic.fake import FakeAnthropic, load_script
from roundhouse.models.computer.screen import ScreenMap, fit_anthropic

KEY = "test-key"
SIZE = (1920, 1080)


@pytest.fixture
def wide_desktop() -> Iterator[Desktop]:
    with VirtualDesktop(DesktopSettings(width=SIZE[0], height=SIZE[1])) as started:
        yield started


def test_claude_saves_a_file_in_gedit_through_the_computer_agent(
    wide_desktop: Desktop, launch: StartApp, tmp_path: Path
) -> None:
    gedit = launch(wide_desktop, gedit_argv())
    window = wait_for_window(wide_desktop, pid=gedit.pid, title="Untitled")
    target = tmp_path / "native.txt"
    # Where Claude sees the middle of gedit's text on the image it is sent.
    screen = ScreenMap(Rect(0, 0, *SIZE), fit_anthropic(*SIZE))
    x, y = screen.to_model(*window.rect.center)
    turns = [
        {"actions": [{"action": "left_click", "coordinate": [round(x), round(y)]}]},
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
    script = tmp_path / "turns.json"
    script.write_text(json.dumps(turns), encoding="utf-8")
    source = Path(__file__).parents[2] / "src"  # this checkout's, first
    with FakeAnthropic(load_script(script), key=KEY) as fake:
        env = {
            **wide_desktop.env,
            "ANTHROPIC_BASE_URL": fake.base_url,
            "ANTHROPIC_API_KEY": KEY,
            "RH_LOOPBACK_ONLY": "1",
            "PYTHONPATH": os.pathsep.join([str(source), str(source.parent)]),
            "ROUNDHOUSE_DESKTOP__HAND_BACK_AFTER": "3",
        }
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "roundhouse",
                "run",
                f"type 'native hello' into gedit and save it as {target}",
                "--model",
                "anthropic:claude-sonnet-4-5",
                "--agent",
                "computer",
                "--yes",
                "--desktop",
                "current",
                "--logs",
                str(tmp_path / "logs"),
            ],
            env=env,
            cwd=tmp_path,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=240,
            check=False,
        )
        refusals, left = fake.refusals, fake.remaining
        received = [r.body for r in fake.received]
    said = f"stdout:\n{done.stdout.decode()}\nstderr:\n{done.stderr.decode()[-3000:]}"
    assert refusals == [], said
    assert done.returncode == 0, said
    assert left == 0, said
    assert target.read_text(encoding="utf-8").rstrip("\n") == "native hello", said
    # Every request declared the shrunk display, and the screenshot of that size.
    for body in received:
        [tool] = body["tools"]
        assert tool["type"] == "computer_20250124"
        assert (tool["display_width_px"], tool["display_height_px"]) == fit_anthropic(*SIZE)
