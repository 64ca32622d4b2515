"""The AT-SPI control tree of real applications on a real (virtual) desktop: gedit (GTK 3)
and the Qt 6 test app. The bulk reader is checked against the naive one-call-per-property
walk: both must see exactly the same tree and the same controls."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest
from tests.desktop.conftest import (
    StartApp,
    gedit_argv,
    qt_app_argv,
    wait_for_window,
    wait_until_async,
)
from tests.helpers import whole_text

from roundhouse.bench.naive import naive_tree
from roundhouse.cli.desktop import TREE_TEXT_LIMIT, render_tree
from roundhouse.devices.contract import (
    Control,
    ControlList,
    Rect,
    UiNode,
    UiSnapshot,
    WindowInfo,
)
from roundhouse.devices.linux.atspi.client import (
    AtspiClient,
    AtspiError,
    AtspiTimeout,
    NodeGone,
    TreeLimits,
    WindowGone,
    ui_tree_json,
)
from roundhouse.devices.linux.atspi.layout import intersection, reading_order
from roundhouse.devices.linux.atspi.node import RawNode
from roundhouse.devices.linux.atspi.read import read_structure
from roundhouse.devices.linux.atspi.tree import build_tree, select_controls, walk
from roundhouse.devices.linux.desktops.desktop import Desktop


@pytest.fixture
async def client(desktop: Desktop) -> AsyncIterator[AtspiClient]:
    async with AtspiClient() as connected:
        await connected.connect(desktop)
        yield connected


async def _controls_when(
    client: AtspiClient, window: WindowInfo, role: str, name: str | None = None
) -> ControlList:
    """The window's controls once one of `role` (and `name`) is among them."""

    async def ready() -> ControlList | None:
        listed = await client.controls(window)
        return listed if _find(listed, role, name) is not None else None

    return await wait_until_async(ready, what=f"a {role} control named {name!r}")


def _find(listed: ControlList, role: str, name: str | None = None) -> Control | None:
    for control in listed.controls:
        if control.role == role and (name is None or control.name == name):
            return control
    return None


async def _gedit(desktop: Desktop, launch: StartApp) -> WindowInfo:
    process = launch(desktop, gedit_argv())
    return wait_for_window(desktop, pid=process.pid)


async def _qt(desktop: Desktop, launch: StartApp) -> tuple[subprocess.Popen[bytes], WindowInfo]:
    process = launch(desktop, qt_app_argv())
    return process, wait_for_window(desktop, pid=process.pid)


async def test_gedit_controls_are_the_visible_interactive_ones(
    desktop: Desktop, launch: StartApp, client: AtspiClient
) -> None:
    window = await _gedit(desktop, launch)
    listed = await _controls_when(client, window, "text")
    assert listed.tree_available and not listed.truncated
    assert [control.label for control in listed.controls] == list(
        range(1, len(listed.controls) + 1)
    )
    assert _find(listed, "push button", "Save") is not None
    text_area = _find(listed, "text")
    assert text_area is not None and text_area.rect.width > 300
    for control in listed.controls:
        assert control.rect.width > 0 and control.rect.height > 0
        assert control.role not in ("split pane", "scroll pane", "panel", "label")
    # Reading order: the header bar's buttons come before the text area below them.
    save = _find(listed, "push button", "Save")
    assert save is not None and save.label < text_area.label


@dataclass
class Compared:
    nodes: int  # what both read (ours also reads managed containers where in view)
    read: int  # nodes our read holds
    calls: int  # round trips of our controls read
    naive_calls: int  # round trips of the naive walk


