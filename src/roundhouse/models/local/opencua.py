"""OpenCUA's grammar, as XLANG publishes it (its OSWorld agent): `## Thought`, `## Action`,
`## Code` with a block of pyautogui calls, and computer.triple_click, computer.wait and
computer.terminate. The code is read with ast, never run: each line must be one call of
the list below with literal arguments. Pure.

Its points are of one of three types (`coordinates`): relative, fractions 0-1 of the
screen; qwen25, pixels of the image smart-resized with factor 28 (as OpenCUA-7B and 32B
were trained, on Qwen2.5-VL; a point of two fractions is read as relative, as the authors
read it); absolute, pixels of the screenshot as taken (sent as it is).
"""

from __future__ import annotations

import ast
import re
from typing import Any, Literal

from roundhouse.models.local import actions as act
from roundhouse.models.local.actions import Call, GrammarError, Parsed, Pointer, Points

Coordinates = Literal["relative", "qwen25", "absolute"]
WAIT_SECONDS = 3.0  # computer.wait() names no time

PROMPT = """You are a GUI agent on a Linux desktop. You are given a task and a screenshot \
of the screen. You carry the task out as a series of pyautogui actions.

Answer each step in this format:

## Thought
Where the task stands, what the screen shows that matters, and what to do next.

## Action
The next action in one clear sentence.

## Code
```python
pyautogui.click(x=0.5, y=0.5)
```

The code is one or more lines, each one of these calls with plain values:
pyautogui.click(x, y, clicks=1, button='left'), pyautogui.doubleClick(x, y),
pyautogui.rightClick(x, y), pyautogui.middleClick(x, y), pyautogui.moveTo(x, y),
pyautogui.dragTo(x, y), pyautogui.scroll(clicks, x=x, y=y), pyautogui.hscroll(clicks, x=x, \
y=y), pyautogui.write(message='text'), pyautogui.press('enter'),
pyautogui.hotkey('ctrl', 's'),
computer.triple_click(x, y), computer.wait(), computer.terminate(status='success' or \
'failure', answer='the answer, if the task asks for one').
{points}
"""

_POINTS = {
    "relative": "x and y are fractions of the screen's width and height, from 0 to 1.",
    "qwen25": "x and y are pixels of the screenshot, from its top left corner.",
    "absolute": "x and y are pixels of the screenshot, from its top left corner.",
}


def coordinates(model: str) -> Coordinates:
    """The type a model was trained with: OpenCUA-7B and -32B (on Qwen2.5-VL) qwen25; the
    A3B model (on Kimi-VL) relative. `local.coordinates` overrides it."""
    return "relative" if re.search(r"a3b", model.lower()) else "qwen25"


def prompt(kind: Coordinates) -> str:
    return PROMPT.format(points=_POINTS[kind])


_CODE = re.compile(r"```(?:python|code|py)?\s*\n(.*?)```", re.S)


def read(text: str, points: Points, pointer: Pointer) -> Parsed:
    """The answer's thought and the calls of its code (GrammarError for any other code)."""
    head, marker, tail = text.partition("## Code")
    block = _CODE.search(tail if marker else text)
    if block is None:
        raise GrammarError("the answer has no code: end it with '## Code' and a ```python block")
    thought = re.sub(r"^##\s*(Thought|Action)\s*$", "", head, flags=re.M).strip()
    try:
        tree = ast.parse(block.group(1))
    except SyntaxError as error:
        raise GrammarError(f"the code is not Python: {error.msg} (line {error.lineno})") from None
    calls: list[Call] = []
    for statement in tree.body:
        name, arguments = _called(statement)
        if name == "computer.terminate":
            status = arguments.get("status", "success")
            end: Literal["FINISH", "FAIL"] = "FINISH" if status == "success" else "FAIL"
            said = str(arguments.get("answer") or thought or f"terminated: {status}")
            return Parsed(thought, tuple(calls), end, said)
        found = _call(name, arguments, points, pointer)
        if found is not None:
            calls.append(found)
    if not calls and not tree.body:
        raise GrammarError("the code block is empty")
    return Parsed(thought, tuple(calls))


# Each call roundhouse reads, with its parameters in order (for those given by position).
_PARAMETERS: dict[str, tuple[str, ...]] = {
    "pyautogui.click": ("x", "y", "clicks", "interval", "button"),
    "pyautogui.doubleClick": ("x", "y"),
    "pyautogui.rightClick": ("x", "y"),
    "pyautogui.middleClick": ("x", "y"),
    "pyautogui.moveTo": ("x", "y", "duration"),
    "pyautogui.dragTo": ("x", "y", "duration", "button"),
    "pyautogui.scroll": ("clicks", "x", "y"),
    "pyautogui.hscroll": ("clicks", "x", "y"),
    "pyautogui.write": ("message", "interval"),
    "pyautogui.typewrite": ("message", "interval"),
    "pyautogui.press": ("keys", "presses", "interval"),
    "pyautogui.hotkey": (),  # its keys, by position
    "computer.triple_click": ("x", "y"),
    "computer.wait": ("seconds",),
    "computer.terminate": ("status", "answer"),
}
_IGNORED = {"duration", "interval", "tween", "_pause", "logScreenshot"}  # timing only


