"""GTK 4 and libadwaita windows seen and driven, on a real desktop: GNOME Calculator's
controls lie where the screen shows them (wherever its window is, and at GDK_SCALE=2), its
buttons are pressed through their actions and the display's change is read back, and GNOME
Text Editor is typed into, set and given a second start while it runs."""

from __future__ import annotations

import asyncio
import base64
import io
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from PIL import Image
from tests.desktop.conftest import StartApp, wait_for_window, wait_until, wait_until_async
from Xlib.display import Display  # type: ignore[import-untyped, unused-ignore]

from roundhouse.config import DesktopSettings, Settings
from roundhouse.core.polling import within_async
from roundhouse.devices.contract import Control, ControlList, Rect, WindowInfo
from roundhouse.devices.linux.action.screenshots import layout_marks
from roundhouse.devices.linux.apps.launch import Launcher
from roundhouse.devices.linux.desktops.desktop import Desktop
from roundhouse.devices.linux.desktops.virtual import VirtualDesktop
from roundhouse.devices.linux.display.x11.windows import WindowManager
from roundhouse.devices.linux.tools import DesktopTools

DIGITS = [str(digit) for digit in range(10)]
# Calculator's "=" button is filled with libadwaita's suggested-action colour: orange
# (255, 120, 0) in Calculator 43 (libadwaita 1.2), the accent colour (blue by default) in
# Calculator 48 (libadwaita 1.7). Either is vivid, where the window and its other buttons are
# grey: the spread of its channels is at least this much, theirs a few units.
VIVID = 100


def _inside(rect: Rect, area: Rect) -> bool:
    return (
        area.left <= rect.left
        and area.top <= rect.top
        and rect.right <= area.right
        and rect.bottom <= area.bottom
    )


def _button(listed: ControlList, name: str) -> Control:
    found = [c for c in listed.controls if c.role == "push button" and c.name == name]
    assert len(found) == 1, f"{name!r} among {[c.name for c in listed.controls]}"
    return found[0]


def _display(listed: ControlList) -> str:
    """What Calculator's equation shows: the text of its one editable text field."""
    (field,) = [c for c in listed.controls if c.role == "text" and "editable" in c.states]
    return field.text or ""


async def _calculator(tools: DesktopTools, launch: StartApp, env: str = "") -> WindowInfo:
    # The pointer where an earlier test left it could rest on a button of the new window,
    # whose tooltip then appears during a test's action ("appeared: 'End Group [)]'").
    width, height = tools.screen.size
    await asyncio.to_thread(tools.input.move, width - 1, height - 1)
    argv = ["env", env, "gnome-calculator"] if env else ["gnome-calculator"]
    process = launch(tools.desktop, argv)
    window = wait_for_window(tools.desktop, pid=process.pid, title="Calculator")
    await tools.windows.activate(window.xid)
    return window


async def _keypad(tools: DesktopTools, window: WindowInfo) -> ControlList:
    """The window's controls once its keypad is in the tree (GTK 4 fills it after mapping)."""

    async def ready() -> ControlList | None:
        listed = ControlList.model_validate(await tools.get_controls(window.xid))
        names = {c.name for c in listed.controls}
        return listed if names.issuperset(DIGITS) and "=" in names else None

    return await wait_until_async(ready, what="Calculator's keypad")


async def _settled(tools: DesktopTools, window: WindowInfo) -> ControlList:
    """The keypad once two reads a moment apart place it alike: a window still taking its
    size (GTK 4 maps it, then resizes it to the scale) is placed by the size it has then,
    and its rectangles move with it until it is done (one read under load saw 1.5)."""
    before = await _keypad(tools, window)

    async def same() -> ControlList | None:
        nonlocal before
        await asyncio.sleep(0.3)
        now = ControlList.model_validate(await tools.get_controls(window.xid))
        settled = now.controls == before.controls and now.window == before.window
        before = now
        return now if settled else None

    return await wait_until_async(same, what="the keypad to hold still")


