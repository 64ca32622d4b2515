"""The offline planner in a web browser, a spreadsheet, a word processor and a file manager:
decided on observations shaped like the real ones (Chromium's table cells and form fields,
Calc's cells named B3, LibreOffice's "Keep current format" question, Thunar's dialogs)."""

from __future__ import annotations

import json
from typing import Any

from roundhouse.devices.contract import Control, Rect, WindowInfo
from roundhouse.models.observation import AppObservation, HostObservation, PastStep, SubtaskView
from roundhouse.models.offline.gui import parse_request, plan_app, plan_host


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
    """The step an answer became, as the agent's history keeps it."""
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
    said = plan_app(app("tell me the Price of Pears", TABLE))
    assert action(said)[0] == "FINISH"
    assert said["result"] == "the Price of Pears is 3.15"
    # Cells that lend no name (their static text holds it) read the same.
    nameless = [c.model_copy(update={"name": ""}) if c.label == 54 else c for c in TABLE]
    assert plan_app(app("tell me the Price of Pears", nameless))["result"].endswith("is 3.15")


def test_a_row_the_table_lacks_is_waited_for_then_failed_saying_what_it_holds() -> None:
    subtask = "tell me the Price of Mangos"
    history: list[PastStep] = []
    for _ in range(4):  # a page may still be loading: look again first
        said = plan_app(app(subtask, TABLE, history))
        assert action(said)[0] == "SCREENSHOT"
        history.append(step(said))
    said = plan_app(app(subtask, TABLE, history))
    assert action(said)[0] == "FAIL"
    assert "says 'Mangos'" in said["result"] and "'Pears', '3.15'" in said["result"]


def test_a_spreadsheet_cell_is_read_by_its_name() -> None:
    cells = [
        control(116, "table cell", "B3", (91, 191, 131, 208), text="420"),
        control(120, "table cell", "B5", (91, 225, 131, 242), text="1455"),
    ]
    assert plan_app(app("tell me the value of cell B5", cells))["result"] == "cell B5 is 1455"


def test_a_cell_is_reached_by_keys_and_its_text_entered_with_return() -> None:
    subtask = "type =SUM(A1:A2) into cell C3"
    first = plan_app(app(subtask, []))
    assert action(first) == ("CONTINUE", "press_keys", {"keys": "ctrl+Home Right Right Down Down"})
    second = plan_app(app(subtask, [], [step(first)]))
    assert action(second) == ("CONTINUE", "type_text", {"text": "=SUM(A1:A2)\n"})
    done = plan_app(app(subtask, [], [step(first), step(second)]))
    assert action(done)[0] == "FINISH" and done["result"] == "typed '=SUM(A1:A2)' into cell C3"


def test_a_page_is_opened_through_the_address_bar_keys() -> None:
    subtask = "go to http://127.0.0.1:8/welcome.html"
    history: list[PastStep] = []
    taken = []
    for _ in range(3):
        said = plan_app(app(subtask, [], history))
        taken.append(action(said)[1:])
        history.append(step(said))
    assert taken == [
        ("press_keys", {"keys": "ctrl+l"}),
        ("type_text", {"text": "http://127.0.0.1:8/welcome.html"}),
        ("press_keys", {"keys": "Return"}),
    ]
    assert action(plan_app(app(subtask, [], history)))[0] == "FINISH"


def test_a_named_field_is_the_entry_not_the_paragraph_named_after_its_label() -> None:
    form = [
        control(45, "paragraph", "Name", (22, 233, 1048, 255)),  # larger, and no field
        control(48, "entry", "Name", (74, 233, 254, 255)),
    ]
    said = plan_app(app("type Ada into the Name field", form))
    assert action(said) == ("CONTINUE", "type_text", {"id": 48, "name": "Name", "text": "Ada"})


def test_a_second_paragraph_is_typed_where_the_caret_is() -> None:
    subtask = "type 'First.', press Return, type 'Second.'"
    page = [control(82, "document text", "Untitled 1 - LibreOffice Document", (0, 122, 1207, 753))]
    history: list[PastStep] = []
    for _ in range(3):
        said = plan_app(app(subtask, page, history, title="Untitled 1 - LibreOffice Writer"))
        history.append(step(said))
    assert [s.arguments for s in history] == [
        {"id": 82, "name": "Untitled 1 - LibreOffice Document", "text": "First."},
        {"keys": "Return"},
        {"text": "Second."},  # no control: clicking the page again would move the caret
    ]


