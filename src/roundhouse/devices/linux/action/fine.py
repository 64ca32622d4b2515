"""The finer pointer and keyboard tools, beside acting.py's: the pointer moved without a
click, a click where the pointer is, a button pressed and released apart (a drag whose
moves are the model's), keys held down a while, and where the pointer is. Computer-use
models ask for these (Anthropic's mouse_move, left_mouse_down, hold_key, cursor_position);
an AppAgent is not offered them (contract.FINE_ACTIONS).

They act where the pointer is, so each is run in the same look as every action: what came
of a button released at the end of a drag is said as a click's is.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from roundhouse.devices.linux.action.acting import Acting
from roundhouse.devices.linux.action.observing import ToolError
from roundhouse.devices.linux.display.base import Button

HOLD_LIMIT = 60.0  # seconds: as long as wait waits


class FineActing(Acting):
    """Acting's tools, and the finer ones."""

    async def pointer_position(self) -> dict[str, Any]:
        """Where the mouse pointer is, in screen coordinates (pixels from the desktop's
        top-left corner)."""
        x, y = await asyncio.to_thread(self._pointer_at)
        return {"x": x, "y": y}

    def _pointer_at(self) -> tuple[int, int]:
        found = self.around.input.position()
        if found is None:
            raise ToolError("where the pointer is is not known here until it has been moved")
        return found

    async def move_pointer(self, x: int, y: int) -> dict[str, Any]:
        """Move the mouse pointer to screen coordinates (x, y), clicking nothing: a hover
        shows a tooltip or a menu; with a button held down (mouse_down), it drags."""
        return await self._act(lambda: self.around.input.move(x, y), "pointer")

    async def click_pointer(
        self, button: Button = "left", double: bool = False, triple: bool = False, hold: str = ""
    ) -> dict[str, Any]:
        """Click where the mouse pointer is (put there by move_pointer); as
        click_coordinates does otherwise."""
        return await self.click_coordinates(*self._pointer_at(), button, double, triple, hold)

    async def mouse_down(self, button: Button = "left") -> dict[str, Any]:
        """Press a mouse button where the pointer is and keep it down, until mouse_up."""
        return await self._act(lambda: self.around.input.button_down(button), "pointer")

    async def mouse_up(self, button: Button = "left") -> dict[str, Any]:
        """Release a mouse button (pressed by mouse_down) where the pointer is."""
        return await self._act(lambda: self.around.input.button_up(button), "pointer")

    async def hold_keys(self, keys: str, seconds: float) -> dict[str, Any]:
        """Hold a key or key combination ("shift", "ctrl+alt") down for `seconds` (up to
        60), then release it."""
        if not 0 <= seconds <= HOLD_LIMIT:
            raise ToolError(f"seconds must be between 0 and {HOLD_LIMIT:g}")
        return await self._act(
            lambda: self._holding(keys, time.sleep, seconds), "keyboard", focused_text=True
        )
