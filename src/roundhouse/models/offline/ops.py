"""The offline GUI planner's vocabulary: an operation of a request, what carrying it out
decides next, and the helpers every operation uses (keys, waiting for a dialog, finding a
control by name). Pure logic: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from roundhouse.devices.contract import CLICKABLE_ROLES, Control, ToolName
from roundhouse.models.observation import AppObservation, PastStep
from roundhouse.models.offline.shell import answer

TEXT_ROLES = frozenset(
    {"text", "entry", "password text", "document text", "paragraph", "terminal", "editbar"}
)
ENTRY_ROLES = frozenset({"text", "entry", "password text", "editbar"})  # one line of input
BUTTON_ROLES = CLICKABLE_ROLES | {"button"}
MAX_REOBSERVE = 4  # SCREENSHOT steps an operation may wait for a dialog

OpKind = Literal[
    "open",
    "type",
    "click",
    "keys",
    "save_as",
    "save",
    "close",
    "goto",
    "read",
    "cell",
    "new_folder",
    "rename",
]


@dataclass(frozen=True)
class Op:
    kind: OpKind
    phrase: str  # the words of the request it came from
    # type, cell: the text; open: the application; keys: the keys; save_as: the path;
    # goto: the address; read: the row of a table; new_folder: its name; rename: the new name
    text: str = ""
    # type: the field's name; click: the control's name; read: the column, or a cell (B3);
    # cell: the cell (A1); rename: the file's name now
    target: str = ""
    # click: the kind of control the request said ("button", "link", "tab"), if it said one
    role: str = ""


@dataclass(frozen=True)
class Done:
    summary: str  # what was done, in words: the subtask's result is made of them
    value: str | None = None  # a value read ("tell me the Price of Pears"), as it was read


@dataclass(frozen=True)
class Failed:
    reason: str
    final: bool = False  # no look again can mend it (a control that is disabled)


Decision = dict[str, Any] | Done | Failed


def keys(pressed: str) -> dict[str, Any]:
    return answer(
        "CONTINUE",
        "Keys will do it.",
        f"Press {pressed}.",
        function=ToolName.PRESS_KEYS,
        arguments={"keys": pressed},
    )


def fill_field(field: Control, text: str, seen: str, plan: str) -> dict[str, Any]:
    """Put `text` in `field`: `seen` says what is open, `plan` what goes in."""
    return answer(
        "CONTINUE",
        f"{seen}; control {field.label} takes the name.",
        plan,
        function=ToolName.SET_TEXT,
        arguments={"id": field.label, "name": field.name, "text": text},
    )


def close_window() -> dict[str, Any]:
    return answer(
        "CONTINUE",
        "The window is to be closed.",
        "Close it as its close button does.",
        function=ToolName.CLOSE_WINDOW,
        arguments={},
    )


def reobserve(waited: int, what: str, failure: str | None = None) -> Decision:
    if waited >= MAX_REOBSERVE:
        return Failed(failure or f"waited in vain for {what}")
    return answer("SCREENSHOT", f"Waiting for {what}.", "Look again.")


# --- operations as stages --------------------------------------------------------------------

# A stage acts (an answer), ends the operation (Done, Failed), or waits: the string says
# what for, and is the failure once the waiting is over.
Stage = Callable[[AppObservation], Decision | str]


def staged(stages: Sequence[Stage], mine: list[PastStep], obs: AppObservation) -> Decision:
    """Carry out an operation as a fixed series of actions, each when the window is ready
    for it: stage k runs once k actions were taken, the last one decides when it is done."""
    acted = [index for index, step in enumerate(mine) if step.function]
    at = min(len(acted), len(stages) - 1)
    waited = sum(1 for step in mine[acted[-1] + 1 if acted else 0 :] if not step.function)
    decision = stages[at](obs)
    if isinstance(decision, str):
        return reobserve(waited, decision, f"waited in vain for {decision}")
    return decision


# --- controls by name ---------------------------------------------------------------------


# The roles a kind of control has, by the word a request calls it: "the Order button" is a
# push button, never a page tab, a link or a heading of that name. A word not here ("icon",
# "option") names no role: any control of that name will do.
SAID_ROLES: dict[str, frozenset[str]] = {
    "button": frozenset({"push button", "toggle button", "button", "push button menu"}),
    "checkbox": frozenset({"check box", "check menu item"}),
    "check box": frozenset({"check box", "check menu item"}),
    "tab": frozenset({"page tab"}),
    "menu item": frozenset({"menu item", "check menu item", "radio menu item", "menu"}),
    "link": frozenset({"link"}),
    "radio button": frozenset({"radio button", "radio menu item"}),
}


def find_control(
    controls: tuple[Control, ...], name: str, roles: frozenset[str], said: str = ""
) -> Control | None:
    """A control by name, as a person reads it: exact first, then a prefix, then a part;
    mnemonics ignored. Of the kind the request `said` ("button": SAID_ROLES), when it said
    one. Of two that match alike, one that is enabled before a disabled one, and one in the
    window's document (a web page) before the window's chrome (its tabs, title bar, menus):
    a page titled "Order" names its tab so too."""
    wanted = plain(name)
    roles = roles & SAID_ROLES.get(said, roles)
    names = [(c, plain(c.name)) for c in controls if c.role in roles]
    for found in (
        [c for c, known in names if known == wanted],
        [c for c, known in names if known.startswith(wanted)],
        [c for c, known in names if wanted in known],
    ):
        if found:
            return min(found, key=lambda c: ("disabled" in c.states, not c.in_document))
    return None


def plain(name: str) -> str:
    return re.sub(r"[_…]|\.\.\.", "", name).strip().casefold()


def names(obs: AppObservation, roles: frozenset[str] | None = None) -> str:
    shown = [
        f"{c.label} {c.name!r} ({c.role})" for c in obs.controls if roles is None or c.role in roles
    ]
    return "; ".join(shown[:30]) or "none"


def text_field(obs: AppObservation) -> Control | None:
    """The one-line field of a small dialog (a name to give), else its first text field."""
    fields = [c for c in obs.controls if c.role in TEXT_ROLES]
    return next(iter([c for c in fields if c.role in ENTRY_ROLES] or fields), None)


def click(target: str, obs: AppObservation, thought: str, said: str = "") -> Decision:
    """Click the control named `target`, of the kind the request `said` ("button"), if it
    said one. A disabled one is not clicked: the operation fails, naming it."""
    control = find_control(obs.controls, target, BUTTON_ROLES, said)
    kind = f"{said} " if said in SAID_ROLES else "control "
    if control is None:
        others = find_control(obs.controls, target, BUTTON_ROLES)
        if others is not None:
            # Another kind of control of that name is no answer: "the Order button" is not
            # the page's tab. Looking again may show the one meant.
            return Failed(
                f"no {kind}named {target!r}: control {others.label} {others.name!r} is a"
                f" {others.role}, not a {said}; controls: {names(obs, BUTTON_ROLES)}"
            )
        return Failed(f"no {kind}named {target!r}; controls: {names(obs, BUTTON_ROLES)}")
    if "disabled" in control.states:
        return Failed(
            f"control {control.label} {control.name!r} ({control.role}) is disabled:"
            " it cannot be clicked",
            final=True,
        )
    return answer(
        "CONTINUE",
        f"Control {control.label} is {control.name!r} ({control.role}).",
        thought,
        function=ToolName.CLICK_CONTROL,
        arguments={"id": control.label, "name": control.name},
    )
