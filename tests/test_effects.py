"""What an action did, judged from two looks (pure), and how it reaches the next prompt."""

from __future__ import annotations

from roundhouse.agents.prompting import describe_step
from roundhouse.devices.contract import Rect, WindowInfo
from roundhouse.devices.linux.action.effects import (
    Look,
    NodeSeen,
    TextSeen,
    contains,
    effect_of,
    excerpt,
)
from roundhouse.models.observation import PastStep

RECT = Rect(left=0, top=0, right=400, bottom=300)
MAIN = WindowInfo(
    xid=1, title="Roundhouse Qt test", application="qt", pid=7, rect=RECT, active=True
)
FIELD = NodeSeen("text", "Your name", frozenset({"editable", "focused"}))
BUTTON = NodeSeen("push button", "Press me", frozenset({"enabled"}))
CHECK = NodeSeen("check box", "Remember me", frozenset({"enabled"}))
STATUS = NodeSeen("label", "Not pressed yet")


def window_look(**nodes: NodeSeen) -> Look:
    return Look(windows=(MAIN,), window=MAIN.xid, nodes=nodes)


def field_text(text: str) -> TextSeen:
    return TextSeen(node="field", control="'Your name' (text)", text=text)


NODES = {"field": FIELD, "button": BUTTON, "check": CHECK, "status": STATUS}
BEFORE = window_look(**NODES)


def test_a_text_that_holds_what_was_typed_is_confirmed() -> None:
    before = Look(BEFORE.windows, BEFORE.window, BEFORE.nodes, text=field_text(""))
    after = Look(BEFORE.windows, BEFORE.window, BEFORE.nodes, text=field_text("Zoë €"))
    effect = effect_of(before, after, typed="Zoë €", target="field")
    assert effect.as_result() == {
        "effect": "confirmed",
        "seen": "'Your name' (text) now holds 'Zoë €' (contains the typed text)",
    }
    # Enter in a one-line field leaves no line break: the text still counts as typed.
    assert effect_of(before, after, typed="Zoë €\n").confirmed


def test_a_text_without_what_was_typed_is_not_seen_and_says_what_it_holds() -> None:
    after = Look(BEFORE.windows, BEFORE.window, BEFORE.nodes, text=field_text("Zo"))
    effect = effect_of(BEFORE, after, typed="Zoë")
    assert not effect.confirmed
    assert effect.seen == ("'Your name' (text) now holds 'Zo', without the typed 'Zoë'",)
    # A text that held it already but did not change: the typing did nothing.
    banana = Look(BEFORE.windows, BEFORE.window, BEFORE.nodes, text=field_text("banana"))
    assert effect_of(banana, banana, typed="an").as_result() == {
        "effect": "not seen",
        "seen": "'Your name' (text) still holds 'banana' (unchanged)",
    }
    assert effect_of(banana, banana, typed="banana").confirmed  # set_text to what it was
    cleared = Look(BEFORE.windows, BEFORE.window, BEFORE.nodes, text=field_text(""))
    assert effect_of(banana, cleared, typed="").as_result() == {
        "effect": "confirmed",
        "seen": "'Your name' (text) is now empty",
    }
    unreadable = effect_of(BEFORE, BEFORE, typed="Zoë")  # no text could be read after
    assert unreadable.as_result() == {
        "effect": "not seen",
        "seen": "the text could not be read back (see the screenshot)",
    }


def test_a_cell_that_comes_to_hold_what_was_typed_confirms_it_where_the_focus_has_no_text() -> None:
    """Calc's sheet has the focus and no text of its own; "12\n" enters 12 in A1, which
    comes into the list of (non-empty) cells, and moves on to A2."""
    sheet = NodeSeen("table", "Sheet Sheet1", frozenset({"editable", "focused"}))
    name_box = NodeSeen("text", "", frozenset({"editable"}), text="A1")
    before = window_look(sheet=sheet, name_box=name_box)
    a1 = NodeSeen("table cell", "A1", frozenset({"enabled"}), text="12")
    after = window_look(sheet=sheet, name_box=NodeSeen("text", "", name_box.states, "A2"), a1=a1)
    effect = effect_of(before, after, typed="12\n")
    assert effect.confirmed
    assert effect.seen[0] == "'A1' (table cell) now holds '12' (the typed text)"
    # A cell that held it before, or one that holds something else, is not the typing's.
    assert not effect_of(window_look(sheet=sheet, a1=a1), after, typed="12\n").confirmed
    assert not effect_of(before, after, typed="123\n").confirmed
    # A number is shown in the sheet's own format.
    assert effect_of(before, after, typed="12.00\n").confirmed
    formula = window_look(sheet=sheet, a3=NodeSeen("table cell", "A3", text="42"))
    assert not effect_of(before, formula, typed="=SUM(A1:A2)\n").confirmed


def test_a_cell_holding_what_was_typed_confirms_it_where_the_text_read_does_not() -> None:
    """The focused control's text is read, but the typing went elsewhere (Calc's Name Box
    is read as the focused text where the sheet is the target): the cell that came to hold
    it is the evidence."""
    name_box = TextSeen(node="name_box", control="the text", text="A1")
    before = Look(windows=(MAIN,), window=MAIN.xid, nodes={}, text=name_box)
    a1 = NodeSeen("table cell", "A1", frozenset({"enabled"}), text="30")
    after = Look(windows=(MAIN,), window=MAIN.xid, nodes={"a1": a1}, text=name_box)
    effect = effect_of(before, after, typed="30\n")
    assert effect.confirmed
    assert effect.seen[0] == "'A1' (table cell) now holds '30' (the typed text)"
    assert not effect_of(before, before, typed="30\n").confirmed