async def _assert_same_as_naive(client: AtspiClient, window: WindowInfo) -> Compared:
    """Our tree and controls equal the naive walk's, read while the app held still: a live
    app may change a state (focus, activation) between two reads, so the naive walk runs
    before and after ours and only a stable pair is compared."""
    frame = await client.find_frame(window)
    assert frame is not None
    ref = frame.node.ref
    for _attempt in range(5):
        start = client.bus.calls
        before = await naive_tree(client.bus, ref, details_when_hidden=True)
        naive_calls = client.bus.calls - start
        snapshot = await client.ui_tree(window)
        start = client.bus.calls
        listed = await client.controls(window)
        calls = client.bus.calls - start
        after = await naive_tree(client.bus, ref, details_when_hidden=True)
        if before != after or before is None or before.rect is None:
            continue
        # (the naive walk keeps details of showing nodes only, as ours reads them)
        assert snapshot.root is not None
        assert snapshot.node_count == sum(1 for _ in walk(snapshot.root))
        # The naive walk reads nothing of a managed container; ours reads its part in view.
        in_view = _in_view_only(snapshot.root)
        assert _without(snapshot.root, in_view) == before
        area = intersection(client.screen, before.rect)
        ours = [control for control in listed.controls if control.id not in in_view]
        assert _unnumbered(ours) == _named_as_ours(select_controls(before, area), ours)
        nodes = sum(1 for _ in walk(before))
        return Compared(nodes, snapshot.node_count, calls, naive_calls)
    pytest.fail("the application never held still for two reads")


def _in_view_only(root: UiNode) -> set[str]:
    """Ids of the nodes read under managed containers (only where in view)."""
    return {
        node.id
        for container in walk(root)
        if "manages-descendants" in container.states
        for child in container.children
        for node in walk(child)
    }


def _without(node: UiNode, ids: set[str]) -> UiNode:
    children = [_without(child, ids) for child in node.children if child.id not in ids]
    return node.model_copy(update={"children": children})


def _unnumbered(controls: list[Control]) -> list[Control]:
    return [control.model_copy(update={"label": 0}) for control in controls]


def _named_as_ours(naive: list[Control], ours: list[Control]) -> list[Control]:
    """The naive walk's controls, unnumbered, with what only our reader reads filled in
    from ours: the name of a control that has none of its own (labelled-by) and the shown
    item of a combo box with no text (its selected child). tests/desktop/test_browser.py
    checks those on Chromium, where they matter."""
    by_id = {control.id: control for control in ours}
    filled = []
    for control in _unnumbered(naive):
        mine = by_id.get(control.id)
        if mine is not None and not control.name:
            control = control.model_copy(update={"name": mine.name})
        if mine is not None and control.role == "combo box" and not control.text:
            control = control.model_copy(update={"text": mine.text})
        filled.append(control)
    return filled


async def test_gedit_bulk_read_equals_the_naive_walk(
    desktop: Desktop, launch: StartApp, client: AtspiClient
) -> None:
    window = await _gedit(desktop, launch)
    await _controls_when(client, window, "text")
    frame = await client.find_frame(window)
    # Through GetItems, most of gedit comes in one call; its list views are walked.
    assert frame is not None and len(frame.cache) > 50
    compared = await _assert_same_as_naive(client, window)
    assert compared.nodes > 200
    # A handful of round trips per window, never one per property per node.
    assert compared.calls * 20 < compared.naive_calls


async def test_gedit_set_text_then_get_text(
    desktop: Desktop, launch: StartApp, client: AtspiClient
) -> None:
    window = await _gedit(desktop, launch)
    listed = await _controls_when(client, window, "text")
    text_area = _find(listed, "text")
    assert text_area is not None
    words = "Grüße, 世界 — line one\nline two ✓"
    assert await client.set_text(text_area.id, words)
    assert await whole_text(client, text_area.id) == words
    assert await client.grab_focus(text_area.id)

    async def focused() -> Control | None:
        # GrabFocus answers before gedit says the text is focused (under load, a read at
        # once still saw it unfocused, its window not yet active again).
        found = _find(await client.controls(window), "text")
        return found if found is not None and "focused" in found.states else None

    again = await wait_until_async(focused, what="the text area to say it is focused")
    assert again == text_area.model_copy(update={"text": words, "states": again.states})


async def test_qt_controls_and_pressing_the_button(
    desktop: Desktop, launch: StartApp, client: AtspiClient
) -> None:
    _, window = await _qt(desktop, launch)
    listed = await _controls_when(client, window, "push button", "Press me")
    names = {(control.role, control.name) for control in listed.controls}
    assert {("text", "Your name"), ("check box", "Remember me")} <= names
    rows = [control for control in listed.controls if control.role == "list item"]
    # 40 rows, all "showing" to Qt, but only those inside the list's view are visible.
    assert rows and len(rows) < 15
    assert ("list item", "Row 40") not in names
    button = _find(listed, "push button", "Press me")
    assert button is not None and "Press" in button.actions

    assert await client.do_action(button.id, "press")

    async def label_changed() -> bool:
        snapshot = await client.ui_tree(window)
        assert snapshot.root is not None
        return any(node.name == "Pressed 1 times" for node in walk(snapshot.root))

    await wait_until_async(label_changed, timeout=10, what="the label to say 'Pressed 1 times'")


