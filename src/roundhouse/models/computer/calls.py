"""roundhouse's pixel tool calls, as every family's actions become them: (function,
arguments), points already on the desktop. Pure."""

from __future__ import annotations

from typing import Any

from roundhouse.devices.contract import ToolName


def drag_call(start: tuple[int, int], end: tuple[int, int]) -> tuple[str, dict[str, Any]]:
    """A drag from `start` to `end` (desktop points), as the drag tool takes it."""
    return ToolName.DRAG, {
        "start_x": start[0],
        "start_y": start[1],
        "end_x": end[0],
        "end_y": end[1],
    }
