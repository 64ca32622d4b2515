"""The desktop tools on the fake display (display/fake.py, testing/tools.py): what
each tool sends, which route it takes, and what it reads back, with no desktop."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator

import pytest

from roundhouse.config import Settings
from roundhouse.core.commands import Command, ResultStatus
from roundhouse.devices.contract import Rect, WindowInfo
from roundhouse.devices.linux.action.around import LookAhead
from roundhouse.devices.linux.action.effects import Look
from roundhouse.devices.linux.atspi.bus import AtspiError
from roundhouse.devices.linux.display.pointer import HORIZONTAL, VERTICAL
from roundhouse.devices.linux.tools import DesktopTools, desktop_registry
from roundhouse.testing.display import FakeControl, FakeDesktop, FakeWindow
from roundhouse.testing.tools import fake_tools

# A short watch for late changes: an action that changes nothing returns sooner.
SETTINGS = Settings.model_validate({"desktop": {"effect_grace": 0.2}})


def box(left: int, top: int, width: int = 120, height: int = 30) -> Rect:
    return Rect(left=left, top=top, right=left + width, bottom=top + height)


@pytest.fixture
def fake() -> FakeDesktop:
    return FakeDesktop(size=(800, 600))


@pytest.fixture
def editor(fake: FakeDesktop) -> FakeWindow:
    """A window with a text field and a Save button that does nothing yet."""
    return fake.open_window(
        "Notes",
        "notes",
        controls=[
            FakeControl.text_field("Name", box(100, 100, 300), "old"),
            FakeControl("push button", "Save", box(100, 200)),  # no action: the pointer
        ],
    )


@pytest.fixture
async def tools(fake: FakeDesktop) -> AsyncIterator[DesktopTools]:
    async with fake_tools(fake, SETTINGS) as opened:
        yield opened


async def label_of(tools: DesktopTools, name: str) -> int:
    listed = await tools.get_controls()
    return next(c["label"] for c in listed["controls"] if c["name"] == name)


async def test_click_coordinates_clicks_there_with_the_pointer(
    tools: DesktopTools, fake: FakeDesktop, editor: FakeWindow
) -> None:
    result = await tools.click_coordinates(150, 110, button="right", double=True)
    assert result["route"] == "pointer"
    assert fake.clicks == [(150, 110, "right"), (150, 110, "right")]
    assert fake.moves[-1] == (150, 110)


async def test_click_control_without_an_action_clicks_its_centre(
    tools: DesktopTools, fake: FakeDesktop, editor: FakeWindow
) -> None:
    save = editor.control("Save")
    save.on_press = lambda: fake.open_window("Save As", "notes")
    result = await tools.click_control(label=await label_of(tools, "Save"))
    assert result["route"] == "pointer"
    assert fake.clicks == [(*save.rect.center, "left")]
    assert result["effect"] == "confirmed"
    assert "new window 'Save As' opened (active)" in result["seen"]


async def test_click_control_with_an_action_uses_it_and_not_the_pointer(
    tools: DesktopTools, fake: FakeDesktop, editor: FakeWindow
) -> None:
    editor.add(FakeControl.button("Close", box(300, 200), lambda: fake.close(editor.xid)))
    result = await tools.click_control(label=await label_of(tools, "Close"))
    assert result["route"] == "action:click"
    assert fake.clicks == []
    assert result["effect"] == "confirmed" and "window 'Notes' closed" in result["seen"]


async def test_what_an_application_shows_after_a_first_change_is_in_the_look_after() -> None:
    """On a fake that tells what it draws, the settle waits on it and the look after is
    begun ahead, while the settle waits out its gap: Save shows "Saving" at once and
    "Saved" 30 ms later, after that look may have begun. The result says "Saved"."""
    fake = FakeDesktop(size=(800, 600), drawing=True)
    loop = asyncio.get_running_loop()
    status = FakeControl.text_field("Status", box(100, 100, 300), "Idle")

    def saved() -> None:
        status.text = "Saved"
        fake.drew()

    def save() -> None:
        status.text = "Saving"
        loop.call_soon_threadsafe(loop.call_later, 0.03, saved)

    fake.open_window(
        "Notes", "notes", controls=[status, FakeControl.button("Save", box(100, 200), save)]
    )
    async with fake_tools(fake, SETTINGS) as tools:
        result = await tools.click_control(label=await label_of(tools, "Save"))
    assert result["effect"] == "confirmed" and not result["still_changing"]
    assert "'Status' (text) now shows 'Saved'" in result["seen"], result["seen"]


def look_of(*titles: str) -> Look:
    rect = box(0, 0, 400, 300)
    return Look(
        tuple(
            WindowInfo(xid=n, title=t, application="notes", pid=None, rect=rect, active=n == 1)
            for n, t in enumerate(titles, 1)
        ),
        1,
    )


async def test_a_look_begun_ahead_stands_only_where_nothing_changed_since() -> None:
    """LookAhead's look stands where it began after the settle's last change and the
    windows are listed the same after; else it is taken again (None), and a look still
    under way is cancelled."""
    listed = look_of("Notes").windows

    async def notes() -> Look:
        return look_of("Notes")

    ahead = LookAhead(notes)
    ahead.begin()
    quiet_from = time.monotonic()  # a change came after the look began
    assert await ahead.taken(quiet_from, listed) is None
    ahead.begin()
    assert await ahead.taken(quiet_from, listed) == look_of("Notes")
    ahead.begin()
    assert await ahead.taken(quiet_from, look_of("Notes", "Save As").windows) is None
    assert await ahead.taken(None, listed) is None  # the settle did not end done

    async def hung() -> Look:
        await asyncio.sleep(10)
        return look_of("Notes")

    async def failed() -> Look:
        raise AtspiError("the application left the bus")

    slow = LookAhead(hung)
    slow.begin()
    task = slow._task
    slow.begin()  # a change came: the look under way is stale
    await asyncio.sleep(0)
    assert task is not None and task.cancelled()
    slow.drop()
    broken = LookAhead(failed)
    broken.begin()
    assert await broken.taken(quiet_from, listed) is None


async def test_type_text_into_a_field_focuses_it_then_types(
    tools: DesktopTools, fake: FakeDesktop, editor: FakeWindow
) -> None:
    result = await tools.type_text(" Zoë", label=await label_of(tools, "Name"))
    assert result["route"] == "focus+keyboard"  # GrabFocus: the caret stays at the end
    assert fake.strokes == [" ", "Z", "o", "ë"] and fake.typed == " Zoë"
    assert editor.control("Name").text == "old Zoë"
    assert result["effect"] == "confirmed"
    assert "'Name' (text) now holds 'old Zoë' (contains the typed text)" in result["seen"]


async def test_a_field_that_refuses_the_focus_is_clicked_before_typing(
    tools: DesktopTools, fake: FakeDesktop, editor: FakeWindow
) -> None:
    name = editor.control("Name")
    name.grabs_focus = False  # as GTK 4 does
    result = await tools.type_text("!", label=await label_of(tools, "Name"))
    assert result["route"] == "pointer+keyboard"
    assert fake.clicks == [(*name.rect.center, "left")]
    assert name.text == "old!" and result["effect"] == "confirmed"


async def test_a_field_that_has_the_focus_already_is_typed_into_without_a_click(
    tools: DesktopTools, fake: FakeDesktop, editor: FakeWindow
) -> None:
    # GNOME Text Editor (GTK 4) on a person's GNOME before `setup`: its text view refuses
    # GrabFocus, and no pointer can reach it, but the caret is in it already.
    name = editor.control("Name")
    name.grabs_focus = False
    fake.focus(name)
    result = await tools.type_text("!", label=await label_of(tools, "Name"))
    assert result["route"] == "focus+keyboard"
    assert fake.clicks == []
    assert name.text == "old!" and result["effect"] == "confirmed"


async def test_text_typed_into_a_document_without_text_is_read_from_its_focused_paragraph(
    tools: DesktopTools, fake: FakeDesktop
) -> None:
    # Writer: the document has no Text of its own; a click into it puts the caret in its
    # paragraph, which holds what is typed. Before, the text "could not be read back", and a
    # list of actions stopped there.
    editable = {"enabled", "focusable", "editable"}
    document = FakeControl("document text", "Untitled 1", box(50, 50, 600, 400), states=editable)
    document.readable = False
    document.grabs_focus = False
    paragraph = FakeControl("paragraph", "", box(60, 60, 580, 380), states=set(editable))
    fake.open_window("Untitled 1 - Writer", "writer", controls=[document, paragraph])
    fake.focus(paragraph)

    result = await tools.type_text(
        "Trains leave at dawn.", label=await label_of(tools, "Untitled 1")
    )

    assert paragraph.text == "Trains leave at dawn."
    assert result["effect"] == "confirmed"
    assert "the paragraph now holds 'Trains leave at dawn.'" in result["seen"]


async def test_set_text_without_editable_text_selects_all_and_types(
    tools: DesktopTools, fake: FakeDesktop, editor: FakeWindow
) -> None:
    result = await tools.set_text("Ada", label=await label_of(tools, "Name"))
    assert result["route"] == "focus+keyboard"
    assert fake.strokes == ["ctrl+a", "A", "d", "a"]
    assert editor.control("Name").text == "Ada"
    assert result["effect"] == "confirmed"


async def test_set_text_through_editable_text_sends_no_key(
    tools: DesktopTools, fake: FakeDesktop, editor: FakeWindow
) -> None:
    editor.control("Name").editable_text = True
    result = await tools.set_text("Ada", label=await label_of(tools, "Name"))
    assert result["route"] == "editable-text"
    assert fake.strokes == [] and editor.control("Name").text == "Ada"
    assert result["effect"] == "confirmed"


async def test_scroll_turns_the_wheel_where_asked(
    tools: DesktopTools, fake: FakeDesktop, editor: FakeWindow
) -> None:
    assert (await tools.scroll(200, 300))["route"] == "pointer"
    await tools.scroll(200, 300, direction="up", amount=2)
    await tools.scroll(10, 20, direction="left", amount=1)
    assert fake.scrolls == [
        (200, 300, VERTICAL, 3),
        (200, 300, VERTICAL, -2),
        (10, 20, HORIZONTAL, -1),
    ]


async def test_a_drag_presses_at_the_start_and_moves_to_the_end(
    tools: DesktopTools, fake: FakeDesktop, editor: FakeWindow
) -> None:
    await tools.drag(100, 100, 300, 250)
    assert fake.clicks == [(100, 100, "left")]
    assert fake.moves[0] == (100, 100) and fake.moves[-1] == (300, 250)


async def test_a_window_retitled_by_a_key_is_confirmed_and_nothing_is_not_seen(
    tools: DesktopTools, fake: FakeDesktop, editor: FakeWindow
) -> None:
    fake.on_keys("ctrl+s", lambda: setattr(editor, "title", "Notes (saved)"))
    saved = await tools.press_keys("ctrl+s")
    assert fake.strokes == ["ctrl+s"]
    assert saved["effect"] == "confirmed" and "window title now 'Notes (saved)'" in saved["seen"]
    nothing = await tools.click_coordinates(5, 5)  # the background: no window there
    assert nothing["effect"] == "not seen"
    assert nothing["seen"] == "no visible effect"


async def test_a_late_window_is_seen_past_a_repaint_that_showed_nothing(
    fake: FakeDesktop, editor: FakeWindow
) -> None:
    # LibreOffice's Save dialog: Return repaints its button at once, and the format question
    # opens later. The first change showed nothing; the grace goes on to the window.
    def save() -> None:
        threading.Timer(0.3, lambda: fake.background.putpixel((1, 1), (255, 0, 0))).start()
        threading.Timer(0.7, lambda: fake.open_window("Confirm File Format", "notes")).start()

    fake.on_keys("Return", save)
    settings = Settings.model_validate({"desktop": {"effect_grace": 1.5}})
    async with fake_tools(fake, settings) as tools:
        result = await tools.press_keys("Return")
    assert result["effect"] == "confirmed"
    assert "new window 'Confirm File Format' opened (active)" in result["seen"]


async def test_close_window_closes_or_lets_the_window_ask_first(
    tools: DesktopTools, fake: FakeDesktop, editor: FakeWindow
) -> None:
    other = fake.open_window("Draft", "notes")
    other.on_close = lambda: False  # it asks "Save changes?" and stays
    asked = await tools.close_window()
    assert asked["effect"] == "not seen" and other in fake.windows
    closed = await tools.close_window(editor.xid)
    assert closed["route"] == "window-manager"
    assert closed["effect"] == "confirmed" and "window 'Notes' closed" in closed["seen"]
    assert editor not in fake.windows


async def test_a_click_off_the_screen_is_refused_and_nothing_is_sent(
    tools: DesktopTools, fake: FakeDesktop, editor: FakeWindow
) -> None:
    registry = desktop_registry(tools)
    for name, parameters in (
        ("click_coordinates", {"x": 800, "y": 10}),
        ("scroll", {"x": 10, "y": -1}),
        ("drag", {"start_x": 10, "start_y": 10, "end_x": 10, "end_y": 5000}),
    ):
        result = await registry.call(Command(tool_name=name, parameters=parameters), 30)
        assert result.status is ResultStatus.FAILURE, name
        assert "is outside the 800x600 screen" in (result.error or ""), result.error
    assert fake.moves == [] and fake.clicks == [] and fake.scrolls == []


async def test_an_action_lists_the_windows_once_before_and_once_after(
    tools: DesktopTools, fake: FakeDesktop, editor: FakeWindow
) -> None:
    label = await label_of(tools, "Name")
    fake.listings = 0
    await tools.type_text("x", label=label)
    assert fake.listings == 2
    fake.listings = 0
    await tools.click_coordinates(5, 5)  # nothing seen: the late watch lists once more
    assert fake.listings == 3


async def test_without_a_tree_coordinates_work_and_windows_tell_the_effect(
    fake: FakeDesktop, editor: FakeWindow
) -> None:
    async with fake_tools(fake, SETTINGS, tree=False) as tools:
        listed = await tools.get_controls()
        assert listed["controls"] == [] and "no accessibility bus" in listed["note"]
        editor.control("Save").on_press = lambda: fake.close(editor.xid)
        result = await tools.click_coordinates(*editor.control("Save").rect.center)
    assert result["effect"] == "confirmed" and "window 'Notes' closed" in result["seen"]


async def test_a_window_screenshot_shows_the_window_with_its_controls_numbered(
    tools: DesktopTools, editor: FakeWindow
) -> None:
    shot = await tools.capture_window_screenshot(annotate=True)
    assert (shot["width"], shot["height"]) == (editor.rect.width, editor.rect.height)
    assert shot["annotated_controls"] == 2 and shot["method"] == "region"
    assert shot["png_base64"]


async def test_the_switches_set_on_the_tools_are_the_ones_their_parts_read(
    tools: DesktopTools,
) -> None:
    """DesktopTools holds its parts: a switch bench sessions turns on it (before against
    after) must reach the `around` that the observing and acting parts read."""
    for switch in ("witnessed", "pointer_clicks", "spare_feedback"):
        assert getattr(tools, switch) is True
        setattr(tools, switch, False)
        assert getattr(tools.around, switch) is False
        assert getattr(tools, switch) is False
    assert tools.acting.around is tools.around is tools.observing.around
