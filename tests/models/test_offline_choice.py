"""Which control the offline planner takes for what a request names (issue 46): the kind of
control said ("the Order button" is no page tab, link or heading named Order), the page's
before the window's chrome, an enabled one before a disabled twin, and a disabled one never
clicked; and a click whose effect was not seen, looked at once more before it stands. On
controls shaped like Chromium's: a tab named after the page's title, then the page."""

from __future__ import annotations

from roundhouse.devices.contract import Control, Rect, ToolName, UiNode
from roundhouse.devices.linux.atspi.tree import select_view
from roundhouse.models.observation import PastStep
from roundhouse.models.offline.host import parse_request
from roundhouse.models.offline.ops import BUTTON_ROLES, Op, find_control
from roundhouse.models.offline.subtask import Handed
from tests.models.test_offline_gui_apps import action, app, step


def control(label: int, role: str, name: str, document: bool = True, *states: str) -> Control:
    box = Rect(left=10, top=10 * label, right=90, bottom=10 * label + 8)
    return Control(
        label=label,
        id=f":1.2/{label}",
        role=role,
        name=name,
        rect=box,
        states=list(states),
        in_document=document,
    )


TAB = control(2, "page tab", "Order", False, "selected")
NAME = control(14, "entry", "Name")
BUTTON = control(15, "push button", "Order")
LINK = control(16, "link", "Order")
PAGE = (TAB, NAME, BUTTON)
REQUEST = "type Ada into the Name field and click the Order button"


def test_a_request_says_which_kind_of_control_it_means() -> None:
    def clicks(said: str) -> list[tuple[str, str]]:
        ops, unknown = parse_request(said)
        assert not unknown
        return [(op.target, op.role) for op in ops if op.kind == "click"]

    assert clicks("click the Order button") == [("Order", "button")]
    assert clicks("click on the Order link") == [("Order", "link")]
    assert clicks("select the Gift wrap checkbox") == [("Gift wrap", "checkbox")]
    assert clicks("click the Order tab") == [("Order", "tab")]
    assert clicks("click Order") == [("Order", "")]


def test_the_kind_said_chooses_among_controls_of_one_name() -> None:
    shown = (TAB, BUTTON, LINK)
    assert find_control(shown, "Order", BUTTON_ROLES, "button") == BUTTON
    assert find_control(shown, "Order", BUTTON_ROLES, "link") == LINK
    assert find_control(shown, "Order", BUTTON_ROLES, "tab") == TAB
    # None said: the page's before the window's chrome, though the tab is listed first.
    assert find_control(shown, "Order", BUTTON_ROLES) == BUTTON
    assert find_control((TAB, LINK), "Order", BUTTON_ROLES) == LINK
    # No control of the kind said: no other kind stands in for it.
    assert find_control((TAB, LINK), "Order", BUTTON_ROLES, "button") is None
    # A word that names no role ("icon") leaves the choice to the name.
    assert find_control((TAB, LINK), "Order", BUTTON_ROLES, "icon") == LINK


def test_an_enabled_twin_comes_before_a_disabled_one() -> None:
    greyed = control(15, "push button", "Order", True, "disabled")
    enabled = control(17, "push button", "Order")
    assert find_control((greyed, enabled), "Order", BUTTON_ROLES, "button") == enabled
    assert find_control((TAB, greyed), "Order", BUTTON_ROLES, "button") == greyed


def test_the_issues_order_form_clicks_the_button_not_the_tab() -> None:
    work = Handed(tuple(parse_request(REQUEST)[0]))
    typed = work.next(app(REQUEST, list(PAGE), title="Order - Chromium"))
    assert action(typed) == (
        "CONTINUE",
        ToolName.TYPE_TEXT,
        {"id": 14, "name": "Name", "text": "Ada"},
    )
    history = [step(typed, {"effect": "confirmed", "seen": "'Name' (entry) now holds 'Ada'"})]
    clicked = work.next(app(REQUEST, list(PAGE), history, title="Order - Chromium"))
    assert action(clicked) == ("CONTINUE", ToolName.CLICK_CONTROL, {"id": 15, "name": "Order"})