async def test_qt_bulk_read_equals_the_naive_walk(
    desktop: Desktop, launch: StartApp, client: AtspiClient
) -> None:
    _, window = await _qt(desktop, launch)
    await _controls_when(client, window, "push button", "Press me")
    frame = await client.find_frame(window)
    assert frame is not None
    assert frame.cache == {}  # Qt keeps no cache: the whole tree is walked
    compared = await _assert_same_as_naive(client, window)
    # Qt's lists manage their descendants: the naive walk reads none of their rows, ours the
    # rows in view, at no more round trips a node (without a cache, the gain is latency).
    assert compared.nodes > 5 and compared.read > compared.nodes + 5
    assert compared.calls / compared.read <= compared.naive_calls / compared.nodes


async def test_set_text_and_actions_on_a_qt_line_edit(
    desktop: Desktop, launch: StartApp, client: AtspiClient
) -> None:
    _, window = await _qt(desktop, launch)
    listed = await _controls_when(client, window, "text", "Your name")
    edit = _find(listed, "text", "Your name")
    assert edit is not None
    assert await client.set_text(edit.id, "Zoë")
    assert await whole_text(client, edit.id) == "Zoë"
    with pytest.raises(AtspiError, match="no action 'explode'"):
        await client.do_action(edit.id, "explode")
    described = await client.describe(edit.id, window)
    assert described.role == "text" and described.text == "Zoë" and described.rect == edit.rect


async def test_limits_cut_the_tree_deterministically(
    desktop: Desktop, launch: StartApp, client: AtspiClient
) -> None:
    window = await _gedit(desktop, launch)
    await _controls_when(client, window, "text")
    small = await client.ui_tree(window, TreeLimits(max_nodes=7))
    assert small.truncated and small.truncated_reason == "node limit"
    assert small.node_count == 7
    assert small.root is not None and sum(1 for _ in walk(small.root)) == 7
    again = await client.ui_tree(window, TreeLimits(max_nodes=7))
    assert again.root == small.root
    shallow = await client.ui_tree(window, TreeLimits(max_depth=1))
    assert shallow.truncated_reason == "depth"
    assert shallow.root is not None
    assert all(not child.children for child in shallow.root.children)
    hurried = await client.ui_tree(window, TreeLimits(time_limit=0))
    assert hurried.truncated and hurried.truncated_reason == "time limit"
    assert hurried.root is not None and hurried.node_count == 1
    hurried_controls = await client.controls(window, TreeLimits(time_limit=0))
    assert hurried_controls.truncated_reason == "time limit"
    data = ui_tree_json(small)
    root = data["root"]
    assert {"control_type", "name", "automation_id", "bounding_box", "children"} <= set(root)
    assert root["control_type"] == "frame" and data["truncated_reason"] == "node limit"


async def test_an_app_without_a_tree_says_so(
    desktop: Desktop, launch: StartApp, client: AtspiClient
) -> None:
    # xmessage (Athena widgets) never registers with AT-SPI, like Tk.
    launch(desktop, ["xmessage", "-title", "No tree here", "no accessibility here"])
    window = wait_for_window(desktop, title="No tree here")
    client.register_grace = 0.5
    listed = await client.controls(window)
    assert not listed.tree_available and listed.controls == []
    assert listed.note is not None and "use screenshots and coordinates" in listed.note
    snapshot = await client.ui_tree(window)
    assert not snapshot.tree_available and snapshot.root is None


