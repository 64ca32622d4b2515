"""OpenAI's computer tools, and their actions as roundhouse's tool calls. Pure.

Two tools: the preview's `computer_use_preview` (computer-use-preview: a declared display
and environment, one action a call) and the GA `computer` (gpt-5.4 and later: no display
declared, and a call may carry an `actions` list). `uses_ga` says which a model takes.

The model answers `computer_call` items, each one action ({type: click, x, y, button},
double_click, drag {path}, keypress {keys}, move, screenshot, scroll {x, y, scroll_x,
scroll_y}, type {text}, wait) and perhaps `pending_safety_checks`; points are pixels of the
declared display, which is the image sent. A call with safety checks is CONFIRM: the person
is asked before it runs (--yes says yes), and only a yes is acknowledged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from roundhouse.devices.contract import ToolName
from roundhouse.models.computer.calls import drag_call
from roundhouse.models.computer.keys import chord
from roundhouse.models.computer.screen import ScreenMap

ENVIRONMENT = "linux"
UNSUPPORTED = "computer_unsupported"  # no tool has this name: the answer is refused
WAIT_SECONDS = 1.0  # the preview's wait names no duration


# gpt-5.4 (2026-03) and the models after it take the GA tool, and refuse the preview's.
_GA_MODEL = re.compile(r"^gpt-(5\.([4-9]|\d\d)|[6-9])")


def uses_ga(model: str, setting: str = "auto") -> bool:
    """Whether `model` is sent the GA `computer` tool: the `openai.computer_tool` setting,
    else the model's name."""
    if setting != "auto":
        return setting == "computer"
    return _GA_MODEL.match(model) is not None


def computer_tool(screen: ScreenMap, ga: bool = False) -> dict[str, Any]:
    if ga:  # the screenshot is the display: its pixels are what the model points in
        return {"type": "computer"}
    width, height = screen.sent
    return {
        "type": "computer_use_preview",
        "display_width": width,
        "display_height": height,
        "environment": ENVIRONMENT,
    }


class Unsupported(ValueError):
    """An action roundhouse's tools cannot do (yet)."""


def keypress(keys: list[Any]) -> str:
    """["CTRL", "S"] -> "ctrl+s": the keys pressed together, as press_keys takes them."""
    try:
        return chord(keys)
    except ValueError:
        raise Unsupported(f"keypress needs keys, not {keys!r}") from None


def as_tool_call(action: dict[str, Any], screen: ScreenMap) -> tuple[str, dict[str, Any]] | None:
    """One action as a roundhouse tool call, points on the desktop; None for a screenshot."""
    kind = action.get("type")
    if kind == "screenshot":
        return None
    if kind in ("click", "double_click"):
        button = {"left": "left", "right": "right", "wheel": "middle"}.get(
            action.get("button", "left")
        )
        if button is None:
            raise Unsupported(f"the {action.get('button')!r} button is not supported here")
        x, y = _point(action, screen)
        arguments: dict[str, Any] = {"x": x, "y": y}
        if button != "left":
            arguments["button"] = button
        if kind == "double_click":
            arguments["double"] = True
        return ToolName.CLICK_COORDINATES, arguments
    if kind == "type":
        text = action.get("text")
        if not isinstance(text, str) or not text:
            raise Unsupported("type needs text")
        return ToolName.TYPE_TEXT, {"text": text}
    if kind == "keypress":
        return ToolName.PRESS_KEYS, {"keys": keypress(action.get("keys") or [])}
    if kind == "scroll":
        x, y = _point(action, screen)
        dx, dy = action.get("scroll_x", 0), action.get("scroll_y", 0)
        if not isinstance(dx, int | float) or not isinstance(dy, int | float) or dx == dy == 0:
            raise Unsupported("scroll needs scroll_x or scroll_y")
        if abs(dy) >= abs(dx):
            direction, amount = ("down" if dy > 0 else "up"), abs(dy)
        else:
            direction, amount = ("right" if dx > 0 else "left"), abs(dx)
        notches = max(1, round(amount / 100))  # pixels, as a browser scrolls 100 a notch
        return ToolName.SCROLL, {"x": x, "y": y, "direction": direction, "amount": notches}
    if kind == "drag":
        path = action.get("path")
        if not isinstance(path, list) or len(path) < 2:
            raise Unsupported("drag needs a path of at least two points")
        return drag_call(_point(path[0], screen), _point(path[-1], screen))
    if kind == "wait":
        return ToolName.WAIT, {"seconds": WAIT_SECONDS}
    raise Unsupported(
        f"the action {kind!r} is not supported here; use click, double_click, drag, keypress, "
        "scroll, type, wait or screenshot"
    )


