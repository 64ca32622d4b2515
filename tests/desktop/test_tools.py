"""The device tools through the registry, as the engine calls them, on real applications."""

from __future__ import annotations

import base64
import io
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from PIL import Image, ImageChops
from tests.desktop.conftest import QT_APP_TITLE, gedit_argv, qt_app_argv, wait_until_async
from tests.helpers import whole_text

from roundhouse.core.commands import Command, Result
from roundhouse.devices.base import ToolRegistry
from roundhouse.devices.contract import ControlList, UiNode
from roundhouse.devices.linux.atspi.client import AtspiClient
from roundhouse.devices.linux.atspi.tree import walk
from roundhouse.devices.linux.desktops.desktop import Desktop
from roundhouse.devices.linux.tools import DesktopTools, desktop_registry

DESIGN_TOOLS = {
    "data_collection": {
        "capture_desktop_screenshot",
        "capture_window_screenshot",
        "get_ui_tree",
        "list_windows",
        "get_controls",
        "list_applications",
        "pointer_position",
    },
    "action": {
        "select_window",
        "launch_application",
        "click_control",
        "click_coordinates",
        "set_text",
        "type_text",
        "press_keys",
        "close_window",
        "scroll",
        "drag",
        "wait",
        "move_pointer",
        "click_pointer",
        "mouse_down",
        "mouse_up",
        "hold_keys",
    },
}


async def call(registry: ToolRegistry, tool: str, /, **parameters: Any) -> Result:
    return await registry.call(Command(tool_name=tool, parameters=parameters), 60.0)


async def ok(registry: ToolRegistry, tool: str, /, **parameters: Any) -> Any:
    result = await call(registry, tool, **parameters)
    assert result.ok, result.error
    return result.result


async def start_qt(registry: ToolRegistry) -> dict[str, Any]:
    command = " ".join(qt_app_argv())
    window: dict[str, Any] = await ok(registry, "launch_application", name=command)
    assert window["title"] == QT_APP_TITLE
    assert window["started"] == command and window["failed"] == []
    return window


def control(controls: dict[str, Any], name: str) -> dict[str, Any]:
    return next(c for c in controls["controls"] if c["name"] == name)


async def status_text(tools: DesktopTools, window_id: int) -> str:
    assert tools.tree is not None
    snapshot = await tools.tree.ui_tree(tools.windows.get(window_id))
    assert snapshot.root is not None
    # The Qt label's accessible name is its text: "Not pressed yet", then "Pressed N times".
    labels = [n.name for n in walk(snapshot.root) if n.role == "label" and "ressed" in n.name]
    return labels[0] if labels else ""


def test_every_design_tool_is_registered_with_its_type(tools: DesktopTools) -> None:
    registry = desktop_registry(tools)
    found: dict[str, set[str]] = {"data_collection": set(), "action": set()}
    for spec in registry.specs():
        found[spec.tool_type].add(spec.name)
        assert spec.description and spec.parameters["type"] == "object"
    assert found == DESIGN_TOOLS  # run_shell and get_system_info are the engine's


async def test_list_applications_says_what_each_is_for(tools: DesktopTools) -> None:
    listed = await ok(desktop_registry(tools), "list_applications")
    # Debian's gedit entry has no GenericName: its category says what it is for. GNOME
    # Text Editor is named for what it is. Either may be the machine's (scripts/with-apps.sh).
    assert {"gedit — Text Editor", "Text Editor"} & set(listed)
    assert "Vim — Text Editor (runs in a terminal)" in listed
    assert listed == sorted(listed, key=str.casefold)


