"""Each Wayland display server on its own headless compositor, with gedit as a Wayland
client: keys and text reach the application (checked on disk: gedit saves them), clicks
land where the accessibility tree and the backend's content rectangle place a control, a
drag selects the text it crosses, screenshots show the window, windows are listed,
activated and closed, and a route the compositor does not offer is refused at once,
saying why and what would fix it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from PIL import Image, ImageChops
from tests.desktop.conftest import wait_until, wait_until_async
from tests.wayland.conftest import StartGedit

from roundhouse.devices.contract import Rect, UiNode, WindowInfo
from roundhouse.devices.linux.atspi.bus import parse_node_id
from roundhouse.devices.linux.atspi.client import AtspiClient, TreeLimits
from roundhouse.devices.linux.atspi.constants import (
    GET_CHARACTER_EXTENTS,
    GET_EXTENTS,
)
from roundhouse.devices.linux.desktops.desktop import Desktop
from roundhouse.devices.linux.display.backends import detect, named
from roundhouse.devices.linux.display.base import DisplayServer, DisplayUnavailable
from roundhouse.devices.linux.display.gnome.backend import open_gnome
from roundhouse.devices.linux.display.kde.fakeinput import FakeInput
from roundhouse.devices.linux.display.keys import InputError
from roundhouse.devices.linux.display.labwc.toplevels import ForeignToplevels
from roundhouse.devices.linux.display.wayland.wire import WaylandError
from roundhouse.devices.linux.display.wlroots.input import WlrootsInput

# The backend a session that names itself nowhere is driven as: sway without SWAYSOCK is
# known only as a wlroots compositor that lists its windows to foreign-toplevel clients.
BY_GLOBALS = {"sway": "labwc", "labwc": "labwc", "gnome": "gnome", "kde": "kde"}


def pid_listed(display: DisplayServer, pid: int) -> int | None:
    """The pid a window of process `pid` is listed with: none on labwc, whose
    wlr-foreign-toplevel says whose a window is nowhere."""
    return None if display.kind == "labwc" else pid


def _saved(path: Path, text: str) -> bool:
    return path.exists() and path.read_text(encoding="utf-8") == text + "\n"


def wait_saved(path: Path, text: str) -> None:
    """Wait for gedit to have saved `text` (it ends a file with a newline)."""
    try:
        wait_until(lambda: _saved(path, text), 20, f"gedit to save {text!r}")
    except BaseException:
        found = path.read_text(encoding="utf-8") if path.exists() else "(no file)"
        raise AssertionError(f"gedit saved {found!r}, not {text + chr(10)!r}") from None


async def test_typed_text_and_keys_reach_the_application(
    session: Desktop, display: DisplayServer, start_gedit: StartGedit, tmp_path: Path
) -> None:
    target = tmp_path / "typed.txt"
    _, window = await start_gedit(target)
    # What every layout has, a shifted symbol among it, and € (AltGr on a US map's level 3
    # for GNOME and KDE, a key of its own on sway's keymap).
    text = "Hello, Wayland! (1+1=2) €5"
    if display.kind == "sway":
        text += " é中"  # sway's keymap is ours: characters the layout lacks get keys
    await asyncio.to_thread(display.input.type_text, text)
    await asyncio.to_thread(display.input.press_keys, "ctrl+s")
    wait_saved(target, text)


async def test_a_character_the_layout_lacks_is_typed_or_refused_by_name(
    display: DisplayServer, start_gedit: StartGedit, tmp_path: Path
) -> None:
    """sway and labwc read keys with the keymap we send, which gains a key for é; GNOME and
    KDE with the session's own, US, which has neither a key nor a dead key for it: the
    whole text is refused before a key is pressed, naming the tool that sets any text."""
    target = tmp_path / "cafe.txt"
    _, window = await start_gedit(target)
    if named(display.kind).family == "wlroots":
        await asyncio.to_thread(display.input.type_text, "café")
        await asyncio.to_thread(display.input.press_keys, "ctrl+s")
        wait_saved(target, "café")
        return
    with pytest.raises(InputError, match="no key for 'é'.*set_text"):
        await asyncio.to_thread(display.input.type_text, "café")
    # Nothing of the refused text was typed: the document holds only what comes next.
    await asyncio.to_thread(display.input.type_text, "cafe")
    await asyncio.to_thread(display.input.press_keys, "ctrl+s")
    wait_saved(target, "cafe")


async def test_a_click_lands_where_the_tree_and_the_content_rectangle_place_a_control(
    session: Desktop, display: DisplayServer, start_gedit: StartGedit, tmp_path: Path
) -> None:
    """gedit's 'Open' button, read from AT-SPI relative to the window (every toolkit on
    Wayland) and moved by the backend's content rectangle, opens its file dialog."""
    target = tmp_path / "first.txt"
    target.write_text("one\n")
    process, window = await start_gedit(target)
    async with AtspiClient() as client:
        root, frame = await _window_tree(client, session, window)
    button = _find(root, "push button", "Open")
    assert button is not None and button.rect is not None
    dx, dy = _to_screen(display, window, frame)
    x, y = button.rect.center
    await asyncio.to_thread(display.input.click, x + dx, y + dy)

    def dialog() -> bool:
        return any(
            w.pid == pid_listed(display, process.pid) and w.xid != window.xid
            for w in display.windows.list_windows()
        )

    wait_until(dialog, 20, "gedit to open its file dialog after the click on 'Open'")
    await asyncio.to_thread(display.input.press_keys, "Escape")


