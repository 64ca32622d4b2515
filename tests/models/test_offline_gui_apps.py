"""The offline planner in a web browser, a spreadsheet, a word processor and a file manager:
decided on observations shaped like the real ones (Chromium's table cells and form fields,
Calc's cells named B3, LibreOffice's "Keep current format" question, Thunar's dialogs)."""

from __future__ import annotations

import json
from typing import Any, Literal

import pytest

from roundhouse.devices.contract import Control, Rect, WindowInfo
from roundhouse.models.base import ModelRequest
from roundhouse.models.observation import AppObservation, HostObservation, PastStep, SubtaskView
from roundhouse.models.offline.host import parse_request, plan_host
from roundhouse.models.offline.model import OfflineModel
from roundhouse.models.offline.ops import Op
from roundhouse.models.offline.subtask import Handed


def window(title: str, xid: int = 7) -> WindowInfo:
    box = Rect(left=0, top=0, right=1000, bottom=800)
    return WindowInfo(xid=xid, title=title, application="app", pid=1, rect=box, active=True)


def control(
    label: int, role: str, name: str, box: tuple[int, int, int, int], text: str | None = None
) -> Control:
    left, top, right, bottom = box
    rect = Rect(left=left, top=top, right=right, bottom=bottom)
    return Control(label=label, id=f":1.2/{label}", role=role, name=name, rect=rect, text=text)


def app(
    subtask: str,
    controls: list[Control],
    history: list[PastStep] | None = None,
    title: str = "Fruit prices - Chromium",
    in_dialog: bool = False,
) -> AppObservation:
    return AppObservation(
        board=f"Request: {subtask}",
        subtask=subtask,
        application="app",
        window=window(title, 9 if in_dialog else 7),
        controls=tuple(controls),
        in_dialog=in_dialog,
        history=tuple(history or []),
    )


def step(answer: dict[str, Any], output: Any = None) -> PastStep:
    """The step an answer became, as the agent's history keeps it (its comment says what it
    was for, to people: the planner's progress is the typed `Handed.served`)."""
    action = answer["action"]
    ran = action["function"] is not None
    return PastStep(
        action["function"],
        action["arguments"],
        action["status"],
        "success" if ran else None,
        output,
        None,
        comment=answer.get("comment", ""),
    )


def action(answer: dict[str, Any]) -> tuple[str, str | None, dict[str, Any]]:
    return answer["action"]["status"], answer["action"]["function"], answer["action"]["arguments"]


# Chromium's table of prices: a header row, then rows of cells (each with its static text).
TABLE = [
    control(38, "column header", "Fruit", (25, 180, 83, 204)),
    control(40, "column header", "Price", (84, 180, 135, 204)),
    control(51, "table row", "Pears", (25, 230, 224, 254)),
    control(52, "table cell", "Pears", (25, 230, 83, 254)),
    control(54, "table cell", "3.15", (84, 230, 135, 254)),
    control(55, "static", "3.15", (86, 232, 123, 252)),
    control(59, "table cell", "Plums", (25, 255, 83, 279)),
    control(61, "table cell", "4.80", (84, 255, 135, 279)),
]
PEARS = Op("read", "tell me the Price of Pears", "Pears", "Price")  # as the host hands it on


def test_requests_for_browsers_spreadsheets_and_file_managers_are_understood() -> None:
    request = (
        "open chromium http://127.0.0.1:8/p.html, tell me the Price of Pears, go to "
        "http://127.0.0.1:8/q.html, then open localc, type that price into cell B2, "
        "tell me the value of cell B5, create a folder named reports and rename a.txt to b.txt"
    )
    ops, unknown = parse_request(request)
    assert unknown == []
    assert [(op.kind, op.text, op.target) for op in ops] == [
        ("open", "chromium http://127.0.0.1:8/p.html", ""),
        ("read", "Pears", "Price"),
        ("goto", "http://127.0.0.1:8/q.html", ""),
        ("open", "localc", ""),
        ("cell", "that price", "B2"),
        ("read", "", "B5"),
        ("new_folder", "reports", ""),
        ("rename", "b.txt", "a.txt"),
    ]


def test_a_table_value_is_read_in_the_row_of_one_and_the_column_of_the_other() -> None:
    work = Handed((PEARS,))
    said = work.next(app(PEARS.phrase, TABLE))
    assert action(said)[0] == "FINISH"
    assert said["result"] == "the Price of Pears is 3.15"
    assert work.value == "3.15"  # as read, for a later "that price": no words parsed again
    # Cells that lend no name (their static text holds it) read the same.
    nameless = [c.model_copy(update={"name": ""}) if c.label == 54 else c for c in TABLE]
    assert Handed((PEARS,)).next(app(PEARS.phrase, nameless))["result"].endswith("is 3.15")


