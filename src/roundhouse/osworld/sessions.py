"""What an OSWorld task needs of the session kind it runs on (`batch --session KIND`).

OSWorld's tasks were written for Ubuntu's GNOME on X11. On an X11 desktop every task runs as
on OSWorld's VM. A virtual Wayland session runs no XWayland (an X11 program there fails to
start rather than land on a server nothing can see), so there:
- OSWorld's `python` commands import our pyautogui (standin/pyautogui.py), which makes the
  calls in CALLS through the session's own pointer and keyboard, the agent's;
- Ctrl+Alt+T opens a terminal where the session lets a program bind it (Backend.bind_keys);
- a task is X11 only, and is not run (NOT RUNNABLE, saying why), when a command of its steps
  or of its getters runs an X11 program (X11_PROGRAMS), makes a pyautogui call outside
  CALLS, or one at the pointer's position (a Wayland client cannot read where the pointer
  is), or presses Ctrl+Alt+T where nothing binds it.
This is read from the task file (pure), before any desktop starts.
"""

from __future__ import annotations

import ast
import re
import shlex
from collections.abc import Iterator
from typing import Any

from roundhouse.devices.linux.display.backend import Backend
from roundhouse.osworld.tasks import OsworldTask

# The pyautogui calls the stand-in makes, and those of them that act at a point: given one,
# else pyautogui would act where the pointer is.
AT_A_POINT = frozenset({"click", "doubleClick", "tripleClick", "rightClick", "middleClick",
                        "moveTo"})  # fmt: skip
SCROLLS = frozenset({"scroll", "vscroll", "hscroll"})  # (clicks, x, y)
CALLS = AT_A_POINT | SCROLLS | {"press", "hotkey", "write", "typewrite", "size", "sleep"}
SETTINGS = frozenset({"PAUSE", "FAILSAFE"})
TERMINAL_SHORTCUT = "ctrl+alt+t"  # Ubuntu's GNOME opens a terminal on it
TERMINAL_KEYS = frozenset(TERMINAL_SHORTCUT.split("+"))
X11_PROGRAMS = ("xdotool", "wmctrl", "xsel", "xclip", "xrandr", "xdpyinfo", "xprop", "xwininfo",
                "xset", "xinput", "xkill", "xte", "xev", "xmodmap")  # fmt: skip
_X11_PROGRAM = re.compile(rf"(?<![\w./-])(?:/usr/bin/)?({'|'.join(X11_PROGRAMS)})(?![\w.-])")
COMMAND_GETTERS = frozenset({"vm_command_line", "vm_command_error"})


def x11_only(task: OsworldTask, backend: Backend) -> str:
    """Why the task cannot run on a session of this backend ("" when it can)."""
    if backend.runs_x11_programs:
        return ""
    texts = list(_command_texts(task))
    programs = sorted({m.group(1) for text in texts for m in _X11_PROGRAM.finditer(text)})
    if programs:
        return f"runs {', '.join(programs)}, an X11 program"
    calls: list[str] = []
    terminal = False
    for text in texts:
        if "pyautogui" not in text:
            continue
        found = pyautogui_calls(text)
        if found is None:
            return "a pyautogui command that could not be read"
        calls += [problem for problem, _ in found if problem]
        terminal = terminal or any(keys == TERMINAL_KEYS for _, keys in found)
    if calls:
        return "pyautogui." + ", pyautogui.".join(dict.fromkeys(calls))
    if terminal and backend.bind_keys is None:
        return "it presses Ctrl+Alt+T for a terminal, which nothing binds on this session"
    return ""


def pyautogui_calls(text: str) -> list[tuple[str, frozenset[str]]] | None:
    """Each use of pyautogui in a Python command (or a shell command running one): what the
    stand-in cannot do of it ("" when it can), and the keys of a hotkey; None when no
    Python could be read from it."""
    trees = _python(text)
    if trees is None:
        return None
    found: list[tuple[str, frozenset[str]]] = []
    for tree in trees:
        calls = {id(node.func): node for node in ast.walk(tree) if isinstance(node, ast.Call)}
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Attribute) and _is_pyautogui(node.value)):
                continue
            call = calls.get(id(node))
            if call is None:  # pyautogui.PAUSE = 1, or a function passed around
                assigned = isinstance(node.ctx, ast.Store) and node.attr in SETTINGS
                found.append(("" if assigned else node.attr, frozenset()))
            else:
                keys = _constants(call) if node.attr == "hotkey" else frozenset()
                found.append((_unsupported(node.attr, call), keys))
    return found


def _unsupported(name: str, call: ast.Call) -> str:
    if name not in CALLS:
        return name
    if name in AT_A_POINT and not _given_point(call, first=0):
        return f"{name} at the pointer's position"
    if name in SCROLLS and not _given_point(call, first=1):
        return f"{name} at the pointer's position"
    return ""


def _given_point(call: ast.Call, first: int) -> bool:
    """Whether the call names its point: x and y from argument `first` on, keywords x and y,
    or a point (a tuple) as argument `first`."""
    keywords = {keyword.arg for keyword in call.keywords}
    if {"x", "y"} <= keywords or len(call.args) >= first + 2:
        return True
    return len(call.args) == first + 1 and isinstance(call.args[first], ast.Tuple | ast.List)


def _constants(call: ast.Call) -> frozenset[str]:
    values: list[ast.expr] = []
    for arg in call.args:
        values.extend(arg.elts if isinstance(arg, ast.List | ast.Tuple) else [arg])
    return frozenset(
        v.value.lower() for v in values if isinstance(v, ast.Constant) and isinstance(v.value, str)
    )


def _is_pyautogui(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id == "pyautogui"


def _python(text: str) -> list[ast.Module] | None:
    """The Python of a command: the text itself, else the arguments of a shell command line
    that hold pyautogui (python -c '...')."""
    try:
        return [ast.parse(text)]
    except SyntaxError:
        pass
    try:
        parts = [part for part in shlex.split(text) if "pyautogui" in part]
        return [ast.parse(part) for part in parts] or None
    except (SyntaxError, ValueError):
        return None


def _command_texts(task: OsworldTask) -> Iterator[str]:
    """Every string of the task's steps (config and postconfig), and the commands of its
    command getters."""
    for step in task.steps():
        yield from _strings(step.parameters)
    for getter in task.evaluator.getters():
        if getter.type in COMMAND_GETTERS:
            yield from _strings(getter.config.get("command"))


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list | tuple):
        # An argv: each argument, and the command line they make (python -c CODE).
        for item in value:
            yield from _strings(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
