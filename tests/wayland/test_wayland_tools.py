"""The desktop tools on each Wayland session: typing any text, whatever the session's
keyboard layout can type; GNOME Calculator's buttons by action and by pointer; a Qt
button by pointer; closing a window."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from tests.desktop.conftest import wait_until, wait_until_async
from tests.gui.conftest import QT_COMMAND

from roundhouse.config import Settings
from roundhouse.devices.linux.desktops.desktop import Desktop
from roundhouse.devices.linux.tools import DesktopTools

TEXT = "Grüße aus Zürich — 東京"


@pytest.fixture
async def tools(session: Desktop) -> AsyncIterator[DesktopTools]:
    async with await DesktopTools.open(session, Settings()) as opened:
        try:
            yield opened
        finally:
            opened.launcher.kill_launched()


@pytest.mark.usefixtures("screen")
async def test_type_text_types_what_the_layout_lacks_into_the_field(
    tools: DesktopTools, tmp_path: Path
) -> None:
    """sway takes our keymap and types it with keys; GNOME and KDE read keys with the
    session's US layout, which has none for ü, — or 東京: the text goes in at the caret
    through the field's EditableText, and the tool says it did."""
    target = tmp_path / "unicode.txt"
    await tools.launch_application(f"gedit --standalone {target}")
    listed = await tools.get_controls()
    field = next(c for c in listed["controls"] if c["role"] == "text")
    done = await tools.type_text(TEXT, label=field["label"])
    assert done["effect"] == "confirmed", done
    await tools.press_keys("ctrl+s")
    wait_until(lambda: target.exists() and target.read_text() == TEXT + "\n", 20, "the save")


DIGITS = [str(digit) for digit in range(10)]


def _inside(rect: dict[str, int], area: dict[str, int]) -> bool:
    return (
        area["left"] <= rect["left"]
        and area["top"] <= rect["top"]
        and rect["right"] <= area["right"]
        and rect["bottom"] <= area["bottom"]
    )


def _equation(listed: dict[str, Any]) -> str:
    """What Calculator's equation shows: the text of its one editable text field."""
    (field,) = [c for c in listed["controls"] if c["role"] == "text" and "editable" in c["states"]]
    return str(field["text"] or "")


@pytest.mark.usefixtures("screen")
async def test_calculator_buttons_show_739_and_a_click_lands_on_its_button(
    tools: DesktopTools,
) -> None:
    """GNOME Calculator (GTK 4) on each compositor: its controls lie inside its window, its
    buttons clicked by click_control (by the pointer: in view) show 739, and a pointer click
    at the centre of the 5 the tree places (window-relative rectangles, placed by
    Windows.content) adds 5."""
    window = await tools.launch_application("gnome-calculator")

    async def keypad() -> dict[str, Any] | None:
        listed = await tools.get_controls(window["xid"])
        names = {c["name"] for c in listed["controls"]}
        return listed if names.issuperset(DIGITS) else None

    listed = await wait_until_async(keypad, 30, "Calculator's keypad")
    assert len(listed["controls"]) >= 20
    for control in listed["controls"]:
        assert _inside(control["rect"], listed["window"]["rect"]), control
    button = {c["name"]: c for c in listed["controls"] if c["role"] == "push button"}
    results = [
        await tools.click_control(label=button[digit]["label"], window_id=window["xid"])
        for digit in "739"
    ]
    # In view in the active window: the pointer, not GTK 4's 250 ms press action.
    assert [r["route"] for r in results] == ["pointer"] * 3
    assert [r["effect"] for r in results] == ["confirmed"] * 3
    assert _equation(await tools.get_controls(window["xid"])) == "739"
    five = button["5"]["rect"]
    x, y = (five["left"] + five["right"]) // 2, (five["top"] + five["bottom"]) // 2
    await tools.click_coordinates(x, y)

    async def shows_7395() -> bool:
        return _equation(await tools.get_controls(window["xid"])) == "7395"

    await wait_until_async(shows_7395, 10, "the 5 clicked by the pointer")


@pytest.mark.usefixtures("screen")
async def test_a_pointer_click_at_a_qt_buttons_centre_presses_it(tools: DesktopTools) -> None:
    """Qt places its objects relative to its window, and where the compositor draws no
    decorations (GNOME) it draws a title bar of its own above them: the button the tree
    places is where Qt draws it, so a click at its centre presses it (its label says so)."""
    window = await tools.launch_application(QT_COMMAND)

    async def button() -> dict[str, Any] | None:
        listed = await tools.get_controls(window["xid"])
        return next((c for c in listed["controls"] if c["name"] == "Press me"), None)

    rect = (await wait_until_async(button, 30, "the Qt app's button"))["rect"]
    x, y = (rect["left"] + rect["right"]) // 2, (rect["top"] + rect["bottom"]) // 2
    done = await tools.click_coordinates(x, y)
    assert done["effect"] == "confirmed" and "'Pressed 1 times'" in done["seen"], done


@pytest.mark.usefixtures("screen")
async def test_close_window_closes_a_window_or_lets_it_ask_first(
    tools: DesktopTools, tmp_path: Path
) -> None:
    """close_window asks the compositor (no compositor here binds alt+F4 for us): a window
    with nothing to lose goes; one with typed text stays and asks about saving."""
    clean = await tools.launch_application(f"gedit --standalone {tmp_path / 'clean.txt'}")
    closed = await tools.close_window(clean["xid"])
    assert closed["route"] == "window-manager"
    assert clean["xid"] not in [w["xid"] for w in await tools.list_windows()]

    typed = await tools.launch_application(f"gedit --standalone {tmp_path / 'typed.txt'}")
    listed = await tools.get_controls(typed["xid"])
    field = next(c for c in listed["controls"] if c["role"] == "text")
    await tools.type_text("unsaved", label=field["label"])
    await tools.close_window(typed["xid"])

    async def asks() -> bool:
        listed = await tools.get_controls()
        return any("Save" in c["name"] for c in listed["controls"] if c["role"] == "push button")

    await wait_until_async(asks, 10, "gedit to ask about saving")
    assert typed["xid"] in [w["xid"] for w in await tools.list_windows()]


@pytest.mark.usefixtures("screen")
async def test_shift_held_alone_selects_as_a_persons_shift_does(
    tools: DesktopTools, tmp_path: Path
) -> None:
    """hold_keys and a click's `hold` press a modifier alone and keep it down: a key
    pressed meanwhile is shifted (Home selects to the line's start). wlroots takes a virtual
    keyboard's modifiers from what the client says, not from its keys: a Shift held alone
    was a key down that set no modifier there. GNOME's keyboard is woken before each key
    (a Shift pressed and released), which released a Shift held. On both, Home only moved
    the caret."""
    target = tmp_path / "held.txt"
    await tools.launch_application(f"gedit --standalone {target}")
    listed = await tools.get_controls()
    field = next(c for c in listed["controls"] if c["role"] == "text")
    done = await tools.type_text("alpha beta", label=field["label"])
    assert done["effect"] == "confirmed", done
    tools.input.keys_down("shift")
    try:
        tools.input.press_keys("Home")
    finally:
        tools.input.keys_up("shift")
    await tools.type_text("W")
    await tools.press_keys("ctrl+s")
    wait_until(target.exists, 20, "the save")  # gedit saves whole, by a rename
    assert target.read_text() == "W\n"  # "Walpha beta": Home moved the caret, unshifted