def test_a_row_the_table_lacks_is_waited_for_then_failed_saying_what_it_holds() -> None:
    mangos = Op("read", "tell me the Price of Mangos", "Mangos", "Price")
    work = Handed((mangos,))
    history: list[PastStep] = []
    for _ in range(4):  # a page may still be loading: look again first
        said = work.next(app(mangos.phrase, TABLE, history))
        assert action(said)[0] == "SCREENSHOT"
        history.append(step(said))
    said = work.next(app(mangos.phrase, TABLE, history))
    assert action(said)[0] == "FAIL"
    assert "says 'Mangos'" in said["result"] and "'Pears', '3.15'" in said["result"]


def test_a_spreadsheet_cell_is_read_by_its_name() -> None:
    cells = [
        control(116, "table cell", "B3", (91, 191, 131, 208), text="420"),
        control(120, "table cell", "B5", (91, 225, 131, 242), text="1455"),
    ]
    work = Handed((Op("read", "tell me the value of cell B5", target="B5"),))
    assert work.next(app("tell me the value of cell B5", cells))["result"] == "cell B5 is 1455"
    assert work.value == "1455"


def test_a_cell_is_reached_by_keys_and_its_text_entered_with_return() -> None:
    subtask = "type =SUM(A1:A2) into cell C3"
    work = Handed((Op("cell", subtask, "=SUM(A1:A2)", "C3"),))
    first = work.next(app(subtask, []))
    assert action(first) == ("CONTINUE", "press_keys", {"keys": "ctrl+Home Right Right Down Down"})
    second = work.next(app(subtask, [], [step(first)]))
    assert action(second) == ("CONTINUE", "type_text", {"text": "=SUM(A1:A2)\n"})
    done = work.next(app(subtask, [], [step(first), step(second)]))
    assert action(done)[0] == "FINISH" and done["result"] == "typed '=SUM(A1:A2)' into cell C3"


def test_the_cell_the_sheets_cursor_is_in_is_typed_into_without_moves() -> None:
    """A new sheet's cursor is in A1, as its Name Box shows: ctrl+Home there shows nothing
    (and stopped a list of entries). Once typing began, the cursor's move to A2 does not
    bring the moves back."""
    subtask = "type 12 into cell A1"
    work = Handed((Op("cell", subtask, "12", "A1"),))
    sheet = control(81, "table", "Sheet Sheet1", (0, 200, 1000, 700))
    sheet.states.append("focused")

    def calc(cursor: str) -> list[Control]:
        return [control(76, "text", "", (0, 150, 80, 170), text=cursor), sheet]

    first = work.next(app(subtask, calc("A1")))
    assert action(first) == ("CONTINUE", "type_text", {"text": "12\n"})
    done = work.next(app(subtask, calc("A2"), [step(first)]))
    assert action(done)[0] == "FINISH" and done["result"] == "typed '12' into cell A1"
    # Elsewhere, or where the sheet does not have the focus, the keys go to A1 first.
    moved = Handed((Op("cell", subtask, "12", "A1"),)).next(app(subtask, calc("B7")))
    assert action(moved) == ("CONTINUE", "press_keys", {"keys": "ctrl+Home"})
    sheet.states.remove("focused")
    unfocused = Handed((Op("cell", subtask, "12", "A1"),)).next(app(subtask, calc("A1")))
    assert action(unfocused) == ("CONTINUE", "press_keys", {"keys": "ctrl+Home"})


def test_a_page_is_opened_through_the_address_bar_keys() -> None:
    subtask = "go to http://127.0.0.1:8/welcome.html"
    work = Handed((Op("goto", subtask, "http://127.0.0.1:8/welcome.html"),))
    history: list[PastStep] = []
    taken = []
    for _ in range(3):
        said = work.next(app(subtask, [], history))
        taken.append(action(said)[1:])
        history.append(step(said))
    assert taken == [
        ("press_keys", {"keys": "ctrl+l"}),
        ("type_text", {"text": "http://127.0.0.1:8/welcome.html"}),
        ("press_keys", {"keys": "Return"}),
    ]
    assert work.served == [0, 0, 0]  # each step served the one operation
    assert action(work.next(app(subtask, [], history)))[0] == "FINISH"