def _point(where: Any, screen: ScreenMap) -> tuple[int, int]:
    x, y = (where.get("x"), where.get("y")) if isinstance(where, dict) else (None, None)
    if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in (x, y)):
        raise Unsupported(f"a point needs x and y, not {where!r}")
    assert isinstance(x, int | float) and isinstance(y, int | float)
    width, height = screen.sent
    if not (0 <= x < width and 0 <= y < height):
        raise Unsupported(f"({x}, {y}) is outside the display of {width}x{height}")
    return screen.to_logical(x, y)


# ------------------------------------------------------------------ an answer


@dataclass(frozen=True)
class PendingCall:
    """A computer_call the next request answers: its call_id, where its actions stand in
    the answer's list (None: screenshots alone; `count` of them from `index`: the GA
    tool's batch), why it cannot run, and its safety checks."""

    call_id: str
    index: int | None = None
    why: str | None = None
    checks: tuple[dict[str, Any], ...] = ()
    count: int = 1

    @property
    def indices(self) -> range:
        return range(0) if self.index is None else range(self.index, self.index + self.count)


def read_answer(
    response: dict[str, Any], screen: ScreenMap
) -> tuple[dict[str, Any], tuple[PendingCall, ...]]:
    """A response's output as roundhouse's answer, and the calls the next request answers.
    Text alone ends the round (FINISH with it); a refusal is FAIL, named."""
    output = response.get("output") or []
    texts, refusals = [], []
    for item in output:
        if item.get("type") == "message":
            for part in item.get("content") or []:
                if part.get("type") == "output_text":
                    texts.append(str(part.get("text", "")))
                elif part.get("type") == "refusal":
                    refusals.append(str(part.get("refusal", "")))
    thought = "\n".join(texts).strip()
    answer: dict[str, Any] = {"observation": "", "thought": thought}
    if refusals:
        said = ": " + " ".join(refusals) if any(refusals) else ""
        return {**answer, "action": {"status": "FAIL"}, "result": f"the model refused{said}"}, ()
    calls = [item for item in output if item.get("type") == "computer_call"]
    if not calls:
        if response.get("status", "completed") == "completed":
            return {**answer, "action": {"status": "FINISH"}, "result": thought}, ()
        why = (response.get("incomplete_details") or {}).get("reason") or response.get("status")
        said = f"the answer stopped ({why}) with neither an action nor a final answer"
        return {**answer, "action": {"status": "FAIL"}, "result": said}, ()
    actions: list[dict[str, Any]] = []
    pending: list[PendingCall] = []
    asked: list[str] = []
    for call in calls:
        call_id = str(call.get("call_id", ""))
        checks = tuple(c for c in call.get("pending_safety_checks") or [] if isinstance(c, dict))
        asked += [str(c.get("message") or c.get("code") or c.get("id")) for c in checks]
        given = call.get("actions")  # the GA tool's batch, else the preview's one action
        batch = given if isinstance(given, list) else [call.get("action") or {}]
        try:
            found = [as_tool_call(a if isinstance(a, dict) else {}, screen) for a in batch]
        except Unsupported as error:
            pending.append(PendingCall(call_id, len(actions), str(error), checks))
            actions.append({"function": UNSUPPORTED, "arguments": {}, "status": "CONTINUE"})
            continue
        done = [f for f in found if f is not None]
        if not done and checks:  # a look with a safety check is asked about all the same
            done = [(ToolName.WAIT, {"seconds": 0})]
        if not done:
            pending.append(PendingCall(call_id))
            continue
        pending.append(PendingCall(call_id, len(actions), None, checks, len(done)))
        for number, (function, arguments) in enumerate(done):
            # Asked once, before the call's first action: a no ends the round there.
            status = "CONFIRM" if checks and number == 0 else "CONTINUE"
            actions.append({"function": function, "arguments": arguments, "status": status})
    answer["action"] = actions or {"status": "CONTINUE"}
    if asked:
        answer["safety_checks"] = asked
    return answer, tuple(pending)
