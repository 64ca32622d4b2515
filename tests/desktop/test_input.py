"""XTest input on real applications: Unicode typing, key combinations, clicks, drag, scroll.

Every effect is checked twice where it can be: through AT-SPI (the editor's text) and on
disk (the editor saves the file).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.desktop.conftest import (
    StartApp,
    gedit_argv,
    wait_for_window,
    wait_until,
    wait_until_async,
)
from tests.helpers import whole_text
from Xlib import XK, X  # type: ignore[import-untyped, unused-ignore]
from Xlib import display as xdisplay  # type: ignore[import-untyped, unused-ignore]

from roundhouse.devices.contract import Control
from roundhouse.devices.linux.atspi.bus import parse_node_id
from roundhouse.devices.linux.atspi.constants import (
    GET_CHARACTER_EXTENTS,
)
from roundhouse.devices.linux.desktops.desktop import Desktop
from roundhouse.devices.linux.display.x11.input import (
    InputError,
    char_keysym,
    key_keysym,
    parse_combo,
)
from roundhouse.devices.linux.tools import DesktopTools

UNICODE = "Grüße, Zoë! 10 € — ½ ≠ ∞ 漢字\nSecond line: ~`{}|<>?\"' ok"


class Editor:
    """gedit with one file open, driven by the device's XTest input and read over AT-SPI."""

    def __init__(self, tools: DesktopTools, path: Path, text: Control) -> None:
        self.tools, self.path, self.text = tools, path, text

    async def content(self) -> str:
        assert self.tools.tree is not None
        return await whole_text(self.tools.tree, self.text.id)

    async def wait_content(self, expected: str) -> None:
        async def matches() -> bool:
            return await self.content() == expected

        await wait_until_async(matches, what=f"the editor to hold {expected!r}")

    async def save(self, expected: str) -> None:
        await self.tools.press_keys("ctrl+s")
        # gedit ends a saved file with a newline.
        wait_until(lambda: self.path.read_text() in (expected, expected + "\n"), what="the save")

    async def char_box(self, offset: int) -> tuple[int, int, int, int]:
        """Screen rectangle (x, y, width, height) of the character at `offset`."""
        assert self.tools.tree is not None
        reply = await self.tools.tree.bus.call(
            parse_node_id(self.text.id), GET_CHARACTER_EXTENTS, [offset, 0]
        )
        x, y, width, height = (int(value) for value in reply)
        return x, y, width, height


@pytest.fixture
async def editor(
    desktop: Desktop,
    launch: StartApp,
    tools: DesktopTools,
    tmp_path: Path,
    request: pytest.FixtureRequest,
) -> Editor:
    initial: str = getattr(request, "param", "")
    path = tmp_path / "notes.txt"
    path.write_text(initial)
    process = launch(desktop, gedit_argv(str(path)))
    # Once the title names the file, gedit has loaded it and will not take the focus back.
    window = wait_for_window(desktop, pid=process.pid, title=path.name)
    await tools.windows.activate(window.xid)

    async def text_view() -> Control | None:
        listed = await tools.tree.controls(tools.windows.get(window.xid)) if tools.tree else None
        views = [c for c in listed.controls if c.role == "text"] if listed else []
        return max(views, key=lambda c: c.rect.width * c.rect.height) if views else None

    text = await wait_until_async(text_view, what="gedit's text view")
    found = Editor(tools, path, text)
    await found.wait_content(initial.removesuffix("\n"))
    return found


async def test_unicode_typing_reaches_the_editor_and_the_file(editor: Editor) -> None:
    await editor.tools.click_coordinates(*editor.text.rect.center)
    await editor.tools.type_text("draft to replace")
    await editor.wait_content("draft to replace")
    await editor.tools.press_keys("ctrl+a")  # a combination: select all, then type over it
    await editor.tools.type_text(UNICODE)
    await editor.wait_content(UNICODE)
    await editor.save(UNICODE)


@pytest.mark.parametrize("editor", ["alpha beta gamma\nsecond line\n"], indirect=True)
async def test_double_click_selects_a_word(editor: Editor) -> None:
    x, y, width, height = await editor.char_box(len("alpha beta g"))  # inside "gamma"
    await editor.tools.click_coordinates(x + width // 2, y + height // 2, double=True)
    await editor.tools.type_text("delta")
    await editor.wait_content("alpha beta delta\nsecond line")
    await editor.save("alpha beta delta\nsecond line\n")


@pytest.mark.parametrize("editor", ["alpha beta gamma\nsecond line\n"], indirect=True)
async def test_drag_selects_text(editor: Editor) -> None:
    x0, y0, _, height = await editor.char_box(0)
    x1, _, width, _ = await editor.char_box(len("alpha bet"))  # the last letter of "beta"
    middle = y0 + height // 2
    await editor.tools.drag(x0 + 1, middle, x1 + width - 1, middle)
    await editor.tools.type_text("X")
    await editor.wait_content("X gamma\nsecond line")
    await editor.save("X gamma\nsecond line\n")


LONG = "".join(f"line {number}\n" for number in range(1, 301))


@pytest.mark.parametrize("editor", [LONG], indirect=True)
async def test_scroll_then_click_places_the_caret_further_down(editor: Editor) -> None:
    x, y, _, height = await editor.char_box(0)
    first_visible = (x + 2, y + height // 2)  # "line 1" before scrolling
    centre = editor.text.rect.center
    await editor.tools.scroll(*centre, direction="down", amount=10)
    await editor.tools.click_coordinates(*first_visible)
    await editor.tools.press_keys("Home")
    await editor.tools.type_text(">")
    content = await editor.content()
    lines = content.splitlines()
    marked = [number for number, line in enumerate(lines, start=1) if line.startswith(">")]
    assert len(marked) == 1 and marked[0] > 10  # the click landed on a line scrolled into view


def test_key_names_and_combinations() -> None:
    assert parse_combo("ctrl+shift+t") == (["Control_L", "Shift_L"], "t")
    assert parse_combo("alt+F4") == (["Alt_L"], "F4")
    assert parse_combo("ctrl++") == (["Control_L"], "+")
    assert parse_combo("Return") == ([], "Return")
    assert key_keysym("enter") == key_keysym("Return") == XK.XK_Return
    assert key_keysym("f4") == XK.XK_F4
    assert key_keysym("PageDown") == XK.XK_Next
    assert char_keysym("a") == ord("a") and char_keysym("é") == 0xE9
    assert char_keysym("€") == 0x010020AC and char_keysym("\n") == XK.XK_Return
    with pytest.raises(InputError, match="unknown key 'nosuchkey'"):
        key_keysym("nosuchkey")
    with pytest.raises(InputError, match="unknown modifier 'hyper'"):
        parse_combo("hyper+x")


def _popups(desktop: Desktop) -> set[int]:
    """Mapped override-redirect windows on the root: menus and tooltips."""
    connection = xdisplay.Display(desktop.display)
    try:
        found = set()
        for child in connection.screen().root.query_tree().children:
            attributes = child.get_attributes()
            if attributes.override_redirect and attributes.map_state == X.IsViewable:
                found.add(int(child.id))
        return found
    finally:
        connection.close()


async def test_right_click_opens_the_context_menu(editor: Editor, desktop: Desktop) -> None:
    before = _popups(desktop)
    await editor.tools.click_coordinates(*editor.text.rect.center, button="right")
    menu = wait_until(lambda: _popups(desktop) - before, what="a context menu")
    await editor.tools.press_keys("Escape")
    wait_until(lambda: not (menu & _popups(desktop)), what="the menu to close")
