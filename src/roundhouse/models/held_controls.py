"""A control or a window in a recorded answer, held by what it is as well as by its number.

An AppAgent's answer names a control by number and name together ({"id": 56, "name":
"Name"}), and the two must agree. Numbers follow reading order, so they move with whatever
else the window shows: Chromium's toolbar and its notices (as root: "--no-sandbox"),
another version's buttons, a tree reader that lists a little more or less. A recording
made where the form's Name field was 56 failed where it was 48.

So --record notes, beside such an answer, the control it named: its role, its name, which
of the controls of that role and name it was (the 1st, the 2nd...), and whether it was in a
dialog. Replayed where the number names another control, the answer is pointed at the
control that is the same there. Where the number still fits, nothing changes; nor where the
window is not of the kind the answer was made for (a dialog not open yet), nor for a
nameless control when the window has more than one of its role without a name (which of
them is meant cannot be told): the answer is then checked as it is, against a fresh look
when the window is still changing. gedit's one nameless text is 9 on X11 and 7 on sway,
whose title bar has no Minimize and Maximize buttons. A dialog's nameless control may have
a name in the next version (Nautilus 48's "Pattern"): the one control of its role is taken.

An application's next version may reword a control: LibreOffice 7.4's "Use Word 2007–365
Format!" is 25.2's "Use Word 2010–365 Document Format!". Where no control of the role has
the recorded name, the one of that role that says the same in other words is taken (see
_reworded): the answer's name is then the name it has here.

A window is named by its id (the host's select_window), which is the display server's: an X
window id depends on how many clients had connected before the application did, and a
Wayland compositor numbers its windows its own way. So --record notes the window's
application, its title and its rank among that application's windows, and the replay points
the answer at the window that is the same here.

An answer of several actions names a control (or a window) per action, all of the list its
model was given: each is held, and pointed at, by the action's place in the list (`index`).
Pure functions: no I/O.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel, ConfigDict

from roundhouse.devices.contract import Control, WindowInfo
from roundhouse.models.observation import AppObservation, HostObservation


class HeldControl(BaseModel):
    """The control an answer named, as --record saw it."""

    model_config = ConfigDict(extra="forbid")
    role: str
    name: str
    nth: int = 1  # among the controls of this role and name, in reading order
    dialog: bool = False  # in a dialog of the application, in front of its own window


def hold_control(answer: str, observation: object, index: int = 0) -> HeldControl | None:
    """What control `answer` (its action at `index`) names by number, in the window it was
    given for."""
    if not isinstance(observation, AppObservation):
        return None
    control = _by_label(observation.controls, _number(answer, "id", index))
    if control is None:
        return None
    alike = _alike(observation.controls, control.role, control.name)
    return HeldControl(
        role=control.role,
        name=control.name,
        nth=alike.index(control) + 1,
        dialog=observation.in_dialog,
    )


def point_at(answer: str, observation: object, held: HeldControl, index: int = 0) -> str:
    """`answer` with its control number (its action at `index`'s) pointed at the control
    `held` describes in this window, when the number it has names another one here."""
    label = _number(answer, "id", index)
    if label is None or not isinstance(observation, AppObservation):
        return answer
    if observation.in_dialog != held.dialog:
        return answer
    controls = observation.controls
    now = _by_label(controls, label)
    if now is not None and (now.role, now.name) == (held.role, held.name):
        return answer
    if held.name.strip():
        alike = _alike(controls, held.role, held.name) or _reworded(controls, held)
    else:
        alike = _alike(controls, held.role, held.name) or _named_since(controls, held)
        if len(alike) != 1 or held.nth != 1:
            return answer  # one of several nameless controls: which one cannot be told
    if not alike:
        return answer  # nothing like it here: the answer is checked, and refused, as it is
    target = alike[min(held.nth, len(alike)) - 1]
    value = json.loads(answer)
    arguments = _actions(value)[index]["arguments"]
    arguments["id"] = target.label
    if "name" in arguments:  # the id and the name must agree (agents/responses.check_control)
        arguments["name"] = target.name
    return json.dumps(value, ensure_ascii=False)


def _named_since(controls: tuple[Control, ...], held: HeldControl) -> list[Control]:
    """A dialog's nameless control that this version names: the one control of its role
    in the window, none of that role nameless (Nautilus 43's Select Items Matching field
    has no name, 48's is "Pattern"). Empty otherwise."""
    if not held.dialog:
        return []
    of_role = [c for c in controls if c.role == held.role]
    return of_role if len(of_role) == 1 else []


def _by_label(controls: tuple[Control, ...], label: int | None) -> Control | None:
    return next((c for c in controls if c.label == label), None)


def _alike(controls: tuple[Control, ...], role: str, name: str) -> list[Control]:
    return [c for c in controls if c.role == role and c.name == name]


def _reworded(controls: tuple[Control, ...], held: HeldControl) -> list[Control]:
    """The controls of held's role whose name says held's in other words: each name holds at
    least half of the other's words (so "Save" is not "Don't Save", nor "Folder" "Save to
    Folder"), and no control of the role with another name shares as many of held's words
    ("Use Word 2010–365 Document Format!" shares four with "Use Word 2007–365 Format!",
    "Use ODF Format!" two). Empty when none does, or when it is a tie."""
    words = _words(held.name)
    shared = {c.name: len(words & _words(c.name)) for c in controls if c.role == held.role}
    best = max(shared, key=lambda name: shared[name], default=None)
    if best is None or any(n != best and k == shared[best] for n, k in shared.items()):
        return []
    if 2 * shared[best] < max(len(words), len(_words(best))):
        return []
    return _alike(controls, held.role, best)


def _words(name: str) -> set[str]:
    return set(re.findall(r"\w+", name.casefold()))


def action_count(answer: str) -> int | None:
    """How many actions `answer` lists, when its "action" is a list; None for one action
    (or an answer that cannot be read)."""
    try:
        value: Any = json.loads(answer)
        action = value["action"]
    except (json.JSONDecodeError, KeyError, TypeError):
        return None
    return len(action) if isinstance(action, list) else None


def _actions(value: Any) -> list[Any]:
    """An answer's actions as a list: one action is a list of one."""
    action = value["action"]
    return action if isinstance(action, list) else [action]


def _number(answer: str, argument: str, index: int = 0) -> int | None:
    """The number an answer's action (at `index`) gives `argument` (a control's "id", a
    "window_id")."""
    try:
        value: Any = json.loads(answer)
        number = _actions(value)[index]["arguments"][argument]
    except (json.JSONDecodeError, KeyError, TypeError, IndexError):
        return None
    return number if isinstance(number, int) and not isinstance(number, bool) else None


class HeldWindow(BaseModel):
    """The window a host's answer named, as --record saw it."""

    model_config = ConfigDict(extra="forbid")
    application: str
    title: str
    nth: int = 1  # among the windows of this application, in the order they were listed


def hold_window(answer: str, observation: object, index: int = 0) -> HeldWindow | None:
    """What window `answer` (its action at `index`) names by id, among the windows the host
    was shown."""
    if not isinstance(observation, HostObservation):
        return None
    window = _by_id(observation.windows, _number(answer, "window_id", index))
    if window is None:
        return None
    alike = _same_application(observation.windows, window.application)
    return HeldWindow(
        application=window.application, title=window.title, nth=alike.index(window) + 1
    )


def point_at_window(answer: str, observation: object, held: HeldWindow, index: int = 0) -> str:
    """`answer` with its window id (its action at `index`'s) pointed at the window `held`
    describes here, when the id it has names no window of that application."""
    window_id = _number(answer, "window_id", index)
    if window_id is None or not isinstance(observation, HostObservation):
        return answer
    now = _by_id(observation.windows, window_id)
    if now is not None and now.application == held.application:
        return answer
    alike = _same_application(observation.windows, held.application)
    if not alike:
        # Display servers name an application differently (a Qt script is "qt_app.py" by
        # its X11 WM_CLASS and "python" by its Wayland app id): its one window of that
        # title is the one.
        alike = [w for w in observation.windows if w.title == held.title][:2]
        if len(alike) != 1:
            return answer  # nothing like it here: the answer is checked, and refused, as it is
    titled = [w for w in alike if w.title == held.title]
    target = titled[0] if len(titled) == 1 else alike[min(held.nth, len(alike)) - 1]
    value = json.loads(answer)
    _actions(value)[index]["arguments"]["window_id"] = target.xid
    return json.dumps(value, ensure_ascii=False)


def _by_id(windows: tuple[WindowInfo, ...], window_id: int | None) -> WindowInfo | None:
    return next((w for w in windows if w.xid == window_id), None)


def _same_application(windows: tuple[WindowInfo, ...], application: str) -> list[WindowInfo]:
    return [w for w in windows if w.application == application]