def test_a_named_field_is_the_entry_not_the_paragraph_named_after_its_label() -> None:
    form = [
        control(45, "paragraph", "Name", (22, 233, 1048, 255)),  # larger, and no field
        control(48, "entry", "Name", (74, 233, 254, 255)),
    ]
    subtask = "type Ada into the Name field"
    said = Handed((Op("type", subtask, "Ada", "Name"),)).next(app(subtask, form))
    assert action(said) == ("CONTINUE", "type_text", {"id": 48, "name": "Name", "text": "Ada"})


def test_a_second_paragraph_is_typed_where_the_caret_is() -> None:
    subtask = "type 'First.', press Return, type 'Second.'"
    work = Handed(
        (
            Op("type", "type 'First.'", "First."),
            Op("keys", "press Return", "Return"),
            Op("type", "type 'Second.'", "Second."),
        )
    )
    page = [control(82, "document text", "Untitled 1 - LibreOffice Document", (0, 122, 1207, 753))]
    history: list[PastStep] = []
    for _ in range(3):
        said = work.next(app(subtask, page, history, title="Untitled 1 - LibreOffice Writer"))
        history.append(step(said))
    assert [s.arguments for s in history] == [
        {"id": 82, "name": "Untitled 1 - LibreOffice Document", "text": "First."},
        {"keys": "Return"},
        {"text": "Second."},  # no control: clicking the page again would move the caret
    ]


def test_save_as_keeps_the_format_asked_for_and_never_finds_and_replaces() -> None:
    subtask = "save it as /tmp/w/trains.docx"
    work = Handed((Op("save_as", subtask, "/tmp/w/trains.docx"),))
    history = [
        step(work.next(app(subtask, []))),  # ctrl+shift+s
    ]
    dialog = [control(2, "text", "Name", (0, 0, 100, 20))]
    named = work.next(app(subtask, dialog, history, title="Save", in_dialog=True))
    history.append(step(named))
    history.append(step(work.next(app(subtask, dialog, history, title="Save", in_dialog=True))))
    question = [
        control(1, "push button", "Use Word 2007–365 Format!", (0, 0, 100, 20)),
        control(2, "push button", "Use ODF Format!", (100, 0, 200, 20)),
    ]
    kept = work.next(app(subtask, question, history, title="Keep current format", in_dialog=True))
    assert action(kept) == (
        "CONTINUE",
        "click_control",
        {"id": 1, "name": "Use Word 2007–365 Format!"},
    )
    history.append(step(kept))
    toolbar = [control(41, "toggle button", "Find and Replace", (539, 21, 572, 56))]
    done = work.next(app(subtask, toolbar, history, title="trains.docx - LibreOffice Writer"))
    assert action(done)[0] == "FINISH" and done["result"] == "saved as /tmp/w/trains.docx"


def test_a_save_whose_title_never_names_the_file_fails_saying_the_title_seen() -> None:
    subtask = "save it as /tmp/w/two.txt"
    work = Handed((Op("save_as", subtask, "/tmp/w/two.txt"),))
    history = [step(work.next(app(subtask, [])))]  # ctrl+shift+s
    dialog = [control(2, "text", "Name", (0, 0, 100, 20))]
    for _ in range(2):  # the name, then Return
        history.append(step(work.next(app(subtask, dialog, history, title="Save", in_dialog=True))))
    seen = "New Document (Draft) - Text Editor"
    said = work.next(app(subtask, [], history, title=seen))
    while action(said)[0] == "SCREENSHOT":
        history.append(step(said))
        said = work.next(app(subtask, [], history, title=seen))
    assert action(said)[0] == "FAIL"
    assert f"name two.txt (it is {seen!r})" in json.dumps(said, ensure_ascii=False)


def test_a_folder_is_made_and_a_file_renamed_through_the_dialogs() -> None:
    entry = [control(1, "text", "", (886, 542, 1100, 576), text="New Folder")]
    subtask = "create a folder named reports"
    work = Handed((Op("new_folder", subtask, "reports"),))
    history: list[PastStep] = []
    looks = [(False, []), (True, entry), (True, entry), (False, [])]
    taken = []
    for in_dialog, controls in looks:
        title = "Create New Folder" if in_dialog else "project - Thunar"
        said = work.next(app(subtask, controls, history, title=title, in_dialog=in_dialog))
        taken.append(action(said))
        history.append(step(said))
    assert taken == [
        ("CONTINUE", "press_keys", {"keys": "ctrl+shift+n"}),
        ("CONTINUE", "set_text", {"id": 1, "name": "", "text": "reports"}),
        ("CONTINUE", "press_keys", {"keys": "Return"}),
        ("FINISH", None, {}),
    ]

    subtask = "rename draft.txt to final.txt"
    work = Handed((Op("rename", subtask, "final.txt", "draft.txt"),))
    history = []
    looks = [(False, []), (True, entry), (True, entry), (False, []), (True, entry), (True, entry)]
    for in_dialog, controls in looks:
        said = work.next(app(subtask, controls, history, in_dialog=in_dialog))
        history.append(step(said))
    assert [(s.function, s.arguments.get("keys") or s.arguments.get("text")) for s in history] == [
        ("press_keys", "ctrl+s"),  # Select by Pattern
        ("set_text", "draft.txt"),
        ("press_keys", "Return"),
        ("press_keys", "F2"),
        ("set_text", "final.txt"),
        ("press_keys", "Return"),
    ]
    # No file of that name: no Rename dialog comes, and the subtask fails saying so.
    stuck = history[:4]
    for _ in range(4):
        stuck.append(step(work.next(app(subtask, [], stuck))))
    failed = work.next(app(subtask, [], stuck))
    assert action(failed)[0] == "FAIL" and "is there a file named 'draft.txt'?" in failed["result"]