async def test_click_control_presses_a_real_qt_button(tools: DesktopTools) -> None:
    registry = desktop_registry(tools)
    window = await start_qt(registry)
    controls = await ok(registry, "get_controls", window_id=window["xid"])
    assert [c["label"] for c in controls["controls"]] == list(
        range(1, len(controls["controls"]) + 1)
    )
    button = control(controls, "Press me")
    assert await status_text(tools, window["xid"]) == "Not pressed yet"

    # Qt's press action holds the button down 100 ms: a button in view of the active
    # window is clicked by the pointer instead (pointing.py), and its effect is seen.
    clicked = await ok(registry, "click_control", label=button["label"])
    assert clicked["route"] == "pointer" and clicked["effect"] == "confirmed"

    async def pressed() -> str | None:
        text = await status_text(tools, window["xid"])
        return text if text.startswith("Pressed") else None

    assert await wait_until_async(pressed, what="the button's effect") == ("Pressed 1 times")
    # A double click has no accessibility action: it goes to the centre through XTest.
    clicked = await ok(registry, "click_control", label=button["label"], double=True)
    assert clicked["route"] == "pointer"

    async def pressed_three_times() -> bool:
        return await status_text(tools, window["xid"]) == "Pressed 3 times"

    await wait_until_async(pressed_three_times, what="two more presses")


async def test_a_button_of_a_window_not_active_is_pressed_by_its_action(
    tools: DesktopTools,
) -> None:
    """The pointer may land on another window over it: the button's action is taken, and
    its effect is seen."""
    registry = desktop_registry(tools)
    first = await start_qt(registry)
    button = control(await ok(registry, "get_controls", window_id=first["xid"]), "Press me")
    second = await start_qt(registry)  # active now, and placed by the window manager
    assert second["xid"] != first["xid"]
    clicked = await ok(registry, "click_control", label=button["label"], window_id=first["xid"])
    assert clicked["route"] == "action:press" and clicked["effect"] == "confirmed"
    assert await status_text(tools, first["xid"]) == "Pressed 1 times"
    assert await status_text(tools, second["xid"]) == "Not pressed yet"


