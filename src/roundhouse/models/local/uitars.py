"""UI-TARS's grammar, as ByteDance publishes it (its computer-use prompt), read without
exec. Pure.

The model answers `Thought: ...` then `Action: ...`, each action a call: click,
left_double, right_single, drag, hotkey, type, scroll, wait, finished and call_user. A
point is written `<|box_start|>(x,y)<|box_end|>`, `<point>x y</point>`, `(x,y)` or a box
`[x1, y1, x2, y2]` (its centre). UI-TARS-1.5 gives pixels of the image it was sent (which
we smart-resize, factor 28, so that the server's own resize leaves it as it is); the
earlier UI-TARS models give 0-1000 over it. The model's name says which (`uses_pixels`).
"""

from __future__ import annotations

import ast
import re
from typing import Any

from roundhouse.models.local import actions as act
from roundhouse.models.local.actions import Call, GrammarError, Parsed, Pointer, Points

WAIT_SECONDS = 5.0  # "Sleep for 5s and take a screenshot", as the grammar says
SCROLL_NOTCHES = 5

PROMPT = """You are a GUI agent on a Linux desktop. You are given a task, the actions you \
took so far, and screenshots. Give the next action that brings the task closer.

## Output Format
```
Thought: ...
Action: ...
```

## Action Space

click(start_box='<|box_start|>(x1,y1)<|box_end|>')
left_double(start_box='<|box_start|>(x1,y1)<|box_end|>')
right_single(start_box='<|box_start|>(x1,y1)<|box_end|>')
drag(start_box='<|box_start|>(x1,y1)<|box_end|>', end_box='<|box_start|>(x3,y3)<|box_end|>')
hotkey(key='ctrl s') # Keys pressed together, lower case, separated by spaces.
type(content='xxx') # Escape \\', \\" and \\n in content. End content with \\n to submit it.
scroll(start_box='<|box_start|>(x1,y1)<|box_end|>', direction='down or up or right or left')
wait() # Wait 5 s, then look at the screen again.
finished(content='xxx') # The task is done; content is your answer to the person.
call_user() # The task cannot go on without the person's help.

## Note
- Use English in `Thought`.
- In `Thought`, plan in a few words, then say your next action and its target in one \
sentence.

## User Instruction
{instruction}
"""

# The first generation is named by its size right after "ui-tars" (UI-TARS-7B-DPO,
# ui-tars-72b-sft, UI-TARS-2B-SFT); UI-TARS-1.5 and later by their version.
_FIRST_GENERATION = re.compile(r"ui[-_]?tars[-_]\d+b(?![a-z])")


def uses_pixels(model: str) -> bool:
    """UI-TARS-1.5 (and any name that is not of the first generation: the current model's
    convention) points in pixels of the image; UI-TARS 2B/7B/72B (SFT, DPO) on 0-1000."""
    return _FIRST_GENERATION.search(model.lower()) is None


def prompt(instruction: str) -> str:
    return PROMPT.format(instruction=instruction)


def read(text: str, points: Points, pointer: Pointer) -> Parsed:
    """The answer's thought and actions (GrammarError for one outside the grammar)."""
    thought, action = _split(text)
    calls: list[Call] = []
    for name, arguments in _calls(action):
        if name == "finished":
            return Parsed(thought, tuple(calls), "FINISH", str(arguments.get("content") or thought))
        if name == "call_user":
            said = thought or "it needs the person's help"
            return Parsed(thought, tuple(calls), "FAIL", f"the model called the person: {said}")
        found = _call(name, arguments, points, pointer)
        if found is not None:
            calls.append(found)
    return Parsed(thought, tuple(calls))


def _split(text: str) -> tuple[str, str]:
    """The thought (its Thought:, Reflection: or Action_Summary: lines) and the action."""
    # The first line that starts with "Action:" (a text typed may hold the word too); else
    # the last "Action:" on a line with the thought.
    line = re.search(r"^[ \t]*Action:", text, re.M)
    if line is not None:
        head, action = text[: line.start()], text[line.end() :]
    else:
        head, marker, action = text.rpartition("Action:")
        if not marker:
            raise GrammarError(
                "the answer has no 'Action:' line; answer 'Thought: ...' then 'Action: ...'"
            )
    thought = re.sub(r"^\s*(Thought|Reflection|Action_Summary):\s*", "", head.strip(), flags=re.M)
    return thought.strip(), action.strip().strip("`").strip()