def _move(desktop: Desktop, window: WindowInfo, x: int, y: int) -> WindowInfo:
    """Move the window as a person dragging its title bar would (a ConfigureRequest)."""
    connection = Display(desktop.display)
    try:
        connection.create_resource_object("window", window.xid).configure(x=x, y=y)
        connection.sync()
    finally:
        connection.close()
    with WindowManager(desktop.display) as manager:

        def moved() -> WindowInfo | None:
            now = manager.get(window.xid)
            return now if (now.rect.left, now.rect.top) == (x, y) else None

        return wait_until(moved, what=f"the window to move to ({x}, {y})")


async def test_calculator_controls_lie_inside_its_window_wherever_it_is(
    tools: DesktopTools, launch: StartApp
) -> None:
    window = await _calculator(tools, launch)
    for position in (None, (411, 173)):
        if position is not None:
            window = _move(tools.desktop, window, *position)
        listed = await _keypad(tools, window)
        assert listed.window is not None
        window = listed.window  # as read with the controls (GTK 4 sizes it after mapping)
        assert len(listed.controls) >= 20
        for control in listed.controls:
            assert _inside(control.rect, window.rect), (control, window.rect)
        # GTK 4 reports its frame at (0, 0) wherever the window is: the keypad is placed
        # where it is drawn, the 7 left of the 8 and above the 4.
        seven, eight, four = (_button(listed, name).rect for name in ("7", "8", "4"))
        assert seven.right <= eight.left and seven.bottom <= four.top


async def test_buttons_pressed_through_their_actions_show_739(
    tools: DesktopTools, launch: StartApp
) -> None:
    window = await _calculator(tools, launch)
    listed = await _keypad(tools, window)
    before = (await tools.capture_window_screenshot(window.xid))["png_base64"]
    results = [
        await tools.click_control(label=_button(listed, digit).label, window_id=window.xid)
        for digit in "739"
    ]
    # GTK 4's click action holds the button 250 ms: in view, the pointer clicks instead.
    assert [result["route"] for result in results] == ["pointer"] * 3
    assert [result["effect"] for result in results] == ["confirmed"] * 3
    assert "'739'" in results[-1]["seen"]
    assert _display(ControlList.model_validate(await tools.get_controls(window.xid))) == "739"
    # The screenshot taken after the actions shows their change.
    assert (await tools.capture_window_screenshot(window.xid))["png_base64"] != before


async def test_an_action_without_effect_is_not_seen(tools: DesktopTools, launch: StartApp) -> None:
    window = await _calculator(tools, launch)
    listed = await _keypad(tools, window)
    # An empty display cleared again: the action is done, and nothing changes.
    # Calculator 43 names the button by its tooltip, "Clear Display [Escape]"; 48 by its
    # label, "C".
    (clear,) = [
        c
        for c in listed.controls
        if c.role == "push button" and (c.name.startswith("Clear Display") or c.name == "C")
    ]
    tools.pointer_clicks = False  # the action itself (a pointer moved on it shows hover)
    cleared = await tools.click_control(label=clear.label, window_id=window.xid)
    assert cleared["route"] == "action:click"
    assert cleared["effect"] == "not seen" and cleared["seen"] == "no visible effect", cleared


@pytest.fixture(scope="module")
def scaled_desktop() -> Iterator[Desktop]:
    """A desktop big enough for Calculator at GDK_SCALE=2 (730 × 992 device pixels)."""
    with VirtualDesktop(DesktopSettings(width=1600, height=1200)) as started:
        yield started


@pytest.fixture
async def scaled_tools(scaled_desktop: Desktop) -> AsyncIterator[DesktopTools]:
    opened = await DesktopTools.open(scaled_desktop, Settings())
    async with opened:
        yield opened


