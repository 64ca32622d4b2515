"""What an OSWorld task needs of the session kind (osworld/sessions.py), read from its file:
on X11 everything runs; on a Wayland session a task runs when its pyautogui calls are the
stand-in's, at a point, and it runs no X11 program."""

from __future__ import annotations

from typing import Any

import pytest

from roundhouse.devices.linux.display import backends
from roundhouse.osworld.sessions import x11_only
from roundhouse.osworld.standin import pyautogui as standin
from roundhouse.osworld.tasks import OsworldTask
from tests.osworld.conftest import EXAMPLES

X11, SWAY, GNOME = (backends.named(kind) for kind in ("x11", "sway", "gnome"))


def task(*commands: Any, getter: Any = None) -> OsworldTask:
    config = [{"type": "execute", "parameters": {"command": c, "shell": isinstance(c, str)}}
              for c in commands]  # fmt: skip
    result = {"type": "vm_command_line", "command": getter} if getter else None
    return OsworldTask.model_validate(
        {"id": "t", "instruction": "x", "config": config,
         "evaluator": {"func": "exact_match", "result": result}}
    )  # fmt: skip


def python(code: str) -> list[str]:
    return ["python", "-c", code]


CLICK = "import pyautogui; pyautogui.click({SCREEN_WIDTH_HALF}, {SCREEN_HEIGHT_HALF})"
TERMINAL = "import pyautogui; pyautogui.hotkey('ctrl', 'alt', 't'); pyautogui.write('ls')"


@pytest.mark.parametrize(
    ("commands", "why"),
    [
        ([python(CLICK)], ""),
        ([python("import pyautogui; pyautogui.press(['enter']); pyautogui.scroll(-2, 1, 2)")], ""),
        ([python("import pyautogui\npyautogui.PAUSE = 1\npyautogui.hotkey(['ctrl', 's'])")], ""),
        ([python("import pyautogui; pyautogui.doubleClick(x=5, y=6); pyautogui.click((1,2))")], ""),
        ([f'python -c "{CLICK}"'], ""),  # a shell command line running Python
        (["pip install pyautogui"], ""),  # names it, makes no call
        ([python("import pyautogui; pyautogui.mouseDown(); pyautogui.mouseUp()")],
         "pyautogui.mouseDown, pyautogui.mouseUp"),
        ([python("import pyautogui; pyautogui.scroll(-20)")],
         "pyautogui.scroll at the pointer's position"),
        ([python("import pyautogui; pyautogui.click()")],
         "pyautogui.click at the pointer's position"),
        ([python("import pyautogui; pyautogui.screenshot('a.png')")], "pyautogui.screenshot"),
        (["xsel --clipboard < a.txt"], "runs xsel, an X11 program"),
        ([["/usr/bin/wmctrl", "-a", "gedit"]], "runs wmctrl, an X11 program"),
        (["python -c 'import pyautogui; pyautogui.click(1,'"],
         "a pyautogui command that could not be read"),
    ],
)  # fmt: skip
def test_a_wayland_session_runs_what_the_stand_in_can_do(commands: list[Any], why: str) -> None:
    assert x11_only(task(*commands), SWAY) == why
    assert x11_only(task(*commands), X11) == ""  # X11 runs everything


def test_a_getters_command_counts_and_ctrl_alt_t_needs_a_binding() -> None:
    assert x11_only(task(getter="xprop -root"), SWAY) == "runs xprop, an X11 program"
    assert x11_only(task(getter="xsel"), X11) == ""
    opens_terminal = task(python(TERMINAL))
    assert x11_only(opens_terminal, SWAY) == ""  # bound through sway's IPC
    assert "Ctrl+Alt+T" in x11_only(opens_terminal, GNOME)


def test_our_example_tasks_all_run_on_sway() -> None:
    from roundhouse.osworld.tasks import load_examples

    for item in load_examples(EXAMPLES):
        assert x11_only(item.task, SWAY) == "", item.task.id


def test_the_stand_in_names_keys_as_the_keyboard_does() -> None:
    assert standin.combo("ctrl", "alt", "t") == "ctrl+alt+t"
    assert standin.combo(["shift", "ctrl", "e"]) == "shift+ctrl+e"
    assert standin.combo("winleft", "q") == "super+q"
    assert standin.key_name("F11") == "f11" and standin.key_name("A") == "A"
    with pytest.raises(AttributeError, match="pyautogui.screenshot is not available"):
        standin.screenshot  # noqa: B018 (the attribute itself is the test)
    with pytest.raises(AttributeError, match="pointer's position"):
        standin.click()