async def test_click_coordinates_toggles_a_check_box(tools: DesktopTools) -> None:
    registry = desktop_registry(tools)
    window = await start_qt(registry)
    box = control(await ok(registry, "get_controls", window_id=window["xid"]), "Remember me")
    left, top, right, bottom = (box["rect"][k] for k in ("left", "top", "right", "bottom"))
    await ok(registry, "click_coordinates", x=left + 8, y=(top + bottom) // 2)
    assert right > left

    async def checked() -> bool:
        assert tools.tree is not None
        snapshot = await tools.tree.ui_tree(tools.windows.get(window["xid"]))
        assert snapshot.root is not None
        nodes = [n for n in walk(snapshot.root) if n.name == "Remember me"]
        return bool(nodes) and "checked" in nodes[0].states

    await wait_until_async(checked, what="the check box to be checked")


async def test_set_text_and_type_text_reach_the_control(tools: DesktopTools) -> None:
    registry = desktop_registry(tools)
    await start_qt(registry)
    field = control(await ok(registry, "get_controls"), "Your name")
    assert isinstance(tools.tree, AtspiClient)

    done = await ok(registry, "set_text", label=field["label"], text="Zoë €")
    assert await whole_text(tools.tree, field["id"]) == "Zoë €"
    # The result says so, as read back from the control.
    assert done["effect"] == "confirmed"
    assert done["seen"].startswith("'Your name' (text) now holds 'Zoë €' (contains the typed")

    done = await ok(registry, "type_text", control_id=field["id"], text=" naïve")
    assert done["effect"] == "confirmed" and "now holds 'Zoë € naïve'" in done["seen"]
    await ok(registry, "press_keys", keys="End")
    await ok(registry, "type_text", text="!")
    assert await whole_text(tools.tree, field["id"]) == "Zoë € naïve!"


async def test_a_click_names_what_it_changed(tools: DesktopTools) -> None:
    registry = desktop_registry(tools)
    await start_qt(registry)
    controls = await ok(registry, "get_controls")

    pressed = await ok(registry, "click_control", label=control(controls, "Press me")["label"])
    assert pressed["effect"] == "confirmed"
    assert "'Not pressed yet' (label) now reads 'Pressed 1 times'" in pressed["seen"]

    checked = await ok(registry, "click_control", label=control(controls, "Remember me")["label"])
    assert checked["effect"] == "confirmed"
    assert checked["seen"].startswith("'Remember me' (check box) is now checked")


async def test_a_key_that_does_nothing_has_no_visible_effect(tools: DesktopTools) -> None:
    registry = desktop_registry(tools)
    await start_qt(registry)
    done = await ok(registry, "press_keys", keys="F13")  # bound to nothing in the Qt app
    assert done["effect"] == "not seen" and done["seen"] == "no visible effect"


async def test_a_click_that_opens_a_dialog_names_it(tools: DesktopTools) -> None:
    if shutil.which("gedit") is None:
        pytest.skip("gedit is installed by `make system-deps`")
    registry = desktop_registry(tools)
    await ok(registry, "launch_application", name=" ".join(gedit_argv()))
    before = {w["xid"] for w in await ok(registry, "list_windows")}
    open_button = control(await ok(registry, "get_controls"), "Open")

    done = await ok(registry, "click_control", label=open_button["label"])
    [dialog] = [w for w in await ok(registry, "list_windows") if w["xid"] not in before]
    assert done["effect"] == "confirmed"
    assert done["seen"].startswith(f"new window {dialog['title']!r} opened (active)")

    closed = await ok(registry, "press_keys", keys="Escape")
    assert f"window {dialog['title']!r} closed" in closed["seen"]
    save_as = await ok(registry, "press_keys", keys="ctrl+shift+s")
    [dialog] = [w for w in await ok(registry, "list_windows") if w["xid"] not in before]
    assert save_as["seen"].startswith(f"new window {dialog['title']!r} opened (active)")


async def test_unknown_window_and_control_name_what_exists(tools: DesktopTools) -> None:
    registry = desktop_registry(tools)
    window = await start_qt(registry)

    result = await call(registry, "get_controls", window_id=4242)
    assert not result.ok and result.error is not None
    assert "no window with id 4242" in result.error and QT_APP_TITLE in result.error

    result = await call(registry, "click_control", label=99, window_id=window["xid"])
    assert not result.ok and result.error is not None
    assert "no control with label 99" in result.error
    assert "'Press me' (push button)" in result.error and "'Your name'" in result.error

    result = await call(registry, "set_text", control_id="not-a-node", text="x")
    assert not result.ok and result.error is not None
    assert "no control with id 'not-a-node'" in result.error and "'Press me'" in result.error

    result = await call(registry, "select_window", title="No such window")
    assert not result.ok and result.error is not None and QT_APP_TITLE in result.error

    result = await call(registry, "click_coordinates", x=5000, y=10)
    assert not result.ok and result.error is not None and "outside" in result.error


async def test_window_screenshots_to_a_file_inline_and_annotated(
    tools: DesktopTools, tmp_path: Path
) -> None:
    registry = desktop_registry(tools)
    window = await start_qt(registry)
    width = window["rect"]["right"] - window["rect"]["left"]
    height = window["rect"]["bottom"] - window["rect"]["top"]

    plain = await ok(registry, "capture_window_screenshot", path=str(tmp_path / "plain.png"))
    marked = await ok(
        registry, "capture_window_screenshot", path=str(tmp_path / "marked.png"), annotate=True
    )
    inline = await ok(registry, "capture_window_screenshot")
    controls = await ok(registry, "get_controls")

    plain_image, marked_image = _load(plain["path"]), _load(marked["path"])
    inline_image = _load(io.BytesIO(base64.b64decode(inline["png_base64"])))
    assert plain_image.size == marked_image.size == inline_image.size == (width, height)
    assert marked["annotated_controls"] == len(controls["controls"]) >= 3
    assert ImageChops.difference(plain_image, marked_image).getbbox() is not None

    desktop_shot = await ok(registry, "capture_desktop_screenshot", path=str(tmp_path / "d.png"))
    assert _load(desktop_shot["path"]).size == tools.screen.size


async def test_an_annotated_screenshot_as_listed_numbers_what_the_model_was_given(
    tools: DesktopTools, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A window that renumbers between two reads (Writer filling its toolbar) must not get
    boxes numbered otherwise than the list the model reads: as_listed draws that list."""
    registry = desktop_registry(tools)
    await start_qt(registry)
    given = await ok(registry, "get_controls")
    assert tools.tree is not None
    reads = 0
    real_controls = tools.tree.controls

    async def counted(*args: Any, **kwargs: Any) -> ControlList:
        nonlocal reads
        reads += 1
        return await real_controls(*args, **kwargs)

    monkeypatch.setattr(tools.tree, "controls", counted)
    marked = await ok(registry, "capture_window_screenshot", annotate=True, as_listed=True)
    assert reads == 0 and marked["annotated_controls"] == len(given["controls"])
    await ok(registry, "capture_window_screenshot", annotate=True)
    assert reads == 1  # without as_listed: read afresh


def _load(source: str | io.BytesIO) -> Image.Image:
    with Image.open(source) as image:
        assert image.format == "PNG"
        return image.convert("RGB")


async def test_ui_tree_has_the_seed_shape(tools: DesktopTools) -> None:
    registry = desktop_registry(tools)
    await start_qt(registry)
    tree = await ok(registry, "get_ui_tree")
    root = tree["root"]
    assert {"control_type", "name", "automation_id", "bounding_box", "children"} <= set(root)
    names = [n.name for n in walk(UiNode.model_validate(_as_node(root)))]
    assert "Press me" in names and "Remember me" in names


def _as_node(data: dict[str, Any]) -> dict[str, Any]:
    rect = data["bounding_box"]
    return {
        "id": data["id"],
        "role": data["role"],
        "name": data["name"],
        "rect": dict(zip(("left", "top", "right", "bottom"), rect, strict=True)) if rect else None,
        "children": [_as_node(child) for child in data["children"]],
    }


async def test_windows_select_and_wait(tools: DesktopTools, desktop: Desktop) -> None:
    registry = desktop_registry(tools)
    first = await start_qt(registry)
    second = await start_qt(registry)
    listed = {w["xid"]: w for w in await ok(registry, "list_windows")}
    assert {first["xid"], second["xid"]} <= set(listed)
    assert listed[second["xid"]]["active"]

    selected = await ok(registry, "select_window", window_id=first["xid"])
    assert selected["active"] and selected["xid"] == first["xid"]
    # settle_ms is the settle after the wait, which ends as soon as the screen is still:
    # that the wait waited is told by the clock (a sleep never ends early).
    started = time.monotonic()
    waited = await ok(registry, "wait", seconds=0.1)
    assert time.monotonic() - started >= 0.1 and waited["settle_ms"] >= 0
    assert not (await call(registry, "wait", seconds=600)).ok


async def test_close_window_closes_the_window_it_names(tools: DesktopTools) -> None:
    """Asked of the window manager (_NET_CLOSE_WINDOW), not with a key a compositor may not
    bind: the named window goes, the other stays."""
    registry = desktop_registry(tools)
    first = await start_qt(registry)
    second = await start_qt(registry)
    closed = await ok(registry, "close_window", window_id=first["xid"])
    assert closed["route"] == "window-manager" and closed["window"] == first["title"]
    listed = [w["xid"] for w in await ok(registry, "list_windows")]
    assert first["xid"] not in listed and second["xid"] in listed


async def test_alt_f4_closes_the_active_window(tools: DesktopTools) -> None:
    registry = desktop_registry(tools)
    window = await start_qt(registry)
    await ok(registry, "press_keys", keys="alt+F4")  # openbox's binding: close the window

    async def closed() -> bool:
        listed = await ok(registry, "list_windows")
        return window["xid"] not in [w["xid"] for w in listed]

    await wait_until_async(closed, what="the window to close")
