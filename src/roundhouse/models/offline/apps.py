"""What the offline planner does in a web browser, a spreadsheet and a file manager: go to
an address, read a value off a table or a cell, type into a cell, make a folder, rename a
file. Each is a fixed series of keys and dialog fields (offline_ops.staged), chosen so that
it holds in any window: keys where the window's own controls vary (a browser's toolbar, a
file manager's view), a dialog's field by its role. Pure logic: no I/O.
"""

from __future__ import annotations

import re
from typing import Any

from roundhouse.devices.contract import Control, ToolName
from roundhouse.models.observation import AppObservation, PastStep
from roundhouse.models.offline.ops import (
    BUTTON_ROLES,
    TEXT_ROLES,
    Decision,
    Done,
    Failed,
    Op,
    Stage,
    fill_field,
    keys,
    plain,
    staged,
    text_field,
)
from roundhouse.models.offline.shell import answer

CELL_NAME = re.compile(r"^([A-Z]{1,3})([1-9][0-9]{0,6})$")
MAX_MOVES = 100  # arrow presses a cell may be away from A1
CELL_ROLES = frozenset({"table cell", "cell", "column header", "row header", "table row"})


# --- the web browser -----------------------------------------------------------------------


def go_to(op: Op, mine: list[PastStep], obs: AppObservation) -> Decision:
    """The address bar by its key (ctrl+l), whatever the browser calls it."""
    url = op.text
    stages: list[Stage] = [
        lambda _: keys("ctrl+l"),
        lambda _: _type_here(url, "The address bar has the focus."),
        lambda _: keys("Return"),
        lambda _: Done(f"went to {url}"),
    ]
    return staged(stages, mine, obs)


def _type_here(text: str, seen: str) -> dict[str, Any]:
    return answer(
        "CONTINUE",
        seen,
        "Type into the focused control.",
        function=ToolName.TYPE_TEXT,
        arguments={"text": text},
    )


# --- reading a value -----------------------------------------------------------------------


def read(op: Op, obs: AppObservation) -> Decision:
    """A cell's value by its name (B3), or a table's value by row and column: the control
    in the row of the one that says `op.text` and the column of the one that says
    `op.target`, read off their rectangles. The value is said in the summary, for people,
    and kept as it is beside it, for a later subtask's "that value"."""
    if CELL_NAME.match(op.target.upper()):
        name = op.target.upper()
        cell = next((c for c in obs.controls if c.role in CELL_ROLES and c.name == name), None)
        if cell is None:
            shown = [c.name for c in obs.controls if c.role in CELL_ROLES][:20]
            return Failed(f"cell {name} is not in view; cells in view: {shown or 'none'}")
        value = (cell.text or "").strip()
        return Done(f"cell {name} is {value}" if value else f"cell {name} is empty", value)
    row, column = op.text, op.target
    keys_ = _saying(obs, row)
    headers = _saying(obs, column)
    cells = list(dict.fromkeys(_label(c) for c in obs.controls if c.role in CELL_ROLES))
    if not keys_ or not headers:
        missing = row if not keys_ else column
        said = [cell for cell in cells if cell][:30]
        return Failed(f"nothing in {obs.window.title!r} says {missing!r}; its table: {said}")
    for key in keys_:
        for header in headers:
            found = _at(obs, row=key, column=header)
            if found is not None:
                return Done(f"the {column} of {row} is {_label(found)}", _label(found))
    return Failed(f"no value stands in the row of {row!r} and the column of {column!r}")


def _label(control: Control) -> str:
    return (control.name or control.text or "").strip()


def _saying(obs: AppObservation, text: str) -> list[Control]:
    wanted = plain(text)
    return [c for c in obs.controls if plain(_label(c)) == wanted]


def _at(obs: AppObservation, *, row: Control, column: Control) -> Control | None:
    """The smallest labelled control whose centre lies in `row`'s band and `column`'s."""
    found = [
        c
        for c in obs.controls
        if c is not row
        and c is not column
        and _label(c)
        and row.rect.top <= c.rect.center[1] < row.rect.bottom
        and column.rect.left <= c.rect.center[0] < column.rect.right
    ]
    return min(found, key=lambda c: c.rect.width * c.rect.height, default=None)


# --- the spreadsheet -----------------------------------------------------------------------


def into_cell(
    op: Op, mine: list[PastStep], obs: AppObservation, after: str | None = None
) -> Decision:
    """ctrl+Home goes to A1, arrows to the cell; what is typed there, and Return, enters it.
    No moves where the cursor is in the cell already (they would show nothing, and a list
    of entries stopped at each): the cell below `after`, the cell the operation before
    entered (Return moved the cursor down from it), or the cell the sheet shows as its
    cursor's (a new sheet's A1)."""
    cell = _cell(op.target)
    if cell is None:
        return Failed(f"{op.target!r} is no cell name like A1")
    column, row = cell
    if column + row - 2 > MAX_MOVES:
        return Failed(f"cell {op.target} is more than {MAX_MOVES} arrow presses from A1")
    moves = " ".join(["ctrl+Home"] + ["Right"] * (column - 1) + ["Down"] * (row - 1))
    stages: list[Stage] = [
        lambda _: keys(moves),
        lambda _: _type_here(op.text + "\n", f"The cursor is in cell {op.target.upper()}."),
        lambda seen: _entered(seen, op.target.upper(), op.text),
    ]
    acted = [step for step in mine if step.function]
    if acted:  # decided when the operation began: the cursor has moved on since
        there = acted[0].function == ToolName.TYPE_TEXT
    else:
        above = _cell(after) if after is not None else None
        there = above == (column, row - 1) or (after is None and cursor_cell(obs) == cell)
    if there:
        stages = stages[1:]
    return staged(stages, mine, obs)


