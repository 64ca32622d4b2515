"""A window sway lists before it has laid it out is not yet viewable (wlroots/sway.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from roundhouse.config import DesktopSettings, Settings
from roundhouse.devices.linux.desktops.virtual import VirtualDesktop
from roundhouse.devices.linux.display.wlroots.sway import (
    SwayIpc,
    laid_out,
    sway_socket,
    window_info,
)
from roundhouse.devices.linux.tools import DesktopTools


def gedit(border: str, width: int, y: int) -> dict[str, Any]:
    """gedit's container as sway 1.7 gave it, just listed and once laid out."""
    return {
        "id": 7,
        "pid": 17703,
        "app_id": "gedit",
        "name": "Untitled Document 1 - gedit",
        "border": border,
        "current_border_width": width,
        "rect": {"x": 1280, "y": y, "width": 1280, "height": 800 - y},
        "window_rect": {"x": 2, "y": 0, "width": 1276, "height": 773},
    }


def test_a_window_just_listed_is_not_laid_out_and_sits_higher_than_it_will() -> None:
    early, placed = gedit("none", 0, 0), gedit("normal", 2, 25)
    assert not laid_out(early)
    assert laid_out(placed)
    assert window_info(placed).rect.top - window_info(early).rect.top == 25


def test_a_decoration_chosen_is_laid_out() -> None:
    for border, width in (("none", 2), ("pixel", 0), ("csd", 0), ("normal", 2)):
        assert laid_out(gedit(border, width, 0)), border


async def test_a_sway_that_draws_no_borders_still_hands_over_the_windows_it_launches(
    tmp_path: Path,
) -> None:
    """A person's sway may be configured with `default_border none`: its windows show "none"
    0 wide for good, and are viewable once sway has had time to lay them out."""
    with VirtualDesktop(DesktopSettings(session="sway")) as desktop:
        ipc = SwayIpc(sway_socket(desktop.env))
        try:
            ipc.command("default_border none")
        finally:
            ipc.close()
        async with await DesktopTools.open(desktop, Settings()) as tools:
            try:
                launched = await tools.launch_application(
                    f"gedit --standalone {tmp_path / 'plain.txt'}"
                )
                [node] = [w for w in await tools.list_windows() if w["xid"] == launched["xid"]]
            finally:
                tools.launcher.kill_launched()
    assert node["title"].startswith("plain.txt")