async def test_a_drag_across_a_line_selects_it(
    session: Desktop, display: DisplayServer, start_gedit: StartGedit, tmp_path: Path
) -> None:
    """Pressed on the first letter of gedit's line and released on its last, the drag
    selects the line: the X typed next replaces it (a click alone would leave the caret at
    one end, and the X beside the text)."""
    line = "alpha beta gamma"
    target = tmp_path / "drag.txt"
    target.write_text(line + "\n")
    _, window = await start_gedit(target)
    async with AtspiClient() as client:
        root, frame = await _window_tree(client, session, window)
        text = _find(root, "text", "")
        assert text is not None and text.rect is not None
        # The tree placed the view on the screen; the application gives a character's box
        # in its own coordinates, which its view's box in the same coordinates relates.
        ref = parse_node_id(text.id)
        (raw_x, raw_y, _, _), *_ = await client.bus.call(ref, GET_EXTENTS, [0])
        dx, dy = _to_screen(display, window, frame)
        dx += text.rect.left - int(raw_x)
        dy += text.rect.top - int(raw_y)
        boxes = []
        for offset in (0, len(line) - 1):
            reply = await client.bus.call(ref, GET_CHARACTER_EXTENTS, [offset, 0])
            x, y, width, height = (int(value) for value in reply)
            boxes.append((x + dx, y + dy, width, height))
    (x0, y0, _, height), (x1, _, width, _) = boxes
    middle = y0 + height // 2
    await asyncio.to_thread(display.input.drag, (x0 + 1, middle), (x1 + width - 1, middle))
    await asyncio.to_thread(display.input.type_text, "X")
    await asyncio.to_thread(display.input.press_keys, "ctrl+s")
    wait_saved(target, "X")


async def _window_tree(
    client: AtspiClient, session: Desktop, window: WindowInfo
) -> tuple[UiNode, Rect]:
    """The window's tree of shown nodes, and its frame's rectangle."""
    await client.connect(session)
    snapshot = await client.ui_tree(window, TreeLimits(max_nodes=2000), showing_only=True)
    assert snapshot.root is not None and snapshot.root.rect is not None
    return snapshot.root, snapshot.root.rect


def _to_screen(display: DisplayServer, window: WindowInfo, frame: Rect) -> tuple[int, int]:
    """What moves a rectangle read from AT-SPI (relative to the window on Wayland) onto the
    screen: the frame as the application reports it sits centred in the content rectangle
    (GTK 3 reports its whole surface and the backend gives that where it knows it; sway
    gives the window's geometry, and the shadow GTK 3 draws around a floating one is even)."""
    content = display.windows.content(window)
    dx = content.left + (content.width - frame.width) // 2 - frame.left
    dy = content.top + (content.height - frame.height) // 2 - frame.top
    return dx, dy


def _find(node: UiNode, role: str, name: str) -> UiNode | None:
    if node.role == role and node.name == name and node.rect is not None:
        return node
    for child in node.children:
        found = _find(child, role, name)
        if found is not None:
            return found
    return None


@pytest.mark.usefixtures("screen")
async def test_screenshots_show_the_screen_and_the_window(
    session: Desktop, display: DisplayServer, start_gedit: StartGedit, tmp_path: Path
) -> None:
    target = tmp_path / "shown.txt"
    target.write_text("\n".join(f"line {n}" for n in range(40)) + "\n")
    _, window = await start_gedit(target)
    window = display.windows.get(window.xid)

    async def both() -> tuple[Image.Image, Image.Image] | None:
        whole = await asyncio.to_thread(display.screen.desktop)
        region = await asyncio.to_thread(display.screen.region, window.rect)
        # The region is what the screen shows there, once gedit has drawn its file (its
        # caret may blink in between).
        return (whole, region) if _alike(region, whole.crop(_box(window.rect))) else None

    whole, region = await wait_until_async(both, 20, "a region grab to match the screen")
    assert whole.size == (session.width, session.height)
    assert len(whole.getcolors(1 << 16) or range(1 << 16)) > 50  # a real picture, not a fill
    assert region.size == (window.rect.width, window.rect.height)
    shot, method = await asyncio.to_thread(display.screen.window, window)
    assert method in ("region", "composite") and shot.width >= window.rect.width - 2
    # Far off the screen is no picture.
    with pytest.raises(ValueError, match="outside"):
        await asyncio.to_thread(
            display.screen.region, Rect(left=5000, top=5000, right=5100, bottom=5100)
        )