def _called(statement: ast.stmt) -> tuple[str, dict[str, Any]]:
    """One line of the code as (name, its literal arguments); GrammarError otherwise."""
    call = statement.value if isinstance(statement, ast.Expr) else None
    if not isinstance(call, ast.Call):
        raise GrammarError(f"{ast.unparse(statement)[:80]!r} is not one call")
    name = ast.unparse(call.func)
    if name not in _PARAMETERS:
        raise GrammarError(f"{name} is not one of the calls allowed: {', '.join(_PARAMETERS)}")
    values = [_literal(arg, name) for arg in call.args]
    if name == "pyautogui.hotkey":
        given = values[0] if len(values) == 1 and isinstance(values[0], list) else values
        return name, {"keys": given}
    order = _PARAMETERS[name]
    if len(values) > len(order):
        raise GrammarError(f"{name} takes at most {len(order)} values by position")
    arguments = dict(zip(order, values, strict=False))
    for keyword in call.keywords:
        if keyword.arg in _IGNORED:
            continue
        if keyword.arg not in order:
            raise GrammarError(f"{name} has no argument {keyword.arg!r}")
        arguments[keyword.arg] = _literal(keyword.value, name)
    return name, arguments


def _literal(node: ast.expr, name: str) -> Any:
    try:
        return ast.literal_eval(node)
    except ValueError:
        raise GrammarError(f"{name}'s arguments must be plain values, not expressions") from None


_CLICKS = {
    "pyautogui.doubleClick": ("left", True),
    "pyautogui.rightClick": ("right", False),
    "pyautogui.middleClick": ("middle", False),
}


def _call(name: str, arguments: dict[str, Any], points: Points, pointer: Pointer) -> Call | None:
    if name == "pyautogui.click":
        clicks = arguments.get("clicks", 1)
        if clicks not in (1, 2):
            raise GrammarError(f"a click of {clicks!r} clicks cannot be done here: 1 or 2")
        at = _point(arguments, points, pointer, name)
        return act.click(at, str(arguments.get("button", "left")), clicks == 2, pointer)
    if name in _CLICKS:
        button, double = _CLICKS[name]
        return act.click(_point(arguments, points, pointer, name), button, double, pointer)
    if name == "pyautogui.moveTo":
        pointer.at = _point(arguments, points, None, name)
        return None  # no tool moves the pointer alone: the next drag starts here
    if name == "pyautogui.dragTo":
        if pointer.at is None:
            raise GrammarError("dragTo starts where the pointer is: moveTo first")
        return act.drag(pointer.at, _point(arguments, points, None, name), pointer)
    if name in ("pyautogui.scroll", "pyautogui.hscroll"):
        amount = arguments.get("clicks")
        if not isinstance(amount, int | float) or isinstance(amount, bool) or amount == 0:
            raise GrammarError(f"{name} needs clicks, a number other than 0")
        middle = points.screen.to_logical(*(v / 2 for v in points.screen.space))
        at = _point(arguments, points, Pointer(pointer.at or middle), name)
        if name == "pyautogui.scroll":
            return act.scroll(at, "up" if amount > 0 else "down", round(amount))
        return act.scroll(at, "right" if amount > 0 else "left", round(amount))
    if name in ("pyautogui.write", "pyautogui.typewrite"):
        return act.type_text(arguments.get("message"))
    if name == "pyautogui.press":
        said = arguments.get("keys")
        presses = arguments.get("presses", 1)
        if not isinstance(presses, int) or not 1 <= presses <= 20:
            raise GrammarError(f"presses must be 1 to 20, not {presses!r}")
        # press(['down', 'down']): one after another, as press('down', presses=2)
        return act.keys_in_turn((said if isinstance(said, list) else [said]) * presses)
    if name == "pyautogui.hotkey":
        return act.keys(list(arguments["keys"]))
    if name == "computer.wait":
        return act.wait(arguments.get("seconds", WAIT_SECONDS))
    raise GrammarError(
        f"{name} cannot be done on this desktop: use pyautogui.doubleClick, or a drag"
    )


def _point(
    arguments: dict[str, Any], points: Points, pointer: Pointer | None, name: str
) -> tuple[int, int]:
    x, y = arguments.get("x"), arguments.get("y")
    if x is None and y is None and pointer is not None and pointer.at is not None:
        return pointer.at
    if x is None or y is None:
        raise GrammarError(f"{name} needs x and y")
    return points.logical(x, y)
