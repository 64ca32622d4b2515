"""The finer pointer and keyboard tools (devices/linux/action/fine.py) on the fake display,
whose input is the shared Pointer and Keyboard: a backend that cannot ask its server where
the pointer is says where it last sent it; keys held are released even when the action
between fails."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from roundhouse.config import Settings
from roundhouse.devices.linux.display.pointer import OffScreen
from roundhouse.devices.linux.tools import DesktopTools
from roundhouse.testing.display import FakeDesktop
from roundhouse.testing.tools import fake_tools

SETTINGS = Settings.model_validate({"desktop": {"effect_grace": 0}})


@pytest.fixture
def fake() -> FakeDesktop:
    return FakeDesktop(size=(800, 600))


@pytest.fixture
async def tools(fake: FakeDesktop) -> AsyncIterator[DesktopTools]:
    async with fake_tools(fake, SETTINGS) as opened:
        yield opened


async def test_the_pointer_is_where_it_was_last_sent(tools: DesktopTools) -> None:
    with pytest.raises(Exception, match="not known"):  # never moved: not known here
        await tools.pointer_position()
    assert (await tools.move_pointer(120, 80))["route"] == "pointer"
    assert await tools.pointer_position() == {"x": 120, "y": 80}


async def test_a_button_pressed_and_released_apart_where_the_pointer_is(
    tools: DesktopTools, fake: FakeDesktop
) -> None:
    await tools.move_pointer(10, 20)
    await tools.mouse_down()
    await tools.move_pointer(300, 200)
    await tools.mouse_up()
    assert fake.clicks == [(10, 20, "left")]  # the press where the pointer was
    assert fake.moves[-1] == (300, 200)


async def test_click_pointer_and_a_triple_click(tools: DesktopTools, fake: FakeDesktop) -> None:
    await tools.move_pointer(50, 60)
    await tools.click_pointer(button="right")
    await tools.click_coordinates(70, 80, triple=True)
    assert fake.clicks == [(50, 60, "right"), *[(70, 80, "left")] * 3]


async def test_keys_held_through_a_click_are_released_even_when_it_fails(
    tools: DesktopTools, fake: FakeDesktop
) -> None:
    with pytest.raises(OffScreen):
        await tools.click_coordinates(5000, 10, hold="shift")
    assert fake._held == []  # shift went down, and came up again
    await tools.hold_keys("ctrl", 0.05)
    assert fake._held == []
    with pytest.raises(Exception, match="between 0 and 60"):
        await tools.hold_keys("ctrl", 61)
