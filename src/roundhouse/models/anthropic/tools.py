"""The computer tool as Anthropic defines it, and its actions as roundhouse's tools. Pure.

The tool version follows the model (docs: "computer use tool"): computer_20251124 for
Opus 4.5 and later and Sonnet 4.6 and later; computer_20250124 for Sonnet 4.5, Haiku 4.5,
the other 4.x models and Sonnet 3.7; computer_20241022 for Claude 3.5. Each is sent with
its beta header.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from roundhouse.devices.contract import ToolName
from roundhouse.models.computer.keys import press_keys_text
from roundhouse.models.computer.screen import ScreenMap


@dataclass(frozen=True)
class ToolVersion:
    type: str
    beta: str
    actions: frozenset[str]


_BASIC = frozenset(
    {
        "key",
        "type",
        "mouse_move",
        "left_click",
        "left_click_drag",
        "right_click",
        "middle_click",
        "double_click",
        "screenshot",
        "cursor_position",
    }
)
_ENHANCED = _BASIC | {
    "scroll",
    "triple_click",
    "left_mouse_down",
    "left_mouse_up",
    "hold_key",
    "wait",
}
V20241022 = ToolVersion("computer_20241022", "computer-use-2024-10-22", _BASIC)
V20250124 = ToolVersion("computer_20250124", "computer-use-2025-01-24", _ENHANCED)
V20251124 = ToolVersion("computer_20251124", "computer-use-2025-11-24", _ENHANCED | {"zoom"})
VERSIONS = {version.type: version for version in (V20241022, V20250124, V20251124)}

# claude-sonnet-4-5, claude-opus-4-1-20250805, claude-sonnet-4-20250514 (no minor: a date
# follows), claude-3-7-sonnet-latest.
_NEW_NAME = re.compile(r"claude-(opus|sonnet|haiku)-(\d+)(?:-(\d{1,2}))?(?:$|-|@)")
_OLD_NAME = re.compile(r"claude-(\d+)-(\d{1,2})-(opus|sonnet|haiku)")


class UnknownModel(ValueError):
    """A model name no computer tool version is known for."""


def tool_version(model: str) -> ToolVersion:
    """The computer tool version `model` takes (UnknownModel when the name says nothing)."""
    found = _NEW_NAME.search(model)
    if found is not None:
        family, major, minor = found.group(1), int(found.group(2)), int(found.group(3) or 0)
        version = (major, minor)
        if family == "opus" and version >= (4, 5) or family == "sonnet" and version >= (4, 6):
            return V20251124
        if major >= 4:
            return V20250124
    old = _OLD_NAME.search(model)
    if old is not None:
        version = (int(old.group(1)), int(old.group(2)))
        if version >= (3, 7):
            return V20250124
        if version >= (3, 5):
            return V20241022
    raise UnknownModel(
        f"no computer tool is known for the model {model!r} (claude-sonnet-4-5, "
        "claude-opus-4-5 and their kin take one)"
    )


def computer_tool(version: ToolVersion, screen: ScreenMap) -> dict[str, Any]:
    """The tool as the request declares it: the display is the image sent."""
    width, height = screen.sent
    return {
        "type": version.type,
        "name": "computer",
        "display_width_px": width,
        "display_height_px": height,
    }


# ------------------------------------------------------------------ actions


class Unsupported(ValueError):
    """An action roundhouse's tools cannot do (yet): said back to the model as the result."""


def as_tool_call(action: dict[str, Any], screen: ScreenMap) -> tuple[str, dict[str, Any]] | None:
    """One computer action as a roundhouse tool call (function, arguments), its points on
    the desktop; None for a screenshot, which the next step's screenshot answers.
    Unsupported for what no tool does, with why."""
    kind = str(action.get("action", ""))
    if kind == "screenshot":
        return None
    if kind in _CLICKS:
        if action.get("text"):
            raise Unsupported(f"{kind} with keys held ({action['text']!r}) is not supported")
        x, y = _point(action, "coordinate", screen)
        button, double = _CLICKS[kind]
        arguments: dict[str, Any] = {"x": x, "y": y}
        if button != "left":
            arguments["button"] = button
        if double:
            arguments["double"] = True
        return ToolName.CLICK_COORDINATES, arguments
    if kind == "type":
        return ToolName.TYPE_TEXT, {"text": _text(action)}
    if kind == "key":
        return ToolName.PRESS_KEYS, {"keys": press_keys_text(_text(action))}
    if kind == "scroll":
        if action.get("text"):
            raise Unsupported(f"scroll with keys held ({action['text']!r}) is not supported")
        x, y = _point(action, "coordinate", screen)
        direction = action.get("scroll_direction")
        if direction not in ("up", "down", "left", "right"):
            raise Unsupported(
                f"scroll_direction must be up, down, left or right, not {direction!r}"
            )
        amount = action.get("scroll_amount", 3)
        if not isinstance(amount, int) or amount < 1:
            raise Unsupported(f"scroll_amount must be a positive whole number, not {amount!r}")
        return ToolName.SCROLL, {"x": x, "y": y, "direction": direction, "amount": amount}
    if kind == "left_click_drag":
        start_x, start_y = _point(action, "start_coordinate", screen)
        end_x, end_y = _point(action, "coordinate", screen)
        return ToolName.DRAG, {
            "start_x": start_x,
            "start_y": start_y,
            "end_x": end_x,
            "end_y": end_y,
        }
    if kind == "wait":
        duration = action.get("duration", 1)
        if not isinstance(duration, int | float) or not 0 <= duration <= 60:
            raise Unsupported(f"duration must be between 0 and 60 seconds, not {duration!r}")
        return ToolName.WAIT, {"seconds": duration}
    raise Unsupported(
        f"the action {kind!r} is not supported here; use key, type, left_click, right_click, "
        "middle_click, double_click, left_click_drag, scroll, wait or screenshot"
    )