def test_the_host_carries_a_value_read_in_one_application_into_the_next() -> None:
    request = (
        "open chromium http://h/p.html, tell me the Price of Plums, then open localc, "
        "type that price into cell A1"
    )
    # What the application's planner read is handed to the host as it was read: its
    # result's words are for people, never parsed for the value.
    read = SubtaskView("Chromium", "tell me the Price of Plums", "FINISH", "anything at all")
    seen = HostObservation(request, (window("x"),), (), (read,))
    plan = plan_host(seen, ["4.80"])
    assert action(plan.answer) == ("ASSIGN", "launch_application", {"name": "localc"})
    assert plan.answer["current_subtask"] == "type 4.80 into cell A1"
    assert plan.assigned is not None
    assert plan.assigned.ops == (Op("cell", "type 4.80 into cell A1", "4.80", "A1"),)
    refused = plan_host(seen, [None]).answer
    assert action(refused)[0] == "FAIL" and "no value was read before it" in refused["result"]


def test_every_answer_is_json_a_model_could_give() -> None:
    said = Handed((PEARS,)).next(app(PEARS.phrase, TABLE))
    assert json.loads(json.dumps(said))["action"]["status"] == "FINISH"


async def said_by(model: OfflineModel, observation: HostObservation | AppObservation) -> Any:
    agent: Literal["host", "app"] = "host" if isinstance(observation, HostObservation) else "app"
    request = ModelRequest(agent=agent, messages=(), observation=observation)
    return json.loads((await model.complete(request)).text)


async def test_the_application_acts_on_the_operations_the_host_handed_it_never_the_words(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The host's ASSIGN says the subtask in words, for people; the application's planner
    acts on the operations the host planned, and what it read reaches the next subtask as
    it was read. Nothing reads words again after the request: reading is made to fail."""
    model = OfflineModel()
    request = (
        "open chromium, go to http://h/p.html, tell me the Price of Pears, then open localc, "
        "type that price into cell A1"
    )
    first = await said_by(model, HostObservation(request, (), ()))
    assert action(first) == ("ASSIGN", "launch_application", {"name": "chromium"})
    subtask = first["current_subtask"]
    assert subtask == "go to http://h/p.html, tell me the Price of Pears"

    def no_reading(text: str) -> None:
        raise AssertionError(f"words read again: {text!r}")

    for module in ("host", "model", "intents"):
        monkeypatch.setattr(f"roundhouse.models.offline.{module}.read_request", no_reading)
    history: list[PastStep] = []
    for _ in range(3):  # ctrl+l, the address, Return
        history.append(step(await said_by(model, app(subtask, TABLE, history))))
    assert [s.comment for s in history] == ["doing: go to http://h/p.html"] * 3
    done = await said_by(model, app(subtask, TABLE, history))
    assert action(done)[0] == "FINISH"
    assert done["result"] == "went to http://h/p.html; the Price of Pears is 3.15"

    monkeypatch.undo()  # the host reads its request again, as at every step
    finished = SubtaskView("Chromium", subtask, "FINISH", done["result"])
    second = await said_by(model, HostObservation(request, (window("x"),), (), (finished,)))
    assert second["current_subtask"] == "type 3.15 into cell A1"
    assert model.handed[second["current_subtask"]].ops == (
        Op("cell", "type 3.15 into cell A1", "3.15", "A1"),
    )


async def test_a_subtask_the_offline_host_did_not_plan_fails_saying_so() -> None:
    said = await said_by(OfflineModel(), app("click the Print button", []))
    assert action(said) == ("FAIL", None, {})
    assert "was not planned by the offline model" in said["result"]
