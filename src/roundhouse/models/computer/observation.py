"""What a computer-use agent shows its model each step: the screenshot it took (a file,
the desktop region it shows in logical pixels, its own pixel size) and what the actions
of the last answer did. A vendor's client shrinks the screenshot to its own target
(screen.py), declares that size, and sends the outcomes back with the ids it gave."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from roundhouse.devices.contract import FINE_ACTIONS, FINE_DATA_COLLECTION, Rect, ToolName
from roundhouse.models.observation import PastStep

# The finer pointer and keyboard tools: a vendor's computer tool asks for them (Anthropic's
# mouse_move, left_mouse_down, hold_key, cursor_position); no model is offered them as
# functions of its own.
FINE_TOOLS = frozenset({*FINE_ACTIONS, *FINE_DATA_COLLECTION})
# roundhouse's pixel tools, in the order agents offer them: what a family's computer tool
# or grammar already does. The families that take functions of their own (Gemini, Qwen-VL)
# are offered the rest beside.
PIXEL_ACTIONS: tuple[ToolName, ...] = (
    ToolName.CLICK_COORDINATES,
    ToolName.TYPE_TEXT,
    ToolName.PRESS_KEYS,
    ToolName.SCROLL,
    ToolName.DRAG,
    ToolName.WAIT,
    *FINE_ACTIONS,
    *FINE_DATA_COLLECTION,
)
PIXEL_TOOLS = frozenset(PIXEL_ACTIONS)


@dataclass(frozen=True)
class Screenshot:
    file: Path  # a PNG
    region: Rect  # the part of the desktop it shows, in the desktop's logical pixels
    pixels: tuple[int, int]  # its own size (more than the region on a scaled monitor)


@dataclass(frozen=True)
class Outcome:
    """What one action of the last answer came to, in the order the answer gave them."""

    function: str
    ok: bool
    text: str  # the error, why it did not run, or a short word that it ran
    declined: bool = False  # the person (or the policy without --yes) said no to it
    output: Any = None  # what the tool returned, when it ran (pointer_position's point)


@dataclass(frozen=True)
class ComputerObservation:
    """conversation: the round the step belongs to; a client keeps one transcript per
    conversation, and starts a new one (from the rendered messages) when it changes. The
    request, what the session knows and the steps so far are what the prompt shows (a
    conversation started again, after `resume`, reads them there)."""

    conversation: str
    screenshot: Screenshot
    outcomes: tuple[Outcome, ...] = ()
    request: str = ""
    blackboard: str = ""
    history: tuple[PastStep, ...] = ()
