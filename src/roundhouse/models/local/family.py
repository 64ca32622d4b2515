"""Which grammar a local spec speaks, and how its screenshot is sent: one `Grammar` per
family and model, chosen by the spec's kind and the model's name. Pure.

| spec        | prompt                             | image sent          | points          |
|-------------|------------------------------------|---------------------|-----------------|
| uitars:1.5  | Thought/Action, in the user's text | smart-resize 28     | its pixels      |
| uitars:7b   | the same                           | smart-resize 28     | 0-1000          |
| qwen-vl:2.5 | computer_use in the system <tools> | smart-resize 28     | its pixels      |
| qwen-vl:3   | the same, screen 1000x1000         | smart-resize 32     | 0-999           |
| opencua     | its system prompt, pyautogui code  | smart-resize 28, or | qwen25 pixels,  |
|             |                                    | as taken (absolute) | 0-1, or pixels  |
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from roundhouse.config import LocalSettings
from roundhouse.models.base import OfferedTool
from roundhouse.models.computer.screen import ScreenMap
from roundhouse.models.local import opencua, qwen, uitars
from roundhouse.models.local.actions import Parsed, Pointer, Points

KINDS = ("uitars", "qwen-vl", "opencua")


@dataclass(frozen=True)
class Grammar:
    """system: the system prompt for the map of the image sent and roundhouse's own tools
    (None: the family has none, its prompt opens the first user message: `opening`). read:
    an answer as Parsed, given the names of those tools. takes_tools: whether the grammar
    has room for roundhouse's own tools (Qwen's function block; UI-TARS and OpenCUA were
    trained on a fixed action space, and are offered none)."""

    label: str  # "UI-TARS-1.5: pixels of the smart-resized image", for docs and the log
    target: str  # screen.py's screen_map_for target: the size the image is sent at
    grid: int | None
    fractions: Literal["never", "always", "small"]
    system: Callable[[ScreenMap, tuple[OfferedTool, ...]], str | None]
    opening: Callable[[str], str]
    read: Callable[[str, Points, Pointer, frozenset[str]], Parsed]
    again: str  # what follows a grammar break said back: the form to answer in
    takes_tools: bool = False


def grammar_for(kind: str, model: str, settings: LocalSettings) -> Grammar:
    """The grammar of `kind:model`; ValueError for a kind or a Qwen name it cannot tell."""
    if kind == "uitars":
        pixels = uitars.uses_pixels(model)
        return Grammar(
            "UI-TARS-1.5: pixels of the smart-resized image" if pixels else "UI-TARS: 0-1000",
            "qwen25",
            None if pixels else 1000,
            "never",
            lambda screen, tools: None,
            uitars.prompt,
            lambda text, points, pointer, custom: uitars.read(text, points, pointer),
            "Answer 'Thought: ...' and then 'Action: ...' with one action of the action space.",
        )
    if kind == "qwen-vl":
        which = qwen.version(model)
        return Grammar(
            f"Qwen{which}-VL: "
            + ("0-999" if which == "3" else "pixels of the smart-resized image"),
            "qwen3" if which == "3" else "qwen25",
            qwen.GRID if which == "3" else None,
            "never",
            lambda screen, tools: qwen.system_prompt(which, screen.sent, tools),
            lambda instruction: instruction,
            lambda text, points, pointer, custom: qwen.read(text, which, points, pointer, custom),
            "Call computer_use (or another function) in <tool_call></tool_call>, one action a "
            "call.",
            takes_tools=True,
        )
    if kind == "opencua":
        coordinates: opencua.Coordinates = (
            opencua.coordinates(model) if settings.coordinates == "auto" else settings.coordinates
        )
        fractions: dict[str, Literal["never", "always", "small"]] = {
            "relative": "always", "qwen25": "small", "absolute": "never"
        }  # fmt: skip
        return Grammar(
            f"OpenCUA: {coordinates} coordinates",
            "as_taken" if coordinates == "absolute" else "qwen25",
            None,
            fractions[coordinates],
            lambda screen, tools: opencua.prompt(coordinates),
            lambda instruction: instruction,
            lambda text, points, pointer, custom: opencua.read(text, points, pointer),
            "Answer '## Thought', '## Action' and '## Code' with a ```python block of the "
            "calls allowed.",
        )
    raise ValueError(f"no local family {kind!r}: {', '.join(KINDS)}")
