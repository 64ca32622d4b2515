"""Which route click_control takes for a plain left click (pointing.py): the pointer where
the control's action holds a press (Qt, GTK 4) and the pointer is sure to land on it, its
action everywhere else; on the fake display (display/fake.py, testing/tools.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from roundhouse.config import Settings
from roundhouse.devices.contract import Control, Rect, WindowInfo
from roundhouse.devices.linux.action.pointing import holds_press, pointer_refusal, under
from roundhouse.devices.linux.tools import DesktopTools
from roundhouse.testing.display import FakeControl, FakeDesktop, FakeWindow
from roundhouse.testing.tools import fake_tools

SETTINGS = Settings.model_validate({"desktop": {"effect_grace": 0.2}})
QT = ("Qt", "6.4.2")


def box(left: int, top: int, width: int = 120, height: int = 30) -> Rect:
    return Rect(left=left, top=top, right=left + width, bottom=top + height)


def counter(fake: FakeDesktop, toolkit: tuple[str, str], rect: Rect | None = None) -> FakeWindow:
    """A window whose "Press me" button counts its presses in its label."""
    window = fake.open_window("Counter", "counter", rect)
    window.toolkit = toolkit

    def press() -> None:
        window.controls[0].name = "Pressed once"

    window.add(FakeControl.button("Press me", box(100, 100), press))
    return window


async def click_press_me(tools: DesktopTools) -> dict[str, object]:
    listed = await tools.get_controls()
    label = next(c["label"] for c in listed["controls"] if c["name"] == "Press me")
    return await tools.click_control(label=label)


@pytest.fixture
async def tools_on() -> AsyncIterator[tuple[FakeDesktop, DesktopTools]]:
    fake = FakeDesktop(size=(800, 600))
    async with fake_tools(fake, SETTINGS) as opened:
        yield fake, opened


@pytest.mark.parametrize("toolkit", [QT, ("GTK", "4.8.3")])
async def test_a_visible_button_of_a_press_holding_toolkit_is_clicked_by_the_pointer(
    tools_on: tuple[FakeDesktop, DesktopTools], toolkit: tuple[str, str]
) -> None:
    fake, tools = tools_on
    window = counter(fake, toolkit)
    result = await click_press_me(tools)
    assert result["route"] == "pointer"
    assert fake.clicks == [(*window.controls[0].rect.center, "left")]
    assert result["effect"] == "confirmed"


async def test_gtk3_keeps_its_action(tools_on: tuple[FakeDesktop, DesktopTools]) -> None:
    fake, tools = tools_on
    counter(fake, ("gtk", "3.24.38"))  # GTK 3's bridge: its action is as fast as a click
    result = await click_press_me(tools)
    assert_clicked_by_action(result, fake)


async def test_a_button_covered_by_another_window_is_clicked_by_its_action(
    tools_on: tuple[FakeDesktop, DesktopTools],
) -> None:
    fake, tools = tools_on
    counter(fake, QT)
    # Stacked over the active window (one kept on top), not active itself.
    fake.open_window("Over it", "other", box(80, 80, 200, 100), active=False)
    result = await click_press_me(tools)
    assert_clicked_by_action(result, fake)


async def test_a_window_below_the_button_does_not_count(
    tools_on: tuple[FakeDesktop, DesktopTools],
) -> None:
    fake, tools = tools_on
    fake.open_window("Under it", "other", box(80, 80, 200, 100))
    counter(fake, QT)  # opened last: on top
    result = await click_press_me(tools)
    assert result["route"] == "pointer"


async def test_without_a_stacking_order_any_overlapping_window_counts() -> None:
    fake = FakeDesktop(size=(800, 600), stacking=False)
    async with fake_tools(fake, SETTINGS) as tools:
        fake.open_window("Under it", "other", box(80, 80, 200, 100))
        counter(fake, QT)
        result = await click_press_me(tools)
    assert result["route"] == "action:click"
    assert fake.clicks == []


async def test_a_button_off_screen_is_clicked_by_its_action(
    tools_on: tuple[FakeDesktop, DesktopTools],
) -> None:
    fake, tools = tools_on
    window = counter(fake, QT, Rect(left=-300, top=30, right=500, bottom=570))
    window.controls[0].rect = box(-250, 100)
    result = await click_press_me(tools)
    assert_clicked_by_action(result, fake)


async def test_turned_off_the_action_is_taken(tools_on: tuple[FakeDesktop, DesktopTools]) -> None:
    fake, tools = tools_on
    counter(fake, QT)
    tools.pointer_clicks = False  # as bench sessions measures the action route itself
    assert (await click_press_me(tools))["route"] == "action:click"


# ------------------------------------------------------------ the decision alone


WINDOW = WindowInfo(
    xid=1, title="w", application="a", pid=None, rect=box(0, 0, 400, 300), active=True
)


def control(rect: Rect) -> Control:
    return Control(label=1, id="x:/1", role="push button", name="OK", rect=rect)


def test_refusals_name_why() -> None:
    inside = control(box(10, 10))
    assert pointer_refusal(inside, WINDOW, [WINDOW], (800, 600), []) is None
    inactive = WINDOW.model_copy(update={"active": False})
    assert pointer_refusal(inside, inactive, [inactive], (800, 600), []) == (
        "its window is not the active one"
    )
    assert "inside its window" in str(
        pointer_refusal(control(box(350, 10)), WINDOW, [WINDOW], (800, 600), [])
    )
    assert "on the screen" in str(pointer_refusal(inside, WINDOW, [WINDOW], (100, 100), []))
    assert "lie over it" in str(pointer_refusal(inside, WINDOW, [WINDOW], (800, 600), [box(0, 0)]))
    assert "no area" in str(pointer_refusal(control(box(10, 10, 0, 0)), WINDOW, [], (800, 600), []))


def test_the_toolkits_that_hold_a_press() -> None:
    assert holds_press("Qt", "5.15.8") and holds_press("GTK", "4.8.3")
    assert not holds_press("gtk", "3.24.38") and not holds_press("Chromium", "120")


def test_the_control_a_point_lands_on_is_the_smallest_holding_it() -> None:
    """click_coordinates' click lands on the button, not on the toolbar around it."""
    toolbar = control(box(0, 0, 400, 40)).model_copy(update={"id": "x:/2", "name": "Tools"})
    button = control(box(10, 5, 60, 30))
    assert under([toolbar, button], 20, 10) == button
    assert under([toolbar, button], 200, 10) == toolbar
    assert under([toolbar, button], 200, 100) is None
    assert under([button], 70, 10) is None  # its right edge is outside


def assert_clicked_by_action(result: dict[str, object], fake: FakeDesktop) -> None:
    """The click went by the control's action: no pointer click, and its effect seen."""
    assert result["route"] == "action:click"
    assert fake.clicks == []
    assert result["effect"] == "confirmed"
