"""pyautogui for OSWorld's commands on a Wayland session, which runs no X server for the real
one (it speaks X11 through python-xlib). An OSWorld environment on such a session puts this
folder first on its `python`'s module path (osworld/env.py), so `import pyautogui` in a task's
command is this module.

It makes the calls osworld/sessions.py lists (CALLS) through the session's own pointer and
keyboard, the ones the agent's tools use (display/backends.py: wlroots' virtual input,
Mutter's remote desktop, KWin's fake input), with pyautogui's arguments and its pause after
each call. Any other call raises, naming itself: a task file that makes one is not run on
Wayland (sessions.x11_only). Nor is a call at the pointer's position: a Wayland client
cannot read where the pointer is.
"""

from __future__ import annotations

import atexit
import time
from collections.abc import Sequence
from typing import Any

from roundhouse.devices.linux.desktops.desktop import current_desktop
from roundhouse.devices.linux.display.backends import open_display
from roundhouse.devices.linux.display.base import Button, DisplayServer, Input
from roundhouse.osworld.sessions import CALLS

PAUSE = 0.1  # seconds after each call, as pyautogui waits
FAILSAFE = False  # pyautogui's corner check reads the pointer's position: not here
# pyautogui's names of the modifier keys, as display/keys.py names them.
MODIFIERS = {
    "ctrlleft": "ctrl", "ctrlright": "ctrl", "altleft": "alt", "altright": "alt",
    "option": "alt", "optionleft": "alt", "optionright": "alt", "shiftleft": "shift",
    "shiftright": "shift", "win": "super", "winleft": "super", "winright": "super",
    "command": "super",
}  # fmt: skip
BUTTONS: dict[str, Button] = {"left": "left", "right": "right", "middle": "middle",
                              "primary": "left", "secondary": "right"}  # fmt: skip

_display: DisplayServer | None = None


class X11Only(AttributeError):
    """A pyautogui call this stand-in does not make (an AttributeError, as for a name the
    real module lacks)."""


def __getattr__(name: str) -> Any:
    raise X11Only(
        f"pyautogui.{name} is not available on this Wayland session: roundhouse's stand-in "
        f"makes only {', '.join(sorted(CALLS))} (the real pyautogui needs X11)"
    )


def _input() -> Input:
    global _display
    if _display is None:
        _display = open_display(current_desktop())
        atexit.register(_display.close)
    return _display.input


def _point(x: Any, y: Any, call: str) -> tuple[int, int]:
    """pyautogui's point: x and y, or a pair as x."""
    if isinstance(x, Sequence) and not isinstance(x, str) and y is None:
        x, y = x
    if x is None or y is None:
        where = "the pointer's position, which a Wayland client cannot read"
        raise X11Only(f"pyautogui.{call} at {where}")
    return round(float(x)), round(float(y))


def key_name(name: str) -> str:
    """pyautogui's name of a key as display/keys.py names it ("ctrlleft" -> "ctrl")."""
    lowered = name.lower()
    if len(name) == 1:
        return name
    return MODIFIERS.get(lowered, lowered)


def _rest(pause: bool) -> None:
    if pause and PAUSE:
        time.sleep(PAUSE)


def size() -> tuple[int, int]:
    global _display
    _input()
    assert _display is not None
    return _display.screen.size


def sleep(seconds: float) -> None:
    time.sleep(seconds)


def click(
    x: Any = None, y: Any = None, clicks: int = 1, interval: float = 0.0, button: str = "left",
    duration: float = 0.0, tween: Any = None, logScreenshot: Any = None,  # noqa: N803
    _pause: bool = True,
) -> None:  # fmt: skip
    point = _point(x, y, "click")
    which = BUTTONS[button.lower()]
    if interval <= 0:
        _input().click(*point, which, count=clicks)
    else:
        for _ in range(clicks):
            _input().click(*point, which)
            time.sleep(interval)
    _rest(_pause)


def doubleClick(x: Any = None, y: Any = None, interval: float = 0.0, button: str = "left",  # noqa: N802
                duration: float = 0.0, tween: Any = None, _pause: bool = True) -> None:  # fmt: skip
    click(_point(x, y, "doubleClick"), None, 2, interval, button, _pause=_pause)


def tripleClick(x: Any = None, y: Any = None, interval: float = 0.0, button: str = "left",  # noqa: N802
                duration: float = 0.0, tween: Any = None, _pause: bool = True) -> None:  # fmt: skip
    click(_point(x, y, "tripleClick"), None, 3, interval, button, _pause=_pause)


def rightClick(x: Any = None, y: Any = None, duration: float = 0.0, tween: Any = None,  # noqa: N802
               _pause: bool = True) -> None:  # fmt: skip
    click(_point(x, y, "rightClick"), None, 1, 0.0, "right", _pause=_pause)


def middleClick(x: Any = None, y: Any = None, duration: float = 0.0, tween: Any = None,  # noqa: N802
                _pause: bool = True) -> None:  # fmt: skip
    click(_point(x, y, "middleClick"), None, 1, 0.0, "middle", _pause=_pause)


def moveTo(x: Any = None, y: Any = None, duration: float = 0.0, tween: Any = None,  # noqa: N802
           logScreenshot: bool = False, _pause: bool = True) -> None:  # noqa: N803  # fmt: skip
    _input().move(*_point(x, y, "moveTo"))
    _rest(_pause)


def scroll(clicks: float, x: Any = None, y: Any = None, logScreenshot: Any = None,  # noqa: N803
           _pause: bool = True) -> None:  # fmt: skip
    """Up for clicks > 0, as pyautogui scrolls."""
    _input().scroll(*_point(x, y, "scroll"), dy=-round(clicks))
    _rest(_pause)


vscroll = scroll


def hscroll(clicks: float, x: Any = None, y: Any = None, logScreenshot: Any = None,  # noqa: N803
            _pause: bool = True) -> None:  # fmt: skip
    """Right for clicks > 0."""
    _input().scroll(*_point(x, y, "hscroll"), dx=round(clicks))
    _rest(_pause)


def press(keys: str | Sequence[str], presses: int = 1, interval: float = 0.0,
          logScreenshot: Any = None, _pause: bool = True) -> None:  # noqa: N803  # fmt: skip
    """Each key in turn, `presses` times."""
    names = [keys] if isinstance(keys, str) else list(keys)
    for _ in range(presses):
        for name in names:
            _input().press_keys(key_name(name))
            if interval > 0:
                time.sleep(interval)
    _rest(_pause)


def hotkey(*args: str | Sequence[str], interval: float = 0.0, logScreenshot: Any = None,  # noqa: N803
           _pause: bool = True) -> None:  # fmt: skip
    """The keys held together, in order: hotkey("ctrl", "s") or hotkey(["ctrl", "s"])."""
    _input().press_keys(combo(*args))
    _rest(_pause)


def combo(*args: str | Sequence[str]) -> str:
    """hotkey's keys as one combination for display/keys.py ("ctrl+alt+t")."""
    keys = [key for arg in args for key in ([arg] if isinstance(arg, str) else arg)]
    return "+".join(key_name(key) for key in keys)


def write(message: str | Sequence[str], interval: float = 0.0, logScreenshot: Any = None,  # noqa: N803
          _pause: bool = True) -> None:  # fmt: skip
    """Type the text; a list is of key names, pressed in turn (as typewrite takes it)."""
    if not isinstance(message, str):
        press(list(message), interval=interval, _pause=False)
    elif interval <= 0:
        _input().type_text(message)
    else:
        for char in message:
            _input().type_text(char)
            time.sleep(interval)
    _rest(_pause)


typewrite = write