def test_save_as_keeps_the_format_asked_for_and_never_finds_and_replaces() -> None:
    subtask = "save it as /tmp/w/trains.docx"
    history = [
        step(plan_app(app(subtask, []))),  # ctrl+shift+s
    ]
    dialog = [control(2, "text", "Name", (0, 0, 100, 20))]
    named = plan_app(app(subtask, dialog, history, title="Save", in_dialog=True))
    history.append(step(named))
    history.append(step(plan_app(app(subtask, dialog, history, title="Save", in_dialog=True))))
    question = [
        control(1, "push button", "Use Word 2007–365 Format!", (0, 0, 100, 20)),
        control(2, "push button", "Use ODF Format!", (100, 0, 200, 20)),
    ]
    kept = plan_app(app(subtask, question, history, title="Keep current format", in_dialog=True))
    assert action(kept) == (
        "CONTINUE",
        "click_control",
        {"id": 1, "name": "Use Word 2007–365 Format!"},
    )
    history.append(step(kept))
    toolbar = [control(41, "toggle button", "Find and Replace", (539, 21, 572, 56))]
    done = plan_app(app(subtask, toolbar, history, title="trains.docx - LibreOffice Writer"))
    assert action(done)[0] == "FINISH" and done["result"] == "saved as /tmp/w/trains.docx"


def test_a_folder_is_made_and_a_file_renamed_through_the_dialogs() -> None:
    entry = [control(1, "text", "", (886, 542, 1100, 576), text="New Folder")]
    subtask = "create a folder named reports"
    history: list[PastStep] = []
    looks = [(False, []), (True, entry), (True, entry), (False, [])]
    taken = []
    for in_dialog, controls in looks:
        title = "Create New Folder" if in_dialog else "project - Thunar"
        said = plan_app(app(subtask, controls, history, title=title, in_dialog=in_dialog))
        taken.append(action(said))
        history.append(step(said))
    assert taken == [
        ("CONTINUE", "press_keys", {"keys": "ctrl+shift+n"}),
        ("CONTINUE", "set_text", {"id": 1, "name": "", "text": "reports"}),
        ("CONTINUE", "press_keys", {"keys": "Return"}),
        ("FINISH", None, {}),
    ]

    subtask = "rename draft.txt to final.txt"
    history = []
    looks = [(False, []), (True, entry), (True, entry), (False, []), (True, entry), (True, entry)]
    for in_dialog, controls in looks:
        said = plan_app(app(subtask, controls, history, in_dialog=in_dialog))
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
        stuck.append(step(plan_app(app(subtask, [], stuck))))
    failed = plan_app(app(subtask, [], stuck))
    assert action(failed)[0] == "FAIL" and "is there a file named 'draft.txt'?" in failed["result"]


def host(request: str, subtasks: list[SubtaskView]) -> dict[str, Any]:
    return plan_host(HostObservation(request, (window("x"),), (), tuple(subtasks)))


def test_the_host_carries_a_value_read_in_one_application_into_the_next() -> None:
    request = (
        "open chromium http://h/p.html, tell me the Price of Plums, then open localc, "
        "type that price into cell A1"
    )
    read = SubtaskView(
        "Chromium", "tell me the Price of Plums", "FINISH", "the Price of Plums is 4.80"
    )
    said = host(request, [read])
    assert action(said) == ("ASSIGN", "launch_application", {"name": "localc"})
    assert said["current_subtask"] == "type 4.80 into cell A1"
    nothing_read = SubtaskView("Chromium", "tell me the Price of Plums", "FINISH", "went there")
    refused = host(request, [nothing_read])
    assert action(refused)[0] == "FAIL" and "no value was read before it" in refused["result"]


def test_every_answer_is_json_a_model_could_give() -> None:
    said = plan_app(app("tell me the Price of Pears", TABLE))
    assert json.loads(json.dumps(said))["action"]["status"] == "FINISH"