_CLICKS: dict[str, tuple[str, bool]] = {
    "left_click": ("left", False),
    "right_click": ("right", False),
    "middle_click": ("middle", False),
    "double_click": ("left", True),
}


def _point(action: dict[str, Any], key: str, screen: ScreenMap) -> tuple[int, int]:
    value = action.get(key)
    if (
        not isinstance(value, list)
        or len(value) != 2
        or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in value)
    ):
        raise Unsupported(f"{action.get('action')} needs {key} [x, y], not {value!r}")
    width, height = screen.sent
    x, y = value
    if not (0 <= x < width and 0 <= y < height):
        raise Unsupported(f"{key} {value} is outside the display of {width}x{height}")
    return screen.to_logical(x, y)


def _text(action: dict[str, Any]) -> str:
    text = action.get("text")
    if not isinstance(text, str) or not text:
        raise Unsupported(f"{action.get('action')} needs text")
    return text


# ------------------------------------------------------------------ an answer


UNSUPPORTED = "computer_unsupported"  # no tool has this name: the answer is refused


@dataclass(frozen=True)
class Pending:
    """A tool_use the next request must answer: its id, where its action stands in the
    answer's list (None: it ran none, a screenshot), and why it cannot run (if so)."""

    id: str
    index: int | None = None
    why: str | None = None


def custom_tool(name: str, description: str, parameters: dict[str, Any]) -> dict[str, Any]:
    """One of roundhouse's own tools, beside the computer tool."""
    return {"name": name, "description": description, "input_schema": parameters}


def read_answer(
    content: list[dict[str, Any]],
    stop_reason: str | None,
    screen: ScreenMap,
    custom: frozenset[str] = frozenset(),
) -> tuple[dict[str, Any], tuple[Pending, ...]]:
    """The model's content as roundhouse's answer (the JSON the agents' one parser reads)
    and the tool_use blocks the next request answers.

    Text alone ends the round: FINISH with the text as its result (end_turn), FAIL naming
    a refusal or any other stop. Each computer action is one action of the answer's list,
    its points on the desktop; a call of one of roundhouse's own tools (`custom`) is that
    tool's call; one roundhouse cannot do is named so that the parser refuses the answer,
    and the model is told why in that tool_use's result."""
    thought = "\n".join(
        str(block.get("text", "")) for block in content if block.get("type") == "text"
    ).strip()
    answer: dict[str, Any] = {"observation": "", "thought": thought}
    uses = [block for block in content if block.get("type") == "tool_use"]
    if stop_reason == "refusal":
        said = f": {thought}" if thought else ""
        return {**answer, "action": {"status": "FAIL"}, "result": f"the model refused{said}"}, ()
    if not uses:
        if stop_reason in ("end_turn", "stop_sequence"):
            return {**answer, "action": {"status": "FINISH"}, "result": thought}, ()
        why = f"the answer stopped ({stop_reason}) with neither an action nor a final answer"
        return {**answer, "action": {"status": "FAIL"}, "result": why}, ()
    actions: list[dict[str, Any]] = []
    pending: list[Pending] = []
    for use in uses:
        use_id = str(use.get("id", ""))
        given = use.get("input")
        name = str(use.get("name"))
        if name in custom:
            pending.append(Pending(use_id, len(actions)))
            actions.append(
                {"function": name, "arguments": given if isinstance(given, dict) else {}}
            )
            continue
        try:
            if name != "computer":
                raise Unsupported(f"there is no tool {name!r}")
            call = as_tool_call(given if isinstance(given, dict) else {}, screen)
        except Unsupported as error:
            pending.append(Pending(use_id, len(actions), str(error)))
            actions.append({"function": UNSUPPORTED, "arguments": {"why": str(error)}})
            continue
        if call is None:
            pending.append(Pending(use_id))
            continue
        pending.append(Pending(use_id, len(actions)))
        actions.append({"function": call[0], "arguments": call[1]})
    listed = [{**action, "status": "CONTINUE"} for action in actions]
    answer["action"] = listed or {"status": "CONTINUE"}  # screenshots alone: look again
    return answer, tuple(pending)