def _box(rect: Rect) -> tuple[int, int, int, int]:
    return rect.left, rect.top, rect.right, rect.bottom


def _alike(first: Image.Image, second: Image.Image) -> bool:
    difference = ImageChops.difference(first.convert("RGB"), second.convert("RGB")).convert("L")
    changed = sum(count for level, count in enumerate(difference.histogram()) if level > 16)
    return changed <= 0.01 * first.width * first.height


@pytest.mark.usefixtures("screen")
async def test_scrolling_moves_the_view(
    display: DisplayServer, start_gedit: StartGedit, tmp_path: Path
) -> None:
    target = tmp_path / "long.txt"
    target.write_text("\n".join(f"line {n}" for n in range(400)) + "\n")
    _, window = await start_gedit(target)
    window = display.windows.get(window.xid)
    # The left of the text, where the line numbers and "line N" are.
    inside = Rect(
        left=window.rect.left + 5,
        top=window.rect.top + window.rect.height // 4,
        right=window.rect.left + window.rect.width // 3,
        bottom=window.rect.bottom - window.rect.height // 4,
    )
    before = await asyncio.to_thread(display.screen.region, inside)
    await asyncio.to_thread(display.input.scroll, *inside.center, 0, 10)

    async def moved() -> bool:
        after = await asyncio.to_thread(display.screen.region, inside)
        return not _alike(before, after)

    deadline = asyncio.get_running_loop().time() + 10
    while not await moved():
        assert asyncio.get_running_loop().time() < deadline, "the view did not scroll"
        await asyncio.sleep(0.1)


async def test_windows_are_listed_activated_and_closed(
    display: DisplayServer, start_gedit: StartGedit, tmp_path: Path
) -> None:
    first_process, first = await start_gedit(tmp_path / "first.txt")
    second_process, second = await start_gedit(tmp_path / "second.txt")
    listed = {window.xid: window for window in display.windows.list_windows()}
    assert first.xid in listed and second.xid in listed
    assert listed[first.xid].pid == pid_listed(display, first_process.pid)
    assert "gedit" in listed[first.xid].application.lower()
    for window in (first, second, first):
        active = await display.windows.activate(window.xid, timeout=10)
        assert active.xid == window.xid and active.active
        assert display.windows.active_window() == display.windows.get(window.xid)
    content = display.windows.content(display.windows.get(first.xid))
    assert content.width > 100 and content.height > 100
    assert await display.windows.close_window(second.xid, timeout=10)
    assert second.xid not in {window.xid for window in display.windows.list_windows()}
    wait_until(lambda: second_process.poll() is not None, 10, "the closed gedit to exit")


async def test_input_off_the_screen_is_refused(display: DisplayServer) -> None:
    with pytest.raises(InputError, match="outside"):
        await asyncio.to_thread(display.input.click, -5, 10)
    with pytest.raises(InputError, match="outside"):
        await asyncio.to_thread(display.input.move, 10, 100_000)


def test_the_backend_is_known_by_what_the_compositor_offers(session: Desktop) -> None:
    env = {key: value for key, value in session.env.items() if key != "XDG_CURRENT_DESKTOP"}
    env.pop("SWAYSOCK", None)
    assert detect(env).kind == BY_GLOBALS[session.kind]
    assert detect(session.env).kind == session.kind  # as it names itself


def test_another_familys_routes_are_refused_with_the_reason(session: Desktop) -> None:
    """Each route asks the compositor for what it needs and says what is missing, at once:
    never a silent "ok"."""
    kind = session.backend.family
    if kind != "wlroots":
        with pytest.raises(WaylandError, match="no zwlr_virtual_pointer_manager_v1"):
            WlrootsInput(session.env)
        with pytest.raises(WaylandError, match="no zwlr_foreign_toplevel_manager_v1"):
            ForeignToplevels(session.env)
    if kind != "kde":
        with pytest.raises(DisplayUnavailable, match="X-KDE-Wayland-Interfaces"):
            FakeInput(session.env)
    if kind != "gnome":
        with pytest.raises((DisplayUnavailable, RuntimeError), match="(?i)gnome|mutter|shell"):
            open_gnome(session.env)
