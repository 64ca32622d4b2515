"""How GTK 4's accessible objects are read (without a desktop; tests/desktop/test_gtk4.py
reads the real applications): GTK 4.8 marks only its windows "showing", so a visible object
shows when it has a size; its names are class names or said twice; it is asked in window
coordinates."""

from __future__ import annotations

import time

import pytest

from roundhouse.devices.contract import Rect, WindowInfo
from roundhouse.devices.linux.atspi.constants import ACCESSIBLE, ACTION, COMPONENT
from roundhouse.devices.linux.atspi.fetch import load_cache
from roundhouse.devices.linux.atspi.frames import Toolkit, match_score
from roundhouse.devices.linux.atspi.names import gtk4_name
from roundhouse.devices.linux.atspi.node import RawNode, TreeLimits
from roundhouse.devices.linux.atspi.props import coord_type
from roundhouse.devices.linux.atspi.read import read_structure
from tests.fake_atspi import APP, FakeApp, FakeBus, FakeObject

VISIBLE = ("sensitive", "visible")  # what GTK 4.8 says of every object but its windows


@pytest.mark.parametrize(
    ("given", "shown"),
    [
        ("GtkButton", ""),
        ("AdwGizmo", ""),
        ("EditorSourceView", ""),
        ("7 7", "7"),
        ("_Retry Retry", "Retry"),
        ("Save As Save As", "Save As"),
        ("Clear Display [Escape]", "Clear Display [Escape]"),
        ("New tab (Ctrl+T)", "New tab (Ctrl+T)"),
        ("Undo", "Undo"),
        ("x2", "x2"),
        ("", ""),
    ],
)
def test_gtk4_names_as_a_person_would_say_them(given: str, shown: str) -> None:
    assert gtk4_name(given) == shown


def test_only_gtk4_is_asked_in_window_coordinates() -> None:
    assert Toolkit("GTK", "4.8.3").gtk4 and Toolkit("GTK", "4.18.6").gtk4
    assert not Toolkit("gtk", "3.24.38").gtk4
    assert not Toolkit("Qt", "6.12.0").gtk4 and not Toolkit("Chromium", "1.0").gtk4
    bus = FakeBus(FakeApp({"/root": FakeObject(role="frame")}))
    assert coord_type(bus, (APP, "/root")) == 0  # the screen's
    bus.window_coords.add(APP)
    assert coord_type(bus, (APP, "/root")) == 1  # the window's


def calculator_like() -> FakeApp:
    """A frame that shows, a keypad of some size, and an info bar that is not revealed
    (0 × 0, its button too), all merely "visible"."""

    def visible(role: str, rect: tuple[int, int, int, int], *children: str) -> FakeObject:
        interfaces = (ACCESSIBLE, COMPONENT, ACTION)
        return FakeObject(
            role=role, states=VISIBLE, interfaces=interfaces, children=list(children), rect=rect
        )

    return FakeApp(
        {
            "/root": FakeObject(role="frame", children=["/keypad", "/bar"], rect=(0, 0, 355, 486)),
            "/keypad": visible("panel", (12, 238, 331, 236), "/7"),
            "/7": visible("push button", (16, 288, 55, 40)),
            "/bar": visible("panel", (0, 47, 355, 0), "/retry"),
            "/retry": visible("push button", (0, 47, 0, 0)),
        }
    )


async def test_a_visible_object_shows_when_it_has_a_size_and_what_does_not_is_not_opened() -> None:
    bus = FakeBus(calculator_like())
    cache = await load_cache(bus, APP)
    structure = await read_structure(
        bus,
        cache[APP, "/root"],
        cache,
        TreeLimits(),
        lambda node: node.may_show_children,
        time.monotonic() + 5,
        hidden_in_full=False,
        showing_from_extents=True,
    )
    showing = {ref[1] for ref, node in structure.nodes.items() if node.showing}
    assert showing == {"/root", "/keypad", "/7"}
    assert (APP, "/retry") not in structure.nodes  # the hidden bar was not opened
    # The rectangle read to decide is kept: the details do not ask for it again.
    seven = structure.nodes[APP, "/7"]
    assert seven.rect_read and seven.rect is not None and seven.rect.width == 55


def test_a_nameless_gtk4_dialog_matches_its_window_by_size() -> None:
    """GNOME Text Editor's "Replace?" question has no title: its frame reports (0, 0) and
    the size of its window less the 5-pixel border it draws."""
    window = WindowInfo(
        xid=1,
        title="",
        application="gnome-text-editor",
        pid=7,
        rect=Rect(left=225, top=343, right=1055, bottom=471),
        active=True,
    )

    def frame(left: int, top: int, width: int, height: int) -> RawNode:
        rect = Rect(left=left, top=top, right=left + width, bottom=top + height)
        return RawNode((APP, "/f"), "dialog", "", None, ["showing"], frozenset(), 0, [], rect=rect)

    assert match_score(frame(0, 0, 820, 118), window) > 0
    assert match_score(frame(0, 0, 1222, 409), window) == 0  # the Save As dialog behind it
    # A frame that reports the screen (GTK 3) matches only where it lies.
    assert match_score(frame(225, 343, 830, 128), window) > 0
    assert match_score(frame(600, 50, 830, 128), window) == 0
