"""Gemini's computer_use tool, and its predefined functions as roundhouse's tool calls. Pure.

The tool is `{"computerUse": {"environment", "excludedPredefinedFunctions"}}`; the model
calls its predefined functions (Google's reference client: click_at, hover_at,
type_text_at, key_combination, scroll_document, scroll_at, drag_and_drop, wait_5_seconds,
and the browser's open_web_browser, search, navigate, go_back, go_forward), their points
on a 0-999 grid over the screenshot, and roundhouse's own tools, declared beside it. What
makes no sense on a desktop is excluded: the browser's five, and hover_at (no tool moves
the pointer alone). A call may carry `safety_decision: {decision: require_confirmation,
explanation}`: its first action is then CONFIRM, the person is asked, and a yes is
acknowledged in the function response.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from roundhouse.devices.contract import ToolName
from roundhouse.models.computer.calls import drag_call
from roundhouse.models.computer.keys import chord
from roundhouse.models.computer.screen import ScreenMap

ENVIRONMENT = "ENVIRONMENT_DESKTOP"
PREDEFINED = (
    "open_web_browser", "click_at", "hover_at", "type_text_at", "scroll_document",
    "scroll_at", "wait_5_seconds", "go_back", "go_forward", "search", "navigate",
    "key_combination", "drag_and_drop",
)  # fmt: skip
EXCLUDED = ("open_web_browser", "search", "navigate", "go_back", "go_forward", "hover_at")
SCROLL_NOTCHES = 5  # scroll_document: about a screenful
UNSUPPORTED = "computer_unsupported"  # no tool has this name: the answer is refused


class UnknownModel(ValueError):
    """A model whose computer-use functions roundhouse does not map."""


_VERSION = re.compile(r"gemini-(\d+)(?:\.(\d+))?")


def check_model(model: str) -> None:
    """Gemini 2.5's computer-use model and the Gemini 3 previews call the functions above;
    3.5 and later name theirs anew (click, type, hotkey, ...), not mapped here yet."""
    found = _VERSION.search(model.lower())
    if found is None:
        raise UnknownModel(f"gemini:{model} names no Gemini version (gemini-2.5-computer-use-...)")
    if (int(found.group(1)), int(found.group(2) or 0)) >= (3, 5):
        raise UnknownModel(
            f"gemini:{model}: Gemini 3.5 and later name their computer-use functions anew "
            "(click, type, hotkey, ...), which roundhouse does not map yet; use "
            "gemini-2.5-computer-use-preview-10-2025 or a Gemini 3 preview"
        )


def computer_tool(environment: str = ENVIRONMENT) -> dict[str, Any]:
    return {
        "computerUse": {"environment": environment, "excludedPredefinedFunctions": list(EXCLUDED)}
    }


def declaration(name: str, description: str, parameters: dict[str, Any]) -> dict[str, Any]:
    """One of roundhouse's own tools, its schema as JSON Schema (parametersJsonSchema: our
    schemas hold anyOf for optional values, which the OpenAPI subset of `parameters` lacks)."""
    return {"name": name, "description": description, "parametersJsonSchema": parameters}


class Unsupported(ValueError):
    """A call roundhouse cannot do: said back to the model in its function response."""


def as_tool_calls(
    name: str, args: dict[str, Any], screen: ScreenMap
) -> list[tuple[str, dict[str, Any]]]:
    """One predefined function call as roundhouse's tool calls, points on the desktop."""
    if name == "click_at":
        x, y = _point(args, "x", "y", screen)
        return [(ToolName.CLICK_COORDINATES, {"x": x, "y": y})]
    if name == "type_text_at":
        text = args.get("text")
        if not isinstance(text, str):
            raise Unsupported("type_text_at needs text")
        x, y = _point(args, "x", "y", screen)
        calls: list[tuple[str, dict[str, Any]]] = [(ToolName.CLICK_COORDINATES, {"x": x, "y": y})]
        if args.get("clear_before_typing", True):  # as the reference client: select, delete
            calls.append((ToolName.PRESS_KEYS, {"keys": "ctrl+a BackSpace"}))
        if text:
            calls.append((ToolName.TYPE_TEXT, {"text": text}))
        if args.get("press_enter", True):
            calls.append((ToolName.PRESS_KEYS, {"keys": "Return"}))
        return calls
    if name == "key_combination":
        keys = args.get("keys")
        if not isinstance(keys, str) or not keys.strip("+ "):
            raise Unsupported(f"key_combination needs keys ('control+s'), not {keys!r}")
        try:
            return [(ToolName.PRESS_KEYS, {"keys": chord(keys.split("+"))})]
        except ValueError as error:
            raise Unsupported(str(error)) from None
    if name in ("scroll_document", "scroll_at"):
        direction = args.get("direction")
        if direction not in ("up", "down", "left", "right"):
            raise Unsupported(f"direction must be up, down, left or right, not {direction!r}")
        if name == "scroll_document":
            x, y = screen.to_logical(500, 500)
            notches = SCROLL_NOTCHES
        else:
            x, y = _point(args, "x", "y", screen)
            magnitude = args.get("magnitude", 800)  # on the grid, as the reference client
            if not isinstance(magnitude, int | float) or magnitude <= 0:
                raise Unsupported(f"magnitude must be a positive number, not {magnitude!r}")
            notches = max(1, min(50, round(magnitude / 100)))
        return [(ToolName.SCROLL, {"x": x, "y": y, "direction": direction, "amount": notches})]
    if name == "drag_and_drop":
        start = _point(args, "x", "y", screen)
        end = _point(args, "destination_x", "destination_y", screen)
        return [drag_call(start, end)]
    if name == "wait_5_seconds":
        return [(ToolName.WAIT, {"seconds": 5.0})]
    raise Unsupported(f"{name} is not available on this desktop")