def test_a_disabled_button_is_not_clicked_and_the_step_fails_naming_it() -> None:
    greyed = control(15, "push button", "Order", True, "disabled")
    said = "click the Order button"
    work = Handed((Op("click", said, target="Order", role="button"),))
    failed = work.next(app(said, [TAB, greyed, LINK], title="Order - Chromium"))
    assert action(failed)[0] == "FAIL"  # at once: no look again enables it
    assert "control 15 'Order' (push button) is disabled" in failed["result"]


def test_a_tab_of_the_name_is_no_button_the_step_fails_saying_what_it_is() -> None:
    said = "click the Order button"
    work = Handed((Op("click", said, target="Order", role="button"),))
    history: list[PastStep] = []
    for _ in range(5):  # a page may still be loading: looked at again, then FAIL
        answer = work.next(app(said, [TAB, NAME], history, title="Order - Chromium"))
        history.append(step(answer))
    assert action(answer)[0] == "FAIL"
    assert "no button named 'Order': control 2 'Order' is a page tab" in answer["result"]
    assert all(s.function != ToolName.CLICK_CONTROL for s in history)


def _clicked(outcome: dict[str, str]) -> tuple[Handed, list[PastStep]]:
    said = "click the Order button"
    work = Handed((Op("click", said, target="Order", role="button"),))
    clicked = work.next(app(said, list(PAGE), title="Order - Chromium"))
    assert action(clicked)[1] == ToolName.CLICK_CONTROL
    return work, [step(clicked, outcome)]


NOT_SEEN = {"effect": "not seen", "seen": "no visible effect"}


def test_a_click_not_seen_is_looked_at_again_and_fails_where_nothing_changed() -> None:
    work, history = _clicked(NOT_SEEN)
    looked = work.next(app("click the Order button", list(PAGE), history, title="Order"))
    assert action(looked) == ("SCREENSHOT", None, {})
    history.append(step(looked))
    failed = work.next(app("click the Order button", list(PAGE), history, title="Order"))
    assert action(failed)[0] == "FAIL"
    assert "clicked control 15 'Order', but its effect was not seen" in failed["result"]


def test_a_click_not_seen_stands_once_a_look_shows_the_window_changed() -> None:
    work, history = _clicked(NOT_SEEN)
    history.append(step(work.next(app("click the Order button", list(PAGE), history))))
    received = [control(2, "page tab", "Received", False)]
    done = work.next(app("click the Order button", received, history, title="Received"))
    assert action(done)[0] == "FINISH"
    assert "the window changed after it" in done["result"]


def test_a_click_seen_finishes_at_once() -> None:
    work, history = _clicked({"effect": "confirmed", "seen": "window retitled"})
    done = work.next(app("click the Order button", list(PAGE), history))
    assert action(done)[0] == "FINISH"


# --- what the tree lists ------------------------------------------------------------------


def _node(role: str, name: str, top: int, *children: UiNode, enabled: bool = True) -> UiNode:
    states = ["showing", "visible", *(["enabled", "sensitive", "focusable"] if enabled else [])]
    rect = Rect(left=10, top=top, right=300, bottom=top + 20)
    return UiNode(
        id=f"n{top}{role}", role=role, name=name, states=states, rect=rect, children=list(children)
    )


def test_a_pages_disabled_button_is_listed_as_disabled_and_the_chrome_is_told_apart() -> None:
    """Chromium gives a disabled button neither "enabled" nor "focusable": listed all the
    same inside the page, saying "disabled", so that a request for it fails naming it
    rather than clicking its twin. The tab, outside the page, is the window's chrome."""
    page = _node(
        "document web",
        "Order",
        100,
        _node("push button", "Order", 120, enabled=False),
        _node("link", "Order", 160),
    )
    root = _node("frame", "Order - Chromium", 0, _node("page tab", "Order", 20), page)
    root.rect = Rect(left=0, top=0, right=1000, bottom=800)
    view = select_view(root, root.rect)
    listed = [(c.role, c.name, c.states, c.in_document) for c in view.controls]
    assert listed == [
        ("page tab", "Order", [], False),
        ("push button", "Order", ["disabled"], True),
        ("link", "Order", [], True),
    ]
    # Outside a document a greyed control stays out of the list, as before.
    chrome = _node("frame", "App", 0, _node("push button", "Paste", 20, enabled=False))
    chrome.rect = Rect(left=0, top=0, right=1000, bottom=800)
    assert select_view(chrome, chrome.rect).controls == []


