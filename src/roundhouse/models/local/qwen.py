"""Qwen-VL's computer_use function, as the Qwen team publishes it (its cookbook's computer
use), and the model's <tool_call> answers read. Pure.

The system prompt declares one function, computer_use, in a <tools> block; the model
answers `<tool_call>{"name": "computer_use", "arguments": {"action": ...}}</tool_call>`,
one or several. roundhouse's own tools (an application by name, a window's controls, the
shell) are declared beside it in the same block, and their calls taken as they are.
Qwen2.5-VL points in pixels of the image it was sent (smart-resized,
factor 28: the size the prompt states); Qwen3-VL is told the screen is 1000x1000 and
points on that grid (0-999) over an image smart-resized with factor 32, and has
triple_click, hscroll and answer besides. The model's name says which (`version`).
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from roundhouse.models.base import OfferedTool
from roundhouse.models.local import actions as act
from roundhouse.models.local.actions import Call, GrammarError, Parsed, Pointer, Points

Version = Literal["2.5", "3"]
GRID = 1000  # Qwen3-VL's screen, whatever the image

_ACTIONS = {
    "key": "Press keys together, in order: `keys` (['ctrl', 's']).",
    "type": "Type a string of text (`text`) on the keyboard.",
    "mouse_move": "Move the pointer to `coordinate`.",
    "left_click": "Click the left mouse button at `coordinate` (else where the pointer is).",
    "left_click_drag": "Drag from where the pointer is to `coordinate`.",
    "right_click": "Click the right mouse button at `coordinate`.",
    "middle_click": "Click the middle mouse button at `coordinate`.",
    "double_click": "Double-click the left mouse button at `coordinate`.",
    "scroll": "Scroll the mouse wheel by `pixels` notches: positive up, negative down.",
    "wait": "Wait `time` seconds for a change.",
    "terminate": "End the task, with `status` success or failure.",
}
_QWEN3_ACTIONS = {
    "triple_click": "Triple-click the left mouse button at `coordinate`.",
    "hscroll": "Scroll sideways by `pixels` notches: positive right, negative left.",
    "answer": "Give the person the answer (`text`) the task asked for, and end the task.",
}


def version(model: str) -> Version:
    """Qwen3-VL (and later) or Qwen2.5-VL, by the model's name; ValueError for neither."""
    name = model.lower()
    if re.search(r"qwen[-_]?3", name):
        return "3"
    if re.search(r"qwen[-_]?2[._]?5", name):
        return "2.5"
    raise ValueError(
        f"qwen-vl:{model} names neither Qwen2.5-VL nor Qwen3-VL (say qwen2.5-vl or qwen3-vl "
        "in the name): their coordinates differ"
    )


def actions(which: Version) -> dict[str, str]:
    return _ACTIONS | _QWEN3_ACTIONS if which == "3" else dict(_ACTIONS)


def function(which: Version, screen_size: tuple[int, int]) -> dict[str, Any]:
    """The computer_use function as the prompt declares it."""
    width, height = (GRID, GRID) if which == "3" else screen_size
    described = "\n".join(f"* `{name}`: {said}" for name, said in actions(which).items())
    return {
        "type": "function",
        "function": {
            "name": "computer_use",
            "description": (
                "Use a mouse and keyboard to work a Linux desktop, and see it as screenshots.\n"
                f"* The screen's resolution is {width}x{height}.\n"
                "* Look at the screenshot for where an element is before you point at it; "
                "point at the middle of the element.\n"
                "* An application may take a moment to open or to respond: wait, and look "
                "again.\n"
                "The actions:\n" + described
            ),
            "parameters": {
                "type": "object",
                "properties": {
                    "action": {"type": "string", "enum": list(actions(which))},
                    "keys": {"type": "array", "description": "keys, for `key`"},
                    "text": {"type": "string", "description": "for `type` and `answer`"},
                    "coordinate": {
                        "type": "array",
                        "description": "(x, y): pixels from the left and from the top edge",
                    },
                    "pixels": {"type": "number", "description": "for `scroll` and `hscroll`"},
                    "time": {"type": "number", "description": "seconds, for `wait`"},
                    "status": {"type": "string", "enum": ["success", "failure"]},
                },
                "required": ["action"],
            },
        },
    }


def system_prompt(
    which: Version, screen_size: tuple[int, int], others: tuple[OfferedTool, ...] = ()
) -> str:
    """The function in a <tools> block, roundhouse's own tools (`others`) beside it, and
    how to call them (the Hermes form Qwen is trained on)."""
    functions = [function(which, screen_size)] + [
        {
            "type": "function",
            "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
        }
        for t in others
    ]
    declared = "\n".join(json.dumps(f, ensure_ascii=False) for f in functions)
    return (
        "You are a helpful assistant.\n\n# Tools\n\nYou may call one or more functions to "
        "assist with the user query.\n\nYou are provided with function signatures within "
        f"<tools></tools> XML tags:\n<tools>\n{declared}\n</tools>\n\nFor each function call, "
        "return a json object with function name and arguments within <tool_call></tool_call> "
        'XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n'
        "</tool_call>"
    )