def _point(args: dict[str, Any], xs: str, ys: str, screen: ScreenMap) -> tuple[int, int]:
    x, y = args.get(xs), args.get(ys)
    if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in (x, y)):
        raise Unsupported(f"{xs} and {ys} must be numbers on the 0-999 grid, not {x!r}, {y!r}")
    assert isinstance(x, int | float) and isinstance(y, int | float)
    if not (0 <= x <= 999 and 0 <= y <= 999):
        raise Unsupported(f"({x}, {y}) is off the 0-999 grid")
    return screen.to_logical(x, y)


# ------------------------------------------------------------------ an answer


@dataclass(frozen=True)
class Pending:
    """A functionCall the next request answers: its name and id, the indices of its
    actions in the answer's list, why it cannot run, and its safety decision (if any)."""

    name: str
    id: str | None
    indices: tuple[int, ...] = ()
    why: str | None = None
    confirm: str | None = None  # the explanation of a decision that requires confirmation
    predefined: bool = True


REFUSED = frozenset({"SAFETY", "PROHIBITED_CONTENT", "BLOCKLIST", "SPII", "RECITATION"})


def read_answer(
    response: dict[str, Any], screen: ScreenMap, custom: frozenset[str]
) -> tuple[dict[str, Any], tuple[Pending, ...], list[dict[str, Any]]]:
    """A generateContent response as roundhouse's answer, the calls the next request
    answers, and the model's parts as they are to go back (thought signatures kept)."""
    blocked = (response.get("promptFeedback") or {}).get("blockReason")
    candidates = response.get("candidates") or [{}]
    candidate = candidates[0] if isinstance(candidates[0], dict) else {}
    parts = [p for p in (candidate.get("content") or {}).get("parts") or [] if isinstance(p, dict)]
    finish = candidate.get("finishReason") or ("BLOCKED" if blocked else None)
    thought = "\n".join(
        str(p["text"]) for p in parts if isinstance(p.get("text"), str) and not p.get("thought")
    ).strip()
    answer: dict[str, Any] = {"observation": "", "thought": thought}
    if blocked or finish in REFUSED:
        said = f"the model refused ({blocked or finish})" + (f": {thought}" if thought else "")
        return {**answer, "action": {"status": "FAIL"}, "result": said}, (), parts
    calls = [p["functionCall"] for p in parts if isinstance(p.get("functionCall"), dict)]
    if not calls:
        if finish in (None, "STOP"):
            return {**answer, "action": {"status": "FINISH"}, "result": thought}, (), parts
        said = f"the answer stopped ({finish}) with neither an action nor a final answer"
        return {**answer, "action": {"status": "FAIL"}, "result": said}, (), parts
    actions: list[dict[str, Any]] = []
    pending: list[Pending] = []
    asked: list[str] = []
    for call in calls:
        name, args = str(call.get("name")), dict(call.get("args") or {})
        given_id = call.get("id")
        decision = args.pop("safety_decision", None)
        confirm = None
        if isinstance(decision, dict) and decision.get("decision") == "require_confirmation":
            confirm = str(decision.get("explanation") or "the model asks for a confirmation")
        first = len(actions)
        if name in custom:
            actions.append({"function": name, "arguments": args, "status": "CONTINUE"})
            pending.append(Pending(name, given_id, (first,), None, confirm, predefined=False))
        else:
            try:
                if name not in PREDEFINED:
                    raise Unsupported(f"there is no function {name!r}")
                found = as_tool_calls(name, args, screen)
            except Unsupported as error:
                actions.append(
                    {
                        "function": UNSUPPORTED,
                        "arguments": {"why": str(error)},
                        "status": "CONTINUE",
                    }
                )
                pending.append(Pending(name, given_id, (first,), str(error), confirm))
                continue
            # One function call's parts run as one (type_text_at's click, then its typing).
            actions += [
                {"function": f, "arguments": a, "status": "CONTINUE", "joined_to_next": True}
                for f, a in found
            ]
            actions[-1].pop("joined_to_next")
            pending.append(
                Pending(name, given_id, tuple(range(first, len(actions))), None, confirm)
            )
        if confirm is not None:
            actions[first]["status"] = "CONFIRM"  # asked once, before the call's first action
            asked.append(confirm)
    answer["action"] = actions
    if asked:
        answer["safety_checks"] = asked
    return answer, tuple(pending), parts