async def test_unknown_windows_and_ids_are_clear_errors(
    desktop: Desktop, launch: StartApp, client: AtspiClient
) -> None:
    ghost = WindowInfo(
        xid=1,
        title="No such window",
        application="ghost",
        pid=_dead_pid(),
        rect=Rect(left=0, top=0, right=10, bottom=10),
        active=False,
    )
    with pytest.raises(WindowGone, match="has exited"):
        await client.controls(ghost)
    _, window = await _qt(desktop, launch)
    listed = await _controls_when(client, window, "push button", "Press me")
    button = _find(listed, "push button", "Press me")
    assert button is not None
    app = button.id.split(":/")[0]
    with pytest.raises(NodeGone):
        await client.do_action(f"{app}:/org/a11y/atspi/accessible/999999999")
    with pytest.raises(NodeGone, match="not a control id"):
        await whole_text(client, "button-7")
    # Another window of the same process that AT-SPI does not know of: the error names
    # the windows the application does show.
    renamed = window.model_copy(
        update={
            "xid": window.xid + 1,
            "title": "Another title",
            "rect": Rect(left=0, top=0, right=1, bottom=1),
        }
    )
    with pytest.raises(WindowGone, match="Roundhouse Qt test"):
        await client.controls(renamed)


async def test_a_killed_app_is_an_error_not_a_hang(
    desktop: Desktop, launch: StartApp, client: AtspiClient
) -> None:
    process, window = await _qt(desktop, launch)
    listed = await _controls_when(client, window, "push button", "Press me")
    button = _find(listed, "push button", "Press me")
    assert button is not None
    process.kill()
    process.wait()
    with pytest.raises(WindowGone):
        await client.do_action(button.id)
    with pytest.raises(WindowGone):
        await client.controls(window)


async def test_a_stopped_app_times_out(
    desktop: Desktop, launch: StartApp, client: AtspiClient
) -> None:
    process, window = await _qt(desktop, launch)
    listed = await _controls_when(client, window, "push button", "Press me")
    button = _find(listed, "push button", "Press me")
    assert button is not None
    client.bus.timeout = 0.5  # only now: a loaded machine may stall a live app that long
    os.kill(process.pid, signal.SIGSTOP)
    try:
        with pytest.raises(AtspiTimeout, match="did not answer"):
            await client.do_action(button.id)
        with pytest.raises(AtspiTimeout):
            await client.controls(window)
    finally:
        os.kill(process.pid, signal.SIGCONT)


def _dead_pid() -> int:
    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid


async def test_an_open_gedit_menu_lists_its_items(
    desktop: Desktop, launch: StartApp, client: AtspiClient
) -> None:
    window = await _gedit(desktop, launch)
    listed = await _controls_when(client, window, "text")
    assert _find(listed, "push button", "Save As…") is None
    menus = [c for c in listed.controls if c.role == "toggle button" and c.name == "Menu"]
    assert menus
    assert await client.do_action(menus[-1].id)  # the window menu, at the right
    opened = await _controls_when(client, window, "push button", "Save As…")
    save_as = _find(opened, "push button", "Save As…")
    find = _find(opened, "push button", "Find…")
    text_area = _find(opened, "text")
    assert save_as is not None and find is not None and text_area is not None
    # Reading order: the menu's items top to bottom, after the tall text area they cover.
    assert text_area.label < save_as.label < find.label


def _node(name: str, left: int, top: int, right: int, bottom: int) -> UiNode:
    rect = Rect(left=left, top=top, right=right, bottom=bottom)
    return UiNode(id=name, role="push button", name=name, rect=rect)


def test_reading_order_is_rows_then_columns() -> None:
    nodes = [
        _node("text area", 0, 60, 800, 700),
        _node("close", 760, 14, 790, 44),
        _node("open", 10, 5, 70, 50),
        _node("item 2", 600, 140, 780, 170),
        _node("item 1", 600, 100, 780, 130),
        _node("check", 700, 100, 780, 130),
    ]
    ordered = [node.name for node in reading_order(nodes)]
    assert ordered == ["open", "close", "text area", "item 1", "check", "item 2"]


def test_unnamed_controls_take_their_shown_text_or_description() -> None:
    shown = ["showing", "visible", "enabled"]

    def node(role: str, name: str = "", states: list[str] = shown, **extra: object) -> UiNode:
        rect = Rect(left=10, top=10, right=200, bottom=40)
        return UiNode(id=f"{role}-{name}", role=role, name=name, states=states, rect=rect, **extra)

    row = node(
        "list item",
        children=[
            node(
                "panel",
                children=[
                    node("label", "New bookmark", states=["visible"]),  # hidden: not its name
                    node("icon", "Add"),
                    node("filler", children=[node("label", "Other Locations")]),
                ],
            )
        ],
    )
    button = node("push button", description="Save the file")
    root = node("frame", "Window", children=[row, button])
    area = Rect(left=0, top=0, right=800, bottom=600)
    names = [control.name for control in select_controls(root, area)]
    assert names == ["Other Locations", "Save the file"]