_TOOL_CALL = re.compile(r"<tool_call>(.*?)(?:</tool_call>|$)", re.S)


def read(
    text: str,
    which: Version,
    points: Points,
    pointer: Pointer,
    custom: frozenset[str] = frozenset(),
) -> Parsed:
    """The answer's calls in order: computer_use's actions, and calls of roundhouse's own
    tools (`custom`) as they are (GrammarError for any other)."""
    bodies = _TOOL_CALL.findall(text)
    thought = _TOOL_CALL.sub("", text).strip()
    if not bodies:
        raise GrammarError(
            "the answer calls no function: call computer_use in <tool_call></tool_call> "
            "(to end the task, its terminate action)"
        )
    calls: list[Call] = []
    for body in bodies:
        own = _own_call(body, custom)
        if own is not None:
            calls.append(own)
            continue
        arguments = _arguments(body, which)
        action = arguments["action"]
        if action == "terminate":
            status = arguments.get("status", "success")
            end: Literal["FINISH", "FAIL"] = "FINISH" if status == "success" else "FAIL"
            return Parsed(thought, tuple(calls), end, thought or f"terminated: {status}")
        if action == "answer":
            return Parsed(thought, tuple(calls), "FINISH", str(arguments.get("text") or thought))
        found = _call(action, arguments, points, pointer)
        if found is not None:
            calls.append(found)
    return Parsed(thought, tuple(calls))


def _own_call(body: str, custom: frozenset[str]) -> Call | None:
    """A call of one of roundhouse's own tools, its arguments as given; None otherwise."""
    try:
        called = json.loads(body.strip())
    except json.JSONDecodeError:
        return None  # _arguments says why
    if not isinstance(called, dict) or called.get("name") not in custom:
        return None
    arguments = called.get("arguments")
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError:
            raise GrammarError(f"the arguments of {called['name']} are not JSON") from None
    if not isinstance(arguments, dict):
        raise GrammarError(f"the arguments of {called['name']} must be an object")
    return str(called["name"]), arguments


def _arguments(body: str, which: Version) -> dict[str, Any]:
    try:
        called = json.loads(body.strip())
    except json.JSONDecodeError as error:
        said = body.strip()[:120]
        raise GrammarError(f"a <tool_call> is not JSON ({error.msg}): {said!r}") from None
    if not isinstance(called, dict):
        raise GrammarError('a <tool_call> must be {"name": "computer_use", "arguments": {...}}')
    if called.get("name") != "computer_use":
        raise GrammarError(f"there is no function {called.get('name')!r}: call computer_use")
    arguments: Any = called.get("arguments")
    if isinstance(arguments, str):  # some servers send the arguments as a JSON string
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError:
            arguments = None
    if not isinstance(arguments, dict) or arguments.get("action") not in actions(which):
        named = arguments.get("action") if isinstance(arguments, dict) else arguments
        raise GrammarError(
            f"{named!r} is not an action of computer_use: {', '.join(actions(which))}"
        )
    return arguments


_CLICKS = {
    "left_click": ("left", False),
    "right_click": ("right", False),
    "middle_click": ("middle", False),
    "double_click": ("left", True),
}


def _call(action: str, arguments: dict[str, Any], points: Points, pointer: Pointer) -> Call | None:
    if action == "mouse_move":
        pointer.at = _point(arguments, points, None, action)
        return None  # no tool moves the pointer alone: the next click or drag starts here
    if action in _CLICKS:
        button, double = _CLICKS[action]
        return act.click(_point(arguments, points, pointer.at, action), button, double, pointer)
    if action == "left_click_drag":
        if pointer.at is None:
            raise GrammarError("left_click_drag starts where the pointer is: mouse_move first")
        return act.drag(pointer.at, _point(arguments, points, None, action), pointer)
    if action == "key":
        said = arguments.get("keys")
        return act.keys(said if isinstance(said, list) else [said])
    if action == "type":
        return act.type_text(arguments.get("text"))
    if action in ("scroll", "hscroll"):
        amount = arguments.get("pixels")
        if not isinstance(amount, int | float) or isinstance(amount, bool) or amount == 0:
            raise GrammarError(f"{action} needs pixels, a number other than 0")
        middle = points.screen.to_logical(*(v / 2 for v in points.screen.space))
        at = _point(arguments, points, pointer.at or middle, action)
        if action == "scroll":
            return act.scroll(at, "up" if amount > 0 else "down", round(amount))
        return act.scroll(at, "right" if amount > 0 else "left", round(amount))
    if action == "wait":
        return act.wait(arguments.get("time", 1))
    raise GrammarError(
        f"{action} cannot be done on this desktop; use double_click, or a drag to select"
    )


def _point(
    arguments: dict[str, Any], points: Points, otherwise: tuple[int, int] | None, action: str
) -> tuple[int, int]:
    said = arguments.get("coordinate")
    if said is None and otherwise is not None:
        return otherwise
    if not isinstance(said, list) or len(said) != 2:
        raise GrammarError(f"{action} needs coordinate [x, y], not {said!r}")
    return points.logical(said[0], said[1])
