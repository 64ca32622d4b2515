"""The desktop tools on each Wayland session: typing any text, whatever the session's
keyboard layout can type."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from tests.desktop.conftest import wait_until

from roundhouse.config import Settings
from roundhouse.devices.linux.desktops.desktop import Desktop
from roundhouse.devices.linux.tools import DesktopTools

TEXT = "Grüße aus Zürich — 東京"


@pytest.fixture
async def tools(session: Desktop) -> AsyncIterator[DesktopTools]:
    async with await DesktopTools.open(session, Settings()) as opened:
        try:
            yield opened
        finally:
            opened.launcher.kill_launched()


async def test_type_text_types_what_the_layout_lacks_into_the_field(
    tools: DesktopTools, tmp_path: Path
) -> None:
    """sway takes our keymap and types it with keys; GNOME and KDE read keys with the
    session's US layout, which has none for ü, — or 東京: the text goes in at the caret
    through the field's EditableText, and the tool says it did."""
    target = tmp_path / "unicode.txt"
    await tools.launch_application(f"gedit --standalone {target}")
    listed = await tools.get_controls()
    field = next(c for c in listed["controls"] if c["role"] == "text")
    done = await tools.type_text(TEXT, label=field["label"])
    assert done["effect"] == "confirmed", done
    await tools.press_keys("ctrl+s")
    wait_until(lambda: target.exists() and target.read_text() == TEXT + "\n", 20, "the save")