def test_the_printed_tree_shows_a_long_text_cut_visibly_on_one_line() -> None:
    """`roundhouse tree` once cut a sheet's summary at 40 characters without a sign: it read
    'of 1048576 × 163' for 16,384 columns."""
    summary = "rows 1-31, columns 1-15 of 1048576 × 16384 in view; empty cells are not listed"
    long_text = "word " * 40 + "\nlast line"
    table = UiNode(id="t", role="table", name="Sheet1", text=summary)
    paragraph = UiNode(id="p", role="paragraph", text=long_text)
    root = UiNode(id="f", role="frame", name="Calc", children=[table, paragraph])
    printed = render_tree(UiSnapshot(window=None, root=root, node_count=3)).splitlines()
    assert printed[2] == f"  table 'Sheet1' text={summary!r}"
    shown = printed[3].split("text=", 1)[1]
    assert shown.endswith("…'") and len(shown) == TREE_TEXT_LIMIT + 2 and "\\n" not in shown
    assert printed[4] == "3 nodes in 0 ms"


async def test_a_cycle_or_a_shared_child_in_a_broken_tree_is_read_once() -> None:
    def raw(name: str, *children: str) -> RawNode:
        return RawNode(
            ref=("app", f"/{name}"),
            role="panel",
            name=name,
            description="",
            states=["showing"],
            interfaces=frozenset(),
            child_count=len(children),
            children=[("app", f"/{child}") for child in children],
        )

    # root -> a -> (root again, b); root -> b: every node comes from the cache, no calls.
    nodes = {node.ref: node for node in (raw("root", "a", "b"), raw("a", "root", "b"), raw("b"))}
    root = nodes[("app", "/root")]
    structure = await read_structure(
        None,  # type: ignore[arg-type]  # nothing is fetched: the cache holds every node
        root,
        nodes,
        TreeLimits(),
        lambda node: True,
        time.monotonic() + 5,
    )
    tree = build_tree(structure.nodes, root.ref)
    assert [node.name for node in walk(tree)] == ["root", "a", "b"]
    assert [child.name for child in tree.children] == ["a", "b"]
    assert tree.children[0].children == []


async def test_a_long_list_is_read_only_where_it_is_in_view(
    desktop: Desktop, launch: StartApp, client: AtspiClient
) -> None:
    process = launch(desktop, [*qt_app_argv(), "--rows", "5000", "--scroll-to", "2500"])
    window = wait_for_window(desktop, pid=process.pid)
    listed = await _controls_when(client, window, "list item", "Row 2500")
    rows = [control.name for control in listed.controls if control.role == "list item"]
    assert "Row 2501" in rows and "Row 1" not in rows and "Row 5000" not in rows
    assert not listed.truncated
    start = client.bus.calls
    again = await client.controls(window)
    # Bisection over the rows' extents, not one read per row.
    assert client.bus.calls - start < 500
    assert again.controls == listed.controls
    # The list manages its descendants: even the whole tree holds only its rows in view.
    whole = await client.ui_tree(window)
    assert not whole.truncated and whole.root is not None and whole.node_count < 40
    names = {node.name for node in walk(whole.root)}
    assert "Row 2501" in names and "Row 1" not in names
    cut = await client.ui_tree(window, TreeLimits(max_nodes=12))
    assert cut.truncated and cut.truncated_reason == "node limit" and cut.node_count == 12


async def test_a_dropped_connection_is_made_again(
    desktop: Desktop, launch: StartApp, client: AtspiClient
) -> None:
    _, window = await _qt(desktop, launch)
    listed = await _controls_when(client, window, "push button", "Press me")
    client.bus.bus.disconnect()  # as dbus-fast does when its socket write fails
    again = await client.controls(window)
    assert again.controls == listed.controls
    assert client.bus.connected