# The parameters in order, for a call that gives them by position.
_PARAMETERS = {
    "click": ("start_box",), "left_single": ("start_box",), "left_double": ("start_box",),
    "right_single": ("start_box",), "drag": ("start_box", "end_box"),
    "select": ("start_box", "end_box"), "hotkey": ("key",), "type": ("content",),
    "scroll": ("start_box", "direction"), "wait": (), "finished": ("content",),
    "call_user": (),
}  # fmt: skip
_ALIASES = {"point": "start_box", "start_point": "start_box", "end_point": "end_box"}


def _calls(action: str) -> list[tuple[str, dict[str, Any]]]:
    """Each call of the action part: its name and its literal arguments."""
    try:
        tree = ast.parse(action, mode="exec")
    except SyntaxError:
        return [_loose(action)]
    found = []
    for statement in tree.body:
        if not (
            isinstance(statement, ast.Expr)
            and isinstance(statement.value, ast.Call)
            and isinstance(statement.value.func, ast.Name)
        ):
            raise GrammarError(f"{ast.unparse(statement)!r} is not an action call")
        call = statement.value
        name = call.func.id if isinstance(call.func, ast.Name) else ""
        if name not in _PARAMETERS:
            raise GrammarError(f"{name!r} is not an action; use one of {', '.join(_PARAMETERS)}")
        order = _PARAMETERS[name]
        if len(call.args) > len(order):
            raise GrammarError(f"{name} takes {len(order)} arguments, not {len(call.args)}")
        arguments = {order[i]: _literal(arg, name) for i, arg in enumerate(call.args)}
        for keyword in call.keywords:
            key = _ALIASES.get(keyword.arg or "", keyword.arg or "")
            if key not in order:
                raise GrammarError(f"{name} has no argument {keyword.arg!r}")
            arguments[key] = _literal(keyword.value, name)
        found.append((name, arguments))
    if not found:
        raise GrammarError("the 'Action:' line is empty")
    return found


def _literal(node: ast.expr, name: str) -> Any:
    try:
        return ast.literal_eval(node)
    except ValueError:
        raise GrammarError(f"{name}'s arguments must be plain values") from None


_LOOSE = re.compile(r"^(type|finished)\(content=(['\"])(.*)\2\)\s*$", re.S)


def _loose(action: str) -> tuple[str, dict[str, Any]]:
    """type(content='it's') as the model meant it: a quote left unescaped in the text."""
    found = _LOOSE.match(action)
    if found is None:
        raise GrammarError(f"{action[:120]!r} is not an action call")
    text = found.group(3).replace("\\n", "\n").replace("\\'", "'").replace('\\"', '"')
    return found.group(1), {"content": text}


def _call(name: str, arguments: dict[str, Any], points: Points, pointer: Pointer) -> Call | None:
    if name in ("click", "left_single", "left_double", "right_single"):
        at = _point(arguments, "start_box", name, points)
        button = "right" if name == "right_single" else "left"
        return act.click(at, button, double=name == "left_double", pointer=pointer)
    if name in ("drag", "select"):
        start = _point(arguments, "start_box", name, points)
        return act.drag(start, _point(arguments, "end_box", name, points), pointer)
    if name == "hotkey":
        said = arguments.get("key")
        if not isinstance(said, str) or not said.split():
            raise GrammarError(f"hotkey needs key='ctrl s', not {said!r}")
        return act.keys(said.split())
    if name == "type":
        return act.type_text(arguments.get("content"))
    if name == "scroll":
        direction = arguments.get("direction")
        if "start_box" in arguments:
            at = _point(arguments, "start_box", name, points)
        else:  # where the pointer was, else the middle of the screen
            at = pointer.at or points.screen.to_logical(*(v / 2 for v in points.screen.space))
        return act.scroll(at, str(direction), SCROLL_NOTCHES)
    if name == "wait":
        return act.wait(WAIT_SECONDS)
    raise GrammarError(f"{name!r} is not an action")  # _calls let through only known names


_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def _point(arguments: dict[str, Any], key: str, name: str, points: Points) -> tuple[int, int]:
    """A box or point argument as the desktop's logical pixel: two numbers are the point,
    four a box whose centre is meant."""
    said = arguments.get(key)
    numbers = [float(n) for n in _NUMBER.findall(str(said))] if said is not None else []
    if len(numbers) == 4:
        numbers = [(numbers[0] + numbers[2]) / 2, (numbers[1] + numbers[3]) / 2]
    if len(numbers) != 2:
        raise GrammarError(f"{name} needs {key}='<|box_start|>(x,y)<|box_end|>', not {said!r}")
    return points.logical(numbers[0], numbers[1])