def test_a_long_text_is_cut_around_what_was_typed_and_a_password_never_shown() -> None:
    long = TextSeen("doc", "the text", "x" * 500 + "NEEDLE" + "y" * 500, start=1000, length=5000)
    shown = excerpt(long, "NEEDLE")
    assert "NEEDLE" in shown and shown.startswith("…'") and shown.endswith("… (5000 characters)")
    assert len(shown) < 120
    secret = TextSeen("pw", "'Password' (password text)", "•••••", secret=True)
    assert excerpt(secret) == "5 characters (hidden)"
    assert contains(secret, "hunter") is False and contains(secret, "abc")


def test_a_click_names_the_state_it_changed_and_the_label_that_changed() -> None:
    checked = NodeSeen("check box", "Remember me", frozenset({"enabled", "checked", "focused"}))
    after = window_look(
        field=NodeSeen("text", "Your name"),
        button=BUTTON,
        check=checked,
        status=NodeSeen("label", "Pressed 1 times"),
    )
    effect = effect_of(BEFORE, after, target="check")
    assert effect.confirmed
    assert effect.seen == (
        "'Remember me' (check box) is now checked",
        "focus moved to 'Remember me' (check box)",
        "'Not pressed yet' (label) now reads 'Pressed 1 times'",
    )


def test_nothing_changed_is_no_visible_effect() -> None:
    effect = effect_of(BEFORE, BEFORE, target="button")
    assert effect.as_result() == {"effect": "not seen", "seen": "no visible effect"}
    no_tree = Look(windows=(MAIN,), window=MAIN.xid)  # no bus, or the app did not answer
    assert effect_of(no_tree, no_tree).as_result() == {
        "effect": "not seen",
        "seen": "no visible effect in the window list "
        "(the controls were not read: see the screenshot)",
    }


def test_a_dialog_that_opens_is_named_with_where_the_focus_is() -> None:
    dialog = WindowInfo(
        xid=2, title="Open Files", application="gedit", pid=7, rect=RECT, active=True
    )
    main = MAIN.model_copy(update={"active": False})
    files = NodeSeen("table", "Files", frozenset({"focused"}))
    after = Look(windows=(main, dialog), window=dialog.xid, nodes={"files": files})
    effect = effect_of(BEFORE, after)
    assert effect.confirmed
    assert effect.seen == ("new window 'Open Files' opened (active)", "focus is on 'Files' (table)")
    # And closing it: the window that closed, the one active again.
    back = effect_of(after, BEFORE)
    assert back.seen[:2] == (
        "window 'Open Files' closed",
        "'Roundhouse Qt test' is now the active window",
    )


def test_a_title_change_and_many_changes_stay_short() -> None:
    saved = MAIN.model_copy(update={"title": "notes.txt - gedit"})
    rows = {f"row{n}": NodeSeen("list item", f"Row {n}") for n in range(20)}
    after = Look(windows=(saved,), window=MAIN.xid, nodes={**NODES, **rows})
    effect = effect_of(BEFORE, after)
    assert effect.seen[0] == "window title now 'notes.txt - gedit'"
    assert effect.seen[1].startswith("appeared: 'Row 0' (list item), 'Row 1' (list item)")
    assert effect.seen[1].endswith("and 17 more")
    # Rows read only in part (a limit) are not counted as appeared.
    partial = Look(after.windows, after.window, after.nodes, complete=False)
    assert effect_of(BEFORE, partial).seen == ("window title now 'notes.txt - gedit'",)


def test_the_next_prompt_gets_the_effect_as_one_line_without_timings() -> None:
    step = PastStep(
        function="set_text",
        arguments={"id": 1, "name": "Your name", "text": "Zoë"},
        status="CONTINUE",
        result_status="success",
        output={
            "control": "1 'Your name' (text)",
            "effect": "confirmed",
            "seen": "'Your name' (text) now holds 'Zoë' (contains the typed text)",
            "settle_ms": 139.6,
            "screen_changed": True,
            "still_changing": False,
        },
        error=None,
    )
    assert describe_step(2, step) == (
        '2. [CONTINUE] set_text({"id": 1, "name": "Your name", "text": "Zoë"}) -> success: '
        "effect confirmed: 'Your name' (text) now holds 'Zoë' (contains the typed text)"
    )
    other = PastStep("list_windows", {}, "CONTINUE", "success", [{"xid": 1}], None)
    assert describe_step(1, other).endswith('-> success: [{"xid": 1}]')


def test_a_display_whose_text_changed_confirms_a_click() -> None:
    """GNOME Calculator's equation is a nameless text view: only its text tells that the
    7 button did something."""
    display = NodeSeen("text", "", frozenset({"editable"}), text="73")
    seven = NodeSeen("push button", "7", frozenset({"focusable"}))
    before = window_look(display=display, seven=seven)
    after = window_look(display=NodeSeen("text", "", display.states, text="737"), seven=seven)
    effect = effect_of(before, after, target="seven")
    assert effect.as_result() == {"effect": "confirmed", "seen": "the text now shows '737'"}
    # A text not read (None) tells nothing; nor does the same text again.
    unread = window_look(display=NodeSeen("text", "", display.states), seven=seven)
    assert not effect_of(unread, after, target="seven").confirmed
    assert not effect_of(before, before, target="seven").confirmed
    # The control typed into says what it holds once, not twice.
    typed = Look(
        after.windows,
        after.window,
        after.nodes,
        text=TextSeen(node="display", control="the text", text="737"),
    )
    assert effect_of(before, typed, typed="7").seen == (
        "the text now holds '737' (contains the typed text)",
    )
