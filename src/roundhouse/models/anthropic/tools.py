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
from roundhouse.models.computer.calls import drag_call
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
    """The tool as the request declares it: the display is the image sent; zoom is there
    only when asked for (enable_zoom, computer_20251124's)."""
    width, height = screen.sent
    tool: dict[str, Any] = {
        "type": version.type,
        "name": "computer",
        "display_width_px": width,
        "display_height_px": height,
    }
    if "zoom" in version.actions:
        tool["enable_zoom"] = True
    return tool


# ------------------------------------------------------------------ actions


class Unsupported(ValueError):
    """An action roundhouse's tools cannot do (yet): said back to the model as the result."""


def as_tool_call(
    action: dict[str, Any], screen: ScreenMap, version: ToolVersion = V20251124
) -> tuple[str, dict[str, Any]] | None:
    """One computer action as a roundhouse tool call (function, arguments), its points on
    the desktop; None for a screenshot or a zoom, which the next step's screenshot answers
    (zoom_region). Unsupported for what `version` lacks or no tool does, with why."""
    kind = str(action.get("action", ""))
    if kind not in version.actions:
        raise Unsupported(
            f"the action {kind!r} is not one of {version.type}'s: "
            + ", ".join(sorted(version.actions))
        )
    if kind in ("screenshot", "zoom"):
        return None
    if kind in _CLICKS:
        button, count = _CLICKS[kind]
        arguments: dict[str, Any] = {}
        if button != "left":
            arguments["button"] = button
        if count > 1:
            arguments["double" if count == 2 else "triple"] = True
        arguments |= _held(action)
        if action.get("coordinate") is None:  # where mouse_move put the pointer
            return ToolName.CLICK_POINTER, arguments
        x, y = _point(action, "coordinate", screen)
        return ToolName.CLICK_COORDINATES, {"x": x, "y": y, **arguments}
    if kind == "mouse_move":
        x, y = _point(action, "coordinate", screen)
        return ToolName.MOVE_POINTER, {"x": x, "y": y}
    if kind in ("left_mouse_down", "left_mouse_up"):
        if action.get("coordinate") is not None:
            raise Unsupported(f"{kind} acts where the pointer is: it takes no coordinate")
        return (ToolName.MOUSE_DOWN if kind == "left_mouse_down" else ToolName.MOUSE_UP), {}
    if kind == "cursor_position":
        return ToolName.POINTER_POSITION, {}
    if kind == "type":
        return ToolName.TYPE_TEXT, {"text": _text(action)}
    if kind == "key":
        return ToolName.PRESS_KEYS, {"keys": press_keys_text(_text(action))}
    if kind == "hold_key":
        seconds = _duration(action)
        return ToolName.HOLD_KEYS, {"keys": press_keys_text(_text(action)), "seconds": seconds}
    if kind == "scroll":
        x, y = _point(action, "coordinate", screen)
        direction = action.get("scroll_direction")
        if direction not in ("up", "down", "left", "right"):
            raise Unsupported(
                f"scroll_direction must be up, down, left or right, not {direction!r}"
            )
        amount = action.get("scroll_amount", 3)
        if not isinstance(amount, int) or amount < 1:
            raise Unsupported(f"scroll_amount must be a positive whole number, not {amount!r}")
        arguments = {"x": x, "y": y, "direction": direction, "amount": amount}
        return ToolName.SCROLL, arguments | _held(action)
    if kind == "left_click_drag":
        start = _point(action, "start_coordinate", screen)
        return drag_call(start, _point(action, "coordinate", screen))
    if kind == "wait":
        return ToolName.WAIT, {"seconds": _duration(action)}
    raise Unsupported(f"the action {kind!r} is not supported here")  # a version's new one


# Each click: its button, and how many times it is pressed.
_CLICKS: dict[str, tuple[str, int]] = {
    "left_click": ("left", 1),
    "right_click": ("right", 1),
    "middle_click": ("middle", 1),
    "double_click": ("left", 2),
    "triple_click": ("left", 3),
}
HOLD_LIMIT = 60  # seconds a wait or a hold_key may last here (the API allows 100)


def zoom_region(action: dict[str, Any], screen: ScreenMap) -> tuple[float, ...]:
    """A zoom's region [x0, y0, x1, y1] (pixels of the display declared) as fractions of
    the display: the next screenshot, whatever its size, is cut there."""
    region = action.get("region")
    if (
        not isinstance(region, list)
        or len(region) != 4
        or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in region)
    ):
        raise Unsupported(f"zoom needs region [x0, y0, x1, y1], not {region!r}")
    width, height = screen.sent
    x0, y0, x1, y1 = region
    if not (0 <= x0 < x1 <= width and 0 <= y0 < y1 <= height):
        raise Unsupported(
            f"region {region} must be a rectangle [x0, y0, x1, y1] inside the display of "
            f"{width}x{height}, x0 < x1 and y0 < y1"
        )
    return (x0 / width, y0 / height, x1 / width, y1 / height)


def _held(action: dict[str, Any]) -> dict[str, Any]:
    """The keys a click or a scroll holds down (its `text`: "shift", "ctrl"), as the tool's
    `hold`; nothing when it holds none."""
    text = action.get("text")
    if text is None or text == "":
        return {}
    if not isinstance(text, str) or len(text.split()) != 1:
        raise Unsupported(f"text (the keys held) must be one combination, not {text!r}")
    return {"hold": press_keys_text(text)}


def _duration(action: dict[str, Any]) -> float:
    duration = action.get("duration", 1 if action.get("action") == "wait" else None)
    if (
        not isinstance(duration, int | float)
        or isinstance(duration, bool)
        or not 0 <= duration <= HOLD_LIMIT
    ):
        raise Unsupported(f"duration must be between 0 and {HOLD_LIMIT} seconds, not {duration!r}")
    return duration


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
    answer's list (None: it ran none, a screenshot or a zoom), why it cannot run (if so),
    and a zoom's region, as fractions of the display (zoom_region)."""

    id: str
    index: int | None = None
    why: str | None = None
    zoom: tuple[float, ...] | None = None


def custom_tool(name: str, description: str, parameters: dict[str, Any]) -> dict[str, Any]:
    """One of roundhouse's own tools, beside the computer tool."""
    return {"name": name, "description": description, "input_schema": parameters}


def read_answer(
    content: list[dict[str, Any]],
    stop_reason: str | None,
    screen: ScreenMap,
    custom: frozenset[str] = frozenset(),
    version: ToolVersion = V20251124,
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
            action = given if isinstance(given, dict) else {}
            call = as_tool_call(action, screen, version)
            zoom = zoom_region(action, screen) if action.get("action") == "zoom" else None
        except Unsupported as error:
            pending.append(Pending(use_id, len(actions), str(error)))
            actions.append({"function": UNSUPPORTED, "arguments": {"why": str(error)}})
            continue
        if call is None:
            pending.append(Pending(use_id, zoom=zoom))
            continue
        pending.append(Pending(use_id, len(actions)))
        actions.append({"function": call[0], "arguments": call[1]})
    listed = [{**action, "status": "CONTINUE"} for action in actions]
    answer["action"] = listed or {"status": "CONTINUE"}  # screenshots alone: look again
    return answer, tuple(pending)