async def test_at_scale_2_a_pointer_click_and_a_mark_land_on_their_control(
    scaled_tools: DesktopTools, launch: StartApp
) -> None:
    window = await _calculator(scaled_tools, launch, env="GDK_SCALE=2")
    listed = await _settled(scaled_tools, window)
    seven, equals = _button(listed, "7"), _button(listed, "=")
    assert seven.rect.width > 100  # 55 logical pixels wide: device pixels, twice as many
    x, y = seven.rect.center
    clicked = await scaled_tools.click_coordinates(x, y)
    assert clicked["route"] == "pointer" and clicked["effect"] == "confirmed"
    assert _display(ControlList.model_validate(await scaled_tools.get_controls(window.xid))) == "7"
    # The "=" button's mark lies on the button in the window's picture: what it frames is
    # almost all of one vivid colour, the suggested action's, which no grey button has.
    shot = await scaled_tools.capture_window_screenshot(window.xid)
    image = Image.open(io.BytesIO(base64.b64decode(shot["png_base64"]))).convert("RGB")
    left, top, _, _ = shot["rect"]
    (mark,) = layout_marks([equals], image.size, (left, top))
    box = mark.box
    inner = image.crop((box.left + 6, box.top + 6, box.right - 6, box.bottom - 6))
    colours = inner.getcolors(maxcolors=1 << 16) or []
    _, fill = max(colours)
    filled = sum(count for count, colour in colours if _near(colour, fill))
    assert filled > 0.8 * inner.width * inner.height, (fill, filled)
    assert max(fill) - min(fill) >= VIVID, fill


def _near(colour: tuple[int, int, int], wanted: tuple[int, int, int]) -> bool:
    return all(abs(a - b) <= 24 for a, b in zip(colour, wanted, strict=True))


async def _text_editor(tools: DesktopTools, launch: StartApp, path: Path) -> WindowInfo:
    process = launch(tools.desktop, ["gnome-text-editor", "--standalone", str(path)])
    window = wait_for_window(tools.desktop, pid=process.pid, title=path.name)
    await tools.windows.activate(window.xid)
    return window


FOCUS_SETTLE = 5.0  # seconds a new GNOME Text Editor window's view may take to say it is focused


async def _text_view(tools: DesktopTools, window: WindowInfo) -> Control:
    async def found() -> Control | None:
        listed = ControlList.model_validate(await tools.get_controls(window.xid))
        return next((c for c in listed.controls if c.role == "text"), None)

    return await wait_until_async(found, what="the document's text view")


async def test_text_editor_is_typed_into_and_set_through_its_routes(
    tools: DesktopTools, launch: StartApp, tmp_path: Path
) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("")
    window = await _text_editor(tools, launch, path)
    view = await _text_view(tools, window)
    assert _inside(view.rect, window.rect)
    # GTK 4 refuses Component.GrabFocus: a click on the view gives it the focus, unless it
    # has it already. GTK 4.8 focuses a new window's view a moment after it shows (the list
    # above may say not yet), later GTK 4 leaves it to a click: which one this is is known
    # once the view has had the time to say it is focused.
    assert tools.tree is not None
    tree = tools.tree

    async def focused() -> bool:
        return "focused" in await tree.states(view.id)

    has_focus = await within_async(focused, FOCUS_SETTLE) is not None
    typed = await tools.type_text("typed by keys", label=view.label)
    route = "focus+keyboard" if has_focus else "pointer+keyboard"
    assert typed["route"] == route and typed["effect"] == "confirmed"
    assert "contains the typed text" in typed["seen"]
    replaced = await tools.set_text("set at once — Grüße", label=view.label)
    assert replaced["route"] == "editable-text" and replaced["effect"] == "confirmed"
    saved = await tools.press_keys("ctrl+s")
    assert saved["effect"] == "confirmed"
    wait_until(lambda: path.read_text().rstrip("\n") == "set at once — Grüße", what="the save")


async def test_a_second_start_of_a_running_single_instance_app_gives_its_window(
    desktop: Desktop, windows: WindowManager, tmp_path: Path
) -> None:
    """GNOME Text Editor is a GApplication: a second start hands over to the instance
    running and exits 0 at once. The launch is that instance's window, not a 60 s wait."""
    with Launcher(windows, desktop.env, desktop.app_command) as launcher:
        try:
            first = await launcher.launch("gnome-text-editor")
            started = time.monotonic()
            second = await launcher.launch("gnome-text-editor", timeout=20)
            assert time.monotonic() - started < 15
            assert second.window.pid == first.window.pid
            assert launcher.launched()[-1].poll() == 0  # the second start handed over
        finally:
            launcher.kill_launched()
