"""What the open families' grammars share: an answer read (Parsed), a grammar break
(GrammarError, said back to the model), and their actions as roundhouse's tool calls, with
points on the desktop. Pure.

A family's reader (uitars.py, qwen.py, opencua.py) gives points in the model's own space:
pixels of the image sent, or a 0-999 grid over it (Points says which); `Pointer` keeps
where the model last put the mouse, for the grammars whose drag or scroll starts there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from roundhouse.devices.contract import ToolName
from roundhouse.models.computer.calls import drag_call
from roundhouse.models.computer.keys import chord
from roundhouse.models.computer.screen import ScreenMap

Call = tuple[str, dict[str, Any]]  # a roundhouse tool call: function, arguments
MAX_SCROLL = 50  # notches of one scroll: a model's "pixels: -1000" is not a thousand turns


class GrammarError(ValueError):
    """An answer outside the family's grammar: said back to the model, which answers again."""


@dataclass(frozen=True)
class Parsed:
    """A model's answer read: the actions to run in order, or an end (FINISH / FAIL) with
    the result the person is told. No actions and no end: look again (a wait, a move)."""

    thought: str
    calls: tuple[Call, ...] = ()
    end: Literal["FINISH", "FAIL"] | None = None
    result: str = ""


@dataclass
class Pointer:
    """Where the model last put the pointer, in the desktop's logical pixels (None: it has
    not said). Kept per conversation: Qwen's drag and OpenCUA's dragTo start there."""

    at: tuple[int, int] | None = None


@dataclass(frozen=True)
class Points:
    """How a family's points read on the image sent: pixels of it or cells of its grid
    (the map says which); `fractions`: "always" for fractions 0-1 of it (OpenCUA's relative
    type), "small" where a point of two numbers within 0-1 reads as fractions and any other
    as pixels (OpenCUA's qwen25 type, as its authors read it)."""

    screen: ScreenMap
    fractions: Literal["never", "always", "small"] = "never"

    def logical(self, x: Any, y: Any) -> tuple[int, int]:
        """The desktop's logical pixel under the model's point. A point off its space is a
        GrammarError: the model may have misread its own scale, and is told so."""
        if not (_number(x) and _number(y)):
            raise GrammarError(f"a point needs two numbers, not ({x!r}, {y!r})")
        width, height = self.screen.space
        small = 0 <= x <= 1 and 0 <= y <= 1 and (isinstance(x, float) or isinstance(y, float))
        if self.fractions == "always" or (self.fractions == "small" and small):
            if not (0 <= x <= 1 and 0 <= y <= 1):
                raise GrammarError(f"({x}, {y}) is not a fraction of the screen (0 to 1)")
            x, y = x * width, y * height
        elif not (0 <= x <= width and 0 <= y <= height):
            raise GrammarError(f"({x}, {y}) is off the screen, which is {width}x{height}")
        return self.screen.to_logical(x, y)


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _fraction(value: Any) -> bool:
    return isinstance(value, float) and 0 <= value <= 1


# ------------------------------------------------------------------ tool calls


def click(
    at: tuple[int, int], button: str = "left", double: bool = False, pointer: Pointer | None = None
) -> Call:
    if button not in ("left", "right", "middle"):
        raise GrammarError(f"there is no {button!r} button: left, right or middle")
    if pointer is not None:
        pointer.at = at
    arguments: dict[str, Any] = {"x": at[0], "y": at[1]}
    if button != "left":
        arguments["button"] = button
    if double:
        arguments["double"] = True
    return ToolName.CLICK_COORDINATES, arguments


def drag(start: tuple[int, int], end: tuple[int, int], pointer: Pointer | None = None) -> Call:
    if pointer is not None:
        pointer.at = end
    return drag_call(start, end)


def scroll(at: tuple[int, int], direction: str, notches: int) -> Call:
    if direction not in ("up", "down", "left", "right"):
        raise GrammarError(f"a scroll goes up, down, left or right, not {direction!r}")
    amount = min(MAX_SCROLL, max(1, abs(int(notches))))
    return ToolName.SCROLL, {"x": at[0], "y": at[1], "direction": direction, "amount": amount}


def type_text(text: Any) -> Call:
    if not isinstance(text, str) or not text:
        raise GrammarError(f"typing needs text, not {text!r}")
    return ToolName.TYPE_TEXT, {"text": text}


def keys(names: list[Any]) -> Call:
    """Keys pressed together (["ctrl", "s"]), through the keysym typing of the layout."""
    try:
        return ToolName.PRESS_KEYS, {"keys": chord(names)}
    except ValueError as error:
        raise GrammarError(str(error)) from None


def keys_in_turn(names: list[Any]) -> Call:
    """Keys pressed one after another (["down", "down", "enter"]), each a chord of one."""
    if not names:
        raise GrammarError("no key to press")
    return ToolName.PRESS_KEYS, {"keys": " ".join(keys([name])[1]["keys"] for name in names)}


def wait(seconds: Any = 1.0) -> Call:
    if not _number(seconds) or not 0 <= seconds <= 60:
        raise GrammarError(f"a wait is 0 to 60 seconds, not {seconds!r}")
    return ToolName.WAIT, {"seconds": float(seconds)}
