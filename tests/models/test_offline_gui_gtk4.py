"""The offline planner in GNOME's GTK 4 applications, on observations shaped like theirs:
Calculator's keypad (filled in a moment after its window maps), GNOME Text Editor's "Save
changes?" question on close, and Files (Nautilus 43), which renames in a popover of its own
window rather than in a dialog."""

from __future__ import annotations

from roundhouse.devices.contract import ToolName
from roundhouse.models.observation import PastStep
from roundhouse.models.offline.ops import Op
from roundhouse.models.offline.subtask import Handed
from tests.models.test_offline_gui_apps import action, app, control, step

KEYPAD = [
    control(13, "push button", "7", (16, 288, 71, 328)),
    control(14, "push button", "8", (83, 288, 138, 328)),
    control(25, "push button", "3", (150, 384, 205, 424)),
]
CLICKS = "click the 7 button, click the 3 button"
SEVEN_THREE = (
    Op("click", "click the 7 button", target="7"),
    Op("click", "click the 3 button", target="3"),
)


def test_a_keypad_not_in_the_tree_yet_is_looked_at_again_then_pressed() -> None:
    work = Handed(SEVEN_THREE)
    waiting = work.next(app(CLICKS, [], title="Calculator"))
    assert action(waiting) == ("SCREENSHOT", None, {})
    history = [step(waiting)]
    seven = work.next(app(CLICKS, KEYPAD, history, title="Calculator"))
    assert action(seven) == ("CONTINUE", ToolName.CLICK_CONTROL, {"id": 13, "name": "7"})
    history.append(step(seven, {"route": "action:click", "effect": "confirmed"}))
    three = work.next(app(CLICKS, KEYPAD, history, title="Calculator"))
    assert action(three) == ("CONTINUE", ToolName.CLICK_CONTROL, {"id": 25, "name": "3"})
    history.append(step(three))
    done = work.next(app(CLICKS, KEYPAD, history, title="Calculator"))
    assert action(done)[0] == "FINISH" and done["result"] == "clicked '7'; clicked '3'"


def test_a_button_that_never_comes_fails_naming_the_buttons_there_are() -> None:
    work = Handed((Op("click", "click the Print button", target="Print"),))
    history: list[PastStep] = []
    for _ in range(5):
        answer = work.next(app("click the Print button", KEYPAD, history, title="Calculator"))
        history.append(step(answer))
    assert action(answer)[0] == "FAIL"
    assert "no control named 'Print'" in answer["result"] and "'7'" in answer["result"]


CLOSE = Op("close", "close the window")
RENAME = Op("rename", "rename readme.txt to notes.txt", "notes.txt", "readme.txt")
SAVE_CHANGES = [
    control(4, "push button", "Cancel", (10, 100, 80, 130)),
    control(5, "push button", "Discard", (90, 100, 160, 130)),
    control(6, "push button", "Save", (170, 100, 240, 130)),
]


def test_closing_asks_save_changes_and_the_next_operation_answers() -> None:
    subtask = "close the window, click the Save button"
    work = Handed((CLOSE, Op("click", "click the Save button", target="Save")))
    close = work.next(app(subtask, [], title="notes.txt - Text Editor"))
    assert action(close) == ("CONTINUE", ToolName.CLOSE_WINDOW, {})
    asked = app(subtask, SAVE_CHANGES, [step(close)], title="Save Changes?", in_dialog=True)
    save = work.next(asked)
    assert action(save) == ("CONTINUE", ToolName.CLICK_CONTROL, {"id": 6, "name": "Save"})


def test_a_question_on_close_with_nothing_to_answer_it_fails_saying_what_it_asks() -> None:
    work = Handed((CLOSE,))
    close = work.next(app("close the window", [], title="notes.txt - Text Editor"))
    asked = app("close the window", SAVE_CHANGES, [step(close)], "Save Changes?", in_dialog=True)
    failed = work.next(asked)
    assert action(failed)[0] == "FAIL"
    assert "'Save Changes?'" in failed["result"] and "'Discard'" in failed["result"]


def test_files_renames_in_a_popover_of_its_own_window() -> None:
    subtask = "rename readme.txt to notes.txt"
    work = Handed((RENAME,))
    history: list[PastStep] = []
    field = control(3, "text", "", (10, 60, 300, 90))
    for controls, title, function in (
        ([], "project", "press_keys"),  # ctrl+s: Select Items Matching
        ([field], "Select Items Matching", "set_text"),
        ([field], "Select Items Matching", "press_keys"),  # Return
        ([], "project", "press_keys"),  # F2
    ):
        answer = work.next(app(subtask, controls, history, title, in_dialog=title != "project"))
        assert action(answer)[1] == function, answer
        history.append(step(answer))
    popover = control(20, "text", "New Filename", (305, 148, 545, 182), text="readme.txt")
    popover = popover.model_copy(update={"states": ["focused", "editable"]})
    named = work.next(app(subtask, [popover], history, "project"))
    assert action(named) == (
        "CONTINUE",
        ToolName.SET_TEXT,
        {"id": 20, "name": "New Filename", "text": "notes.txt"},
    )


def test_an_operation_done_is_not_undone_by_the_dialog_the_next_one_opens() -> None:
    """A folder made, then a rename: the rename's Select Items Matching dialog is not the
    New Folder dialog the first operation waited to close."""
    subtask = "create a folder named reports, rename readme.txt to notes.txt"
    work = Handed((Op("new_folder", "create a folder named reports", "reports"), RENAME))
    field = control(3, "text", "Folder name", (10, 60, 300, 90))
    history: list[PastStep] = []
    for controls, title in (
        ([], "project"),
        ([field], "New Folder"),
        ([field], "New Folder"),
        ([], "project"),
    ):
        answer = work.next(app(subtask, controls, history, title, in_dialog=title != "project"))
        history.append(step(answer))
    assert history[-1].arguments == {"keys": "ctrl+s"}  # the rename began
    assert work.served == [0, 0, 0, 1]
    pattern = control(3, "text", "", (10, 60, 300, 90))
    answer = work.next(app(subtask, [pattern], history, "Select Items Matching", in_dialog=True))
    assert action(answer) == (
        "CONTINUE",
        ToolName.SET_TEXT,
        {"id": 3, "name": "", "text": "readme.txt"},
    )
