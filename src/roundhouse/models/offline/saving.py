"""The offline planner's saving: ctrl+s, and Save As through the application's real dialog,
answering what it asks on the way (replace a file, keep a format). Pure logic: no I/O.
"""

from __future__ import annotations

import posixpath
from typing import Literal

from roundhouse.devices.contract import Control, ToolName
from roundhouse.models.observation import AppObservation, PastStep
from roundhouse.models.offline.apps import keep_format
from roundhouse.models.offline.ops import (
    BUTTON_ROLES,
    TEXT_ROLES,
    Decision,
    Done,
    Op,
    click,
    fill_field,
    keys,
    names,
    plain,
    reobserve,
)

SAVE_AS_KEYS = "ctrl+shift+s"


def saved(mine: list[PastStep], obs: AppObservation) -> Decision:
    """ctrl+s pressed: saved once nothing asks for more (LibreOffice's question whether to
    keep a format not its own is answered yes) and the title no longer marks the document
    changed (gedit's "*"). A Save dialog means the document has no name yet: FAIL."""
    keep = keep_format(obs)
    clicked = {plain(str(s.arguments.get("name", ""))) for s in mine if s.function}
    if keep is not None and plain(keep.name) not in clicked:
        return click(keep.name, obs, "Keep the format the document has.")
    waited = sum(1 for step in mine if step.status == "SCREENSHOT")
    if obs.in_dialog:
        asks = f"saving opened {obs.window.title!r}: the document has no file name yet"
        return reobserve(waited, "the save to end", f"{asks} (say: save it as PATH)")
    if obs.window.title.startswith("*"):
        unsaved = f"the title {obs.window.title!r} still marks the document changed"
        return reobserve(waited, "the title to show it saved", unsaved)
    return Done("saved")


def save_as(op: Op, mine: list[PastStep], obs: AppObservation) -> Decision:
    """Save As through the real dialog: open it, name the file, confirm, check the title."""
    path = op.text
    if not mine:
        return keys(SAVE_AS_KEYS)
    waited = sum(1 for step in mine if step.status == "SCREENSHOT")
    in_dialog = _is_save_dialog(obs)
    phase = _save_as_phase(mine)
    if phase == "open":
        field = _name_field(obs) if in_dialog else None
        if field is None:
            return reobserve(waited, "the Save dialog")
        return fill_field(
            field, path, "The Save dialog is open", "Put the full path in the name field."
        )
    if phase == "named":
        return keys("Return")
    clicked = {
        plain(str(step.arguments.get("name", "")))
        for step in mine
        if step.function == ToolName.CLICK_CONTROL
    }
    # The question whether to replace a file of that name: a dialog's button, never the
    # application's own "Find and Replace".
    replace = next(
        (
            c
            for c in obs.controls
            if obs.in_dialog and c.role in BUTTON_ROLES and plain(c.name).startswith("replace")
        ),
        None,
    )
    if replace is not None and plain(replace.name) not in clicked:
        return click("Replace", obs, "A file of that name exists: replace it (the user is asked).")
    keep = keep_format(obs)
    if keep is not None and plain(keep.name) not in clicked:
        # LibreOffice asks whether to keep a format not its own: the one asked for, yes.
        return click(keep.name, obs, "Keep the format the file name asks for.")
    if not in_dialog and posixpath.basename(path) in obs.window.title:
        return Done(f"saved as {path}")
    if in_dialog:  # it may be closing still; a dialog that stays means the save failed
        still_open = f"the Save dialog is still open ({obs.window.title!r}); controls: {names(obs)}"
        return reobserve(waited, "the Save dialog to close", still_open)
    name = posixpath.basename(path)
    return reobserve(
        waited,
        f"the window title to name {name}",
        f"waited in vain for the window title to name {name} (it is {obs.window.title!r})",
    )


def _save_as_phase(mine: list[PastStep]) -> Literal["open", "named", "submitted"]:
    functions = [step.function for step in mine if step.function]
    if ToolName.SET_TEXT not in functions:
        return "open"
    after_name = functions[functions.index(ToolName.SET_TEXT) + 1 :]
    return "submitted" if ToolName.PRESS_KEYS in after_name else "named"


def _is_save_dialog(obs: AppObservation) -> bool:
    """A window of the application's own, in front of its main one, with a text field."""
    return obs.in_dialog and any(c.role in TEXT_ROLES for c in obs.controls)


def _name_field(obs: AppObservation) -> Control | None:
    fields = [c for c in obs.controls if c.role in TEXT_ROLES]
    named = [
        c
        for c in fields
        if c.name.strip().rstrip(":").casefold() in ("name", "file name", "filename")
    ]
    return next(iter(named or fields), None)
