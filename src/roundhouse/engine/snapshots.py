"""Snapshots at each subtask end and at round end, with the seeds' file names:

    action_round_{id}[_sub_round_{k}]_final.png           the window (the desktop if none is active)
    ui_trees/ui_tree_round_{id}[_sub_round_{k}]_final.json  when save_ui_tree is on
    desktop_round_{id}[_sub_round_{k}]_final.png          when save_full_screen is on

(UFO writes "sub_round_None" in the final desktop shot's name and never writes its round
UI trees; we write neither mistake.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from roundhouse.config import Settings
from roundhouse.core.commands import Command, Result
from roundhouse.core.events import SnapshotTaken
from roundhouse.devices.base import Dispatcher
from roundhouse.devices.contract import ToolName


class DesktopSnapshots:
    def __init__(self, dispatcher: Dispatcher, settings: Settings, folder: Path) -> None:
        self.dispatcher = dispatcher
        self.settings = settings
        self.folder = folder  # the log folder: the device writes the screenshots there

    async def capture(self, round_id: int, sub_round_id: int | None) -> SnapshotTaken:
        suffix = "" if sub_round_id is None else f"_sub_round_{sub_round_id}"
        files = []
        window_png = self.folder / f"action_round_{round_id}{suffix}_final.png"
        shot = await self._call(ToolName.CAPTURE_WINDOW_SCREENSHOT, path=str(window_png))
        if not shot.ok:  # no active window: the desktop stands in for it
            shot = await self._call(ToolName.CAPTURE_DESKTOP_SCREENSHOT, path=str(window_png))
        if shot.ok:
            files.append(window_png.name)
        ui_tree = None
        if self.settings.save_ui_tree:
            name = f"ui_trees/ui_tree_round_{round_id}{suffix}_final.json"
            tree = await self._call(ToolName.GET_UI_TREE)
            ui_tree = (name, tree.result if tree.ok else {"error": tree.error})
            files.append(name)
        if self.settings.save_full_screen:
            desktop_png = self.folder / f"desktop_round_{round_id}{suffix}_final.png"
            if (await self._call(ToolName.CAPTURE_DESKTOP_SCREENSHOT, path=str(desktop_png))).ok:
                files.append(desktop_png.name)
        return SnapshotTaken(round_id, sub_round_id, tuple(files), ui_tree)

    async def settle(self) -> None:
        """Wait until the screen is quiet: an application launched a moment ago may not
        have painted yet, and its snapshot would be black."""
        await self._call(ToolName.WAIT, seconds=0)

    async def _call(self, tool: str, **parameters: Any) -> Result:
        [result] = await self.dispatcher.execute(
            [Command(tool_name=tool, parameters=parameters, tool_type="data_collection")]
        )
        return result