def _entered(obs: AppObservation, name: str, value: str) -> Decision | str:
    """Entered, once cell `name` shows `value` where that can be told: a cell in view, a
    value not a formula (its result is not known here). A number is compared as a number
    (the sheet may show 12.50 as 12.5); a text shown otherwise (a format, a correction)
    stands. Else what to wait for, and then the failure."""
    done = Done(f"typed {value!r} into cell {name}")
    cell = next((c for c in obs.controls if c.role in CELL_ROLES and c.name == name), None)
    if cell is None or value.startswith("=") or not value.strip():
        return done
    shown = (cell.text or "").strip()
    wanted, seen = _number(value), _number(shown)
    if shown and (wanted is None or seen is None or wanted == seen):
        return done
    return f"cell {name} to show {value!r} (it shows {shown!r})"


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def cursor_cell(obs: AppObservation) -> tuple[int, int] | None:
    """The cell a sheet's cursor is in, where the sheet has the focus: the Name Box, a text
    field beside it, shows its name ("A1"). None where that cannot be told."""
    if not any(c.role == "table" and "focused" in c.states for c in obs.controls):
        return None
    names = [
        c.text for c in obs.controls if c.role == "text" and c.text and CELL_NAME.match(c.text)
    ]
    return _cell(names[0]) if len(names) == 1 else None


def _cell(name: str) -> tuple[int, int] | None:
    """A cell's column and row (both from 1): "B3" is (2, 3)."""
    match = CELL_NAME.match(name.upper())
    if match is None:
        return None
    return _column_number(match.group(1)), int(match.group(2))


def _column_number(letters: str) -> int:
    number = 0
    for letter in letters:
        number = number * 26 + ord(letter) - ord("A") + 1
    return number


def keep_format(obs: AppObservation) -> Control | None:
    """The button of LibreOffice's "Keep current format" question that keeps the format
    asked for ("Use Word 2007-365!", "Use Excel 2007-365!"), not its own ("Use ODF Format!")."""
    if not obs.in_dialog:
        return None
    buttons = [c for c in obs.controls if c.role in BUTTON_ROLES]
    return next(
        (c for c in buttons if plain(c.name).startswith("use ") and "odf" not in plain(c.name)),
        None,
    )


# --- the file manager ------------------------------------------------------------------------


def new_folder(op: Op, mine: list[PastStep], obs: AppObservation) -> Decision:
    """ctrl+shift+n opens the file manager's New Folder dialog; its field takes the name."""
    name = op.text
    stages: list[Stage] = [
        lambda _: keys("ctrl+shift+n"),
        lambda seen: _name_in_dialog(seen, name, "the New Folder dialog"),
        lambda _: keys("Return"),
        lambda seen: _closed(seen, f"made the folder {name}"),
    ]
    return staged(stages, mine, obs)


def rename(op: Op, mine: list[PastStep], obs: AppObservation) -> Decision:
    """Select the file by its name (ctrl+s: Select by Pattern), then F2 renames it."""
    old, new = op.target, op.text
    stages: list[Stage] = [
        lambda _: keys("ctrl+s"),
        lambda seen: _name_in_dialog(seen, old, "the Select by Pattern dialog"),
        lambda _: keys("Return"),
        lambda seen: keys("F2") if not seen.in_dialog else "the Select by Pattern dialog to close",
        lambda seen: _name_in_dialog(
            seen, new, f"a Rename dialog (is there a file named {old!r}?)", holding=old
        ),
        lambda _: keys("Return"),
        lambda seen: _closed(seen, f"renamed {old} to {new}"),
    ]
    return staged(stages, mine, obs)


def _closed(obs: AppObservation, summary: str) -> Done | str:
    return Done(summary) if not obs.in_dialog else f"the dialog {obs.window.title!r} to close"


def _name_in_dialog(
    obs: AppObservation, text: str, dialog: str, holding: str | None = None
) -> Decision | str:
    """The name goes into the dialog's field; with `holding`, else into the focused field
    that holds that name (Files renames in a popover of its own window, not a dialog)."""
    field = text_field(obs) if obs.in_dialog else None
    if field is None and holding is not None:
        field = next(
            (
                c
                for c in obs.controls
                if c.role in TEXT_ROLES and "focused" in c.states and c.text == holding
            ),
            None,
        )
    if field is None:
        return dialog
    return fill_field(field, text, f"{obs.window.title!r} is open", "Put the name in the field.")
