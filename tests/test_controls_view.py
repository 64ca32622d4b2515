"""Which controls and which text a model is shown, and how (atspi/tree.py select_view and the
prompt's rendering), on trees shaped like the ones Chromium, GTK and Qt give."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from roundhouse.agents.prompting import describe_controls
from roundhouse.devices.contract import Context, Control, Rect, UiNode, readable
from roundhouse.devices.linux.atspi.controls import shown_states
from roundhouse.devices.linux.atspi.layout import reads_before
from roundhouse.devices.linux.atspi.tree import _first_read_after, select_view

SHOWN = ["enabled", "sensitive", "showing", "visible"]
SCREEN = Rect(left=0, top=0, right=1280, bottom=800)
_ids = itertools.count()


def node(
    role: str,
    name: str = "",
    rect: tuple[int, int, int, int] | None = (0, 0, 10, 10),
    *children: UiNode,
    states: tuple[str, ...] = (),
    text: str | None = None,
    actions: tuple[str, ...] = (),
) -> UiNode:
    return UiNode(
        id=f":1.1:/n{next(_ids)}",
        role=role,
        name=name,
        states=[*SHOWN, *states],
        rect=Rect(left=rect[0], top=rect[1], right=rect[2], bottom=rect[3]) if rect else None,
        text=text,
        actions=list(actions),
        children=list(children),
    )


def order_page() -> UiNode:
    """What Chromium gives for a small order form (roles, names, texts as read)."""
    fffc = "\ufffc"
    return node(
        "frame",
        "Order - Chromium",
        (0, 0, 1000, 800),
        node(
            "panel",
            "",
            (0, 0, 1000, 800),
            node("push button", "Reload", (10, 10, 40, 40), text="Reload", actions=("press",)),
            node(
                "document web",
                "Order",
                (0, 100, 1000, 800),
                node(
                    "heading",
                    "Order",
                    (10, 110, 900, 140),
                    node("static", "Order", (10, 110, 90, 140), text="Order"),
                    text="Order",
                ),
                node(
                    "form",
                    "",
                    (10, 150, 900, 400),
                    node(
                        "paragraph",
                        "",
                        (10, 150, 900, 170),
                        node(
                            "label",
                            "",
                            (10, 150, 50, 170),
                            node("static", "Name", (10, 150, 50, 170)),
                            text="Name",
                        ),
                        node(
                            "entry",
                            "Name",
                            (60, 150, 200, 170),
                            states=("editable", "focusable", "focused"),
                            text="Ada",
                        ),
                        text=fffc * 2,
                        actions=("click",),
                        states=("focusable",),
                    ),
                    node(
                        "combo box",
                        "Size",
                        (60, 180, 200, 200),
                        states=("expandable", "focusable"),
                        text="Medium",
                    ),
                    node(
                        "check box",
                        "Gift wrap",
                        (10, 210, 30, 230),
                        states=("checkable", "focusable"),
                        actions=("click",),
                    ),
                    node("push button", "Submit", (10, 240, 80, 260), text="Submit"),
                    text=fffc * 5,
                    actions=("click",),
                ),
                node(
                    "paragraph",
                    "",
                    (10, 300, 900, 320),
                    node(
                        "link",
                        "Help  with\norders",
                        (10, 300, 150, 320),
                        node("static", "Help with orders", (10, 300, 150, 320)),
                        actions=("jump",),
                    ),
                ),
                node("static", "Fields marked * are required.", (10, 340, 300, 360)),
                states=("focusable",),
                actions=("click",),
            ),
        ),
    )


def test_a_web_form_is_listed_as_a_person_sees_it() -> None:
    view = select_view(order_page(), SCREEN)
    assert describe_controls(view.controls, view.context).splitlines() == [
        "1: [push button] 'Reload'",
        "   [heading] 'Order'",
        "2: [entry] 'Name' = 'Ada' (focused)",
        "3: [combo box] 'Size' = 'Medium' (collapsed)",
        "4: [check box] 'Gift wrap' (unchecked)",
        "5: [push button] 'Submit'",
        "6: [link] 'Help with orders'",
        "   [static] 'Fields marked * are required.'",
    ]


def test_a_container_with_a_name_of_its_own_is_context_once() -> None:
    dialog = node(
        "dialog",
        "Save As",
        (0, 0, 600, 400),
        node(
            "panel",
            "Shipping",  # a group box: nothing inside says "Shipping"
            (10, 10, 300, 200),
            node("radio button", "Express", (20, 30, 120, 50), states=("checkable", "checked")),
        ),
        node(
            "panel",
            "Cancel",  # named after its only child: says nothing more
            (400, 300, 500, 340),
            node("push button", "Cancel", (400, 300, 500, 340)),
        ),
    )
    view = select_view(dialog, SCREEN)
    assert [(item.role, item.text) for item in view.context] == [("panel", "Shipping")]
    assert describe_controls(view.controls, view.context).splitlines() == [
        "   [panel] 'Shipping'",
        "1: [radio button] 'Express' (checked)",
        "2: [push button] 'Cancel'",
    ]


def test_an_alerts_message_is_read_and_a_nameless_control_named_by_what_it_shows() -> None:
    window = node(
        "frame",
        "App",
        (0, 0, 600, 400),
        node(
            "alert",
            "Error",
            (0, 0, 600, 40),
            node("label", "The disk is full.", (10, 10, 200, 30)),
        ),
        node(
            "push button",
            "",
            (10, 100, 80, 130),
            node("icon", "", (10, 100, 30, 130)),
            node("label", "Retry", (30, 100, 80, 130)),
        ),
        node("push button", "", (100, 100, 130, 130), text="\ufffc"),
    )
    window.children[2].description = "Close the tab"
    view = select_view(window, SCREEN)
    assert [(item.role, item.text) for item in view.context] == [
        ("alert", "Error"),
        ("label", "The disk is full."),
    ]
    assert [(c.name, c.shown_value()) for c in view.controls] == [
        ("Retry", None),
        ("Close the tab", None),  # no name, text only U+FFFC: the tooltip names it
    ]


def test_a_dialog_drawn_inside_its_window_is_seen_and_an_alert_bar_is_not() -> None:
    """libadwaita 1.5 draws a dialog inside the window it belongs to (Nautilus 48's New
    Folder, GNOME Text Editor 48's Save Changes?): a "dialog" or "alert" over the window,
    its controls listed after the window's own. An error bar across the top is no dialog."""

    def window(*over: UiNode) -> UiNode:
        back = node("push button", "Back", (10, 10, 40, 40), actions=("click",))
        return node("frame", "project", (0, 0, 800, 600), back, *over)

    folder = node(
        "dialog",
        "New Folder",
        (0, 0, 790, 590),
        node("text", "Folder Name", (300, 250, 500, 280), states=("editable",)),
        node("push button", "Create", (520, 250, 580, 280), actions=("click",)),
    )
    view = select_view(window(folder), SCREEN)
    assert view.dialog == "New Folder"
    assert [c.name for c in view.controls] == ["Back", "Folder Name", "Create"]
    save = node("alert", "Save Changes?", (0, 0, 800, 600), node("push button", "Save"))
    assert select_view(window(save), SCREEN).dialog == "Save Changes?"
    bar = node("alert", "Error", (0, 0, 800, 40), node("label", "The disk is full."))
    assert select_view(window(bar), SCREEN).dialog is None
    hidden = folder.model_copy(update={"states": ["visible"]})  # closed, not yet gone
    assert select_view(window(hidden), SCREEN).dialog is None
    assert select_view(window(), SCREEN).dialog is None


def test_states_are_those_a_person_sees() -> None:
    def states(role: str, *extra: str) -> list[str]:
        return shown_states(node(role, "x", states=extra))

    assert states("push button") == []
    assert states("check box", "checked") == ["checked"]
    assert states("toggle button", "pressed") == ["checked"]
    assert states("tree item", "expandable", "expanded", "selected") == ["selected", "expanded"]
    assert states("page tab", "selected") == ["selected"]
    assert states("table cell", "editable", "focused") == ["focused", "editable"]
    assert states("entry", "editable") == []  # every entry is: not worth a word
    disabled = node("push button", "Save", states=("focusable",))
    disabled.states.remove("enabled")
    disabled.states.remove("sensitive")
    assert shown_states(disabled) == ["disabled"]


def test_long_and_odd_text_reads_cleanly() -> None:
    assert readable("a\ufffc\ufffcb   c\n\td", 80) == "a b c d"
    cut = readable("word " * 100, 30)
    assert len(cut) == 30 and cut.endswith("…")
    control = Control(
        label=1,
        id="x",
        role="entry",
        name="Notes",
        rect=Rect(left=0, top=0, right=1, bottom=1),
        text="line one\nline two " + "x" * 500,
    )
    value = control.shown_value()
    assert value is not None and value.startswith("line one line two") and value.endswith("…")
    assert len(value) == 120
    assert control.text is not None and "\n" in control.text  # the data keeps it whole


def test_what_is_outside_a_scrolled_list_is_not_listed() -> None:
    rows = [node("list item", f"Row {n}", (10, 20 * n, 200, 20 * n + 20)) for n in range(20)]
    window = node("frame", "List", (0, 0, 400, 400), node("list", "", (0, 0, 400, 100), *rows))
    names = [c.name for c in select_view(window, SCREEN).controls]
    assert names == ["Row 0", "Row 1", "Row 2", "Row 3", "Row 4"]


def test_a_control_keeps_its_number_while_the_window_holds_the_same_controls() -> None:
    from roundhouse.devices.contract import ControlList, WindowInfo
    from roundhouse.devices.linux.atspi.tree import keep_numbers

    window = WindowInfo(
        xid=7, title="w", application="a", pid=1, rect=Rect(left=0, top=0, right=9, bottom=9),
        active=True,
    )  # fmt: skip

    def listed(*names_and_tops: tuple[str, int]) -> ControlList:
        page = node(
            "frame",
            "w",
            (0, 0, 1000, 800),
            *(node("push button", name, (10, top, 90, top + 20)) for name, top in names_and_tops),
        )
        for child in page.children:
            child.id = f"id-{child.name}"
        view = select_view(page, SCREEN)
        return ControlList(window=window, controls=view.controls, context=view.context)

    before = listed(("A", 10), ("B", 40), ("C", 70))
    # The page re-lays out: C moves to the top. Same controls: same numbers.
    moved = keep_numbers(before, listed(("A", 40), ("B", 70), ("C", 10)))
    assert [(c.label, c.name) for c in moved.controls] == [(1, "A"), (2, "B"), (3, "C")]
    # A control appears: the window changed, reading order numbers it afresh.
    grown = keep_numbers(moved, listed(("A", 40), ("B", 70), ("C", 10), ("D", 100)))
    assert [(c.label, c.name) for c in grown.controls] == [(1, "C"), (2, "A"), (3, "B"), (4, "D")]
    # Another window never lends its numbers.
    other = listed(("A", 40), ("B", 70), ("C", 10)).model_copy(
        update={"window": window.model_copy(update={"xid": 8})}
    )
    assert [c.name for c in keep_numbers(before, other).controls] == ["C", "A", "B"]


def test_the_cells_of_a_table_row_share_a_line() -> None:
    def cell(label: int, name: str, left: int, top: int, text: str | None = None) -> Control:
        rect = Rect(left=left, top=top, right=left + 50, bottom=top + 20)
        return Control(label=label, id=f"c{label}", role="table cell", name=name, rect=rect,
                       text=text)  # fmt: skip

    controls = [
        cell(1, "A1", 0, 0, "12"),
        cell(2, "B1", 50, 0, "30"),
        cell(3, "A2", 0, 20, "=SUM"),
        Control(
            label=4,
            id="b",
            role="push button",
            name="OK",
            rect=Rect(left=0, top=40, right=40, bottom=60),
        ),  # fmt: skip
        cell(5, "A4", 0, 60),
        cell(6, "B4", 50, 60),
    ]
    note = Context(role="label", text="Totals", rect=Rect(left=0, top=55, right=9, bottom=58),
                   before=6)  # fmt: skip
    assert describe_controls(controls, [note]).splitlines() == [
        "1: [table cell] 'A1' = '12' | 2: 'B1' = '30'",
        "3: [table cell] 'A2' = '=SUM'",
        "4: [push button] 'OK'",
        "5: [table cell] 'A4'",
        "   [label] 'Totals'",  # text between two cells ends the line
        "6: [table cell] 'B4'",
    ]


def test_an_open_menus_items_are_listed_though_its_bar_sits_in_a_narrow_scroll_pane() -> None:
    """LibreOffice's menu bar lies in a 25-pixel scroll pane; the open menu's items pop up
    below it, over the sheet, and are what the model must click. A list's rows outside
    their scroll pane stay hidden."""
    item = node("menu item", "Save As...", (0, 297, 302, 322), actions=("click",))
    open_menu = node(
        "menu",
        "File",
        (0, 19, 39, 44),
        node("menu item", "Open...", (0, 69, 302, 94), actions=("click",)),
        item,
        states=("selected",),
        actions=("click",),
    )
    scrolled_out = node("list item", "Row 40", (0, 900, 300, 920), actions=("click",))
    window = node(
        "frame",
        "s.fods - LibreOffice Calc",
        (0, 0, 1280, 800),
        node(
            "scroll pane",
            "",
            (0, 19, 1256, 44),
            node("viewport", "", (0, 19, 1256, 44), node("menu bar", "", None, open_menu)),
        ),
        node(
            "scroll pane",
            "",
            (0, 100, 300, 400),
            node("list", "", (0, 100, 300, 400), scrolled_out),
        ),
    )
    names = [control.name for control in select_view(window, SCREEN).controls]
    assert names == ["File", "Open...", "Save As..."]


def test_a_menu_bar_that_is_not_drawn_lists_no_menus() -> None:
    """LibreOffice keeps its own menu bar, zero pixels high, beside GTK's: its menus have
    rectangles of their own and say they show, and each menu was listed twice."""

    def file_menu() -> UiNode:
        item = node("menu item", "Save As...", (0, 297, 302, 322), actions=("click",))
        return node("menu", "File", (0, 19, 39, 44), item, states=("selected",), actions=("c",))

    drawn = node("menu bar", "", (0, 19, 1256, 44), file_menu())
    not_drawn = node("menu bar", "", (0, 19, 1280, 19), file_menu())
    window = node("frame", "s.fods - LibreOffice Calc", (0, 0, 1280, 800), drawn, not_drawn)
    names = [control.name for control in select_view(window, SCREEN).controls]
    assert names == ["File", "Save As..."]


rects = st.builds(
    lambda left, top, width, height: Rect(
        left=left, top=top, right=left + width, bottom=top + height
    ),
    st.integers(0, 300),
    st.integers(0, 300),
    st.integers(1, 120),
    st.integers(1, 120),
)


@given(text=rects, placed=st.lists(rects, max_size=12))
def test_a_text_is_placed_before_the_first_control_it_reads_before(
    text: Rect, placed: list[Rect]
) -> None:
    """The unrolled placement (Calc places ~15 texts among ~600 cells every read) says
    what the readable rule says, for any rectangles."""
    controls = [
        Control(label=label, id=f":1.1:/c{label}", role="push button", name="", rect=rect)
        for label, rect in enumerate(placed, start=1)
    ]
    bands = [
        (c.label, c.rect.top, c.rect.bottom, (c.rect.top + c.rect.bottom) / 2, c.rect.left)
        for c in controls
    ]
    expected = next((c.label for c in controls if reads_before(text, c.rect)), len(controls) + 1)
    assert _first_read_after(text, bands, default=len(controls) + 1) == expected


def test_a_control_partly_outside_the_window_is_listed_by_the_part_that_shows() -> None:
    """GNOME Calculator 48 reports its Undo button one pixel left of its window: the click
    and the mark go to what is drawn, inside the window."""
    window = Rect(left=436, top=92, right=844, bottom=708)
    frame = node(
        "frame",
        "Calculator",
        (436, 92, 844, 708),
        node("push button", "Undo", (435, 92, 517, 126), actions=("click",)),
        node("push button", "7", (450, 300, 530, 360), actions=("click",)),
    )
    undo, seven = select_view(frame, window).controls
    assert undo.rect == Rect(left=436, top=92, right=517, bottom=126)
    assert seven.rect == Rect(left=450, top=300, right=530, bottom=360)  # inside: as it was