# --- a save's outcome ----------------------------------------------------------------------

SAVE = Op("save", "save it")


def test_a_save_stands_once_the_title_no_longer_marks_the_document_changed() -> None:
    work = Handed((SAVE,))
    pressed = work.next(app("save it", [], title="*notes.txt - gedit"))
    assert action(pressed) == ("CONTINUE", ToolName.PRESS_KEYS, {"keys": "ctrl+s"})
    history = [step(pressed, {"effect": "confirmed", "seen": "window retitled"})]
    done = work.next(app("save it", [], history, title="notes.txt - gedit"))
    assert action(done)[0] == "FINISH" and done["result"] == "saved"


def test_a_save_that_asks_for_a_name_or_leaves_the_title_unsaved_fails() -> None:
    work = Handed((SAVE,))
    pressed = work.next(app("save it", [], title="*Untitled Document 1 - gedit"))
    history = [step(pressed, {"effect": "confirmed", "seen": "new window 'Save As' opened"})]
    for _ in range(5):
        answer = work.next(app("save it", [NAME], history, title="Save As", in_dialog=True))
        history.append(step(answer))
    assert action(answer)[0] == "FAIL"
    assert "saving opened 'Save As': the document has no file name yet" in answer["result"]
    work = Handed((SAVE,))
    pressed = work.next(app("save it", [], title="*notes.txt - gedit"))
    history = [step(pressed, {"effect": "not seen", "seen": "no visible effect"})]
    for _ in range(5):
        answer = work.next(app("save it", [], history, title="*notes.txt - gedit"))
        history.append(step(answer))
    assert action(answer)[0] == "FAIL"
    assert "still marks the document changed" in answer["result"]


def test_the_field_named_is_the_pages_entry_before_the_windows_own() -> None:
    said = "type Ada into the Find field"
    find_bar = control(3, "entry", "Find", False)
    paragraph = control(20, "paragraph", "Find")  # a page's paragraph named by its label
    page_entry = control(21, "entry", "Find")
    work = Handed(tuple(parse_request(said)[0]))
    typed = work.next(app(said, [find_bar, paragraph, page_entry]))
    assert action(typed) == (
        "CONTINUE",
        ToolName.TYPE_TEXT,
        {"id": 21, "name": "Find", "text": "Ada"},
    )


# --- a cell's outcome ----------------------------------------------------------------------


def _cell(text: str) -> Control:
    return Control(
        label=90,
        id=":1.2/90",
        role="table cell",
        name="A1",
        rect=Rect(left=0, top=200, right=80, bottom=220),
        text=text,
        in_document=True,
    )


def test_a_cell_entered_stands_once_it_shows_the_value_else_fails_saying_what_it_shows() -> None:
    said = "type 12 into cell A1"
    work = Handed((Op("cell", said, "12", "A1"),))
    moves = work.next(app(said, [_cell("")]))
    typed = work.next(app(said, [_cell("")], [step(moves)]))
    assert action(typed)[1] == ToolName.TYPE_TEXT
    history = [step(moves), step(typed, {"effect": "not seen", "seen": "no visible effect"})]
    done = work.next(app(said, [_cell("12.0")], history))
    assert action(done)[0] == "FINISH" and done["result"] == "typed '12' into cell A1"
    for _ in range(5):  # the cell still empty: looked at again, then FAIL
        answer = work.next(app(said, [_cell("")], history))
        history.append(step(answer))
    assert action(answer)[0] == "FAIL"
    assert "cell A1 to show '12' (it shows '')" in answer["result"]
