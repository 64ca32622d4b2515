"""Where a window's accessible rectangles are on screen (atspi/placement.py, pure): toolkits
that report screen coordinates are left untouched, window-relative ones (GTK 4, every
toolkit on Wayland) are moved onto the window's content, logical pixels are scaled."""

from __future__ import annotations

from hypothesis import assume, given
from hypothesis import strategies as st

from roundhouse.devices.contract import Rect
from roundhouse.devices.linux.atspi.placement import IDENTITY, Placement, place


def rect(left: int, top: int, width: int, height: int) -> Rect:
    return Rect(left=left, top=top, right=left + width, bottom=top + height)


def inside(point: tuple[int, int], area: Rect) -> bool:
    x, y = point
    return area.left <= x < area.right and area.top <= y < area.bottom


# Measured on this machine kind (Xvfb + openbox, GTK 4.8, no compositor).
CALCULATOR_AT_0 = rect(0, 0, 365, 496)  # the X window; GTK 4 draws a 5-pixel border in it
CALCULATOR_FRAME = rect(0, 0, 355, 486)  # what its frame reports, wherever the window is


def test_gtk4_on_x11_is_moved_onto_its_window_past_the_border_it_draws() -> None:
    window = rect(457, 164, 365, 496)
    placement = place(CALCULATOR_FRAME, window, window)
    assert placement == Placement(dx=462, dy=169)
    # The "7" button, as GNOME Calculator reported it: it sits where the screenshot shows it.
    assert placement.to_screen(rect(16, 288, 55, 40)) == rect(478, 457, 55, 40)


def test_qt_on_gnome_is_placed_under_the_title_bar_it_draws() -> None:
    """Measured on GNOME Shell 43 (Mutter draws no decorations on Wayland, so Qt draws its
    own): the window 402x400, Qt's frame 400x360, 1 pixel each side and below, 39 above."""
    window = rect(35, 154, 402, 400)
    placement = place(rect(0, 0, 400, 360), window, window)
    assert placement == Placement(dx=36, dy=193)
    # "Press me", as Qt reported it: where the screenshot shows it (drawn from y 236).
    assert placement.to_screen(rect(11, 43, 378, 26)) == rect(47, 236, 378, 26)


def test_gtk4_at_the_origin_is_told_apart_by_its_size() -> None:
    assert place(CALCULATOR_FRAME, CALCULATOR_AT_0, CALCULATOR_AT_0) == Placement(dx=5, dy=5)


def test_toolkits_that_report_the_screen_are_left_untouched() -> None:
    gedit = rect(185, 22, 910, 756)  # GTK 3: its frame is its X window
    assert place(gedit, gedit, gedit) is IDENTITY or place(gedit, gedit, gedit).identity
    thunar_window = rect(1, 315, 640, 480)  # GTK 3 with openbox's title bar in its frame
    assert place(rect(0, 295, 642, 505), thunar_window, thunar_window).identity
    chromium = rect(10, 10, 1050, 780)  # declares _GTK_FRAME_EXTENTS: its content is smaller
    assert place(chromium, rect(14, 10, 1042, 776), chromium).identity
    writer = rect(0, 19, 1280, 781)  # maximised; LibreOffice's frame includes the title bar
    assert place(rect(0, 0, 1280, 800), writer, writer).identity


def test_a_compositor_declares_the_shadow_and_the_frame_sits_on_the_content() -> None:
    window = rect(100, 80, 460, 590)
    content = rect(123, 103, 414, 544)  # _GTK_FRAME_EXTENTS 23 each side
    assert place(rect(0, 0, 414, 544), content, window) == Placement(dx=123, dy=103)


def test_logical_pixels_are_scaled() -> None:
    window = rect(400, 200, 730, 992)  # GDK_SCALE=2: the X window is in device pixels
    placement = place(CALCULATOR_FRAME, window, window)
    assert placement == Placement(dx=410, dy=210, scale=2.0)
    assert placement.to_screen(rect(16, 288, 55, 40)) == rect(442, 786, 110, 80)
    # GTK 3 at scale 2 reports the screen in logical pixels: only the scale applies.
    gedit = rect(300, 100, 800, 600)
    assert place(rect(150, 50, 400, 300), gedit, gedit) == Placement(scale=2.0)


def test_fractional_scales_of_wayland_compositors() -> None:
    content = rect(200, 100, 500, 375)  # a 400 × 300 frame at 1.25
    assert place(rect(0, 0, 400, 300), content, content) == Placement(200, 100, 1.25)
    content = rect(200, 100, 700, 525)  # at 1.75
    assert place(rect(0, 0, 400, 300), content, content) == Placement(200, 100, 1.75)


def test_nothing_to_go_by_is_the_identity() -> None:
    window = rect(10, 10, 100, 100)
    assert place(None, window, window) is IDENTITY
    assert place(rect(0, 0, 0, 0), window, window) is IDENTITY
    assert place(rect(0, 0, 50, 50), rect(0, 0, 0, 0), window) is IDENTITY


def test_describe_says_how_rectangles_move() -> None:
    assert IDENTITY.describe() == "screen"
    assert Placement(dx=5, dy=5).describe() == "+5,+5"
    assert Placement(dx=410, dy=-3, scale=2.0).describe() == "+410,-3 ×2"


@given(
    x=st.integers(-200, 1600),
    y=st.integers(-200, 1000),
    width=st.integers(120, 1200),
    height=st.integers(120, 900),
    border=st.integers(2, 12),
    scale=st.sampled_from([1, 2, 3]),
    node=st.tuples(st.floats(0, 1), st.floats(0, 1), st.integers(4, 60), st.integers(4, 40)),
)
def test_a_window_relative_toolkit_is_placed_where_it_draws(
    x: int,
    y: int,
    width: int,
    height: int,
    border: int,
    scale: int,
    node: tuple[float, float, int, int],
) -> None:
    """A window anywhere (even at the origin), a border the display server knows nothing of
    drawn evenly around the frame (GTK 4 without a compositor: 5 pixels), logical pixels:
    every control lands where it is drawn, and the area read maps back around it. (A
    squarish frame with a border at scale 2 or more reads as the next quarter scale: the
    one case place() says it cannot tell.)"""
    assume(scale == 1 or abs(width - height) >= 0.1 * max(width, height))
    window = rect(x, y, (width + 2 * border) * scale, (height + 2 * border) * scale)
    frame = rect(0, 0, width, height)
    fx, fy, node_width, node_height = node
    left = int(fx * max(width - node_width, 0))
    top = int(fy * max(height - node_height, 0))
    reported = rect(left, top, node_width, node_height)
    truth = rect(
        x + (border + left) * scale,
        y + (border + top) * scale,
        node_width * scale,
        node_height * scale,
    )
    placement = place(frame, window, window)
    assert placement.to_screen(reported) == truth
    assert inside(placement.to_screen(reported).center, truth)
    area = placement.to_app(truth)
    assert area.left <= reported.left and area.top <= reported.top
    assert area.right >= reported.right and area.bottom >= reported.bottom


@given(
    x=st.integers(0, 1600),
    y=st.integers(0, 1000),
    width=st.integers(200, 1200),
    height=st.integers(120, 900),
    border=st.integers(0, 6),
    title=st.integers(10, 48),
    node=st.tuples(st.floats(0, 1), st.floats(0, 1), st.integers(4, 60), st.integers(4, 40)),
)
def test_a_frame_under_a_title_bar_the_client_draws_is_placed_where_it_draws(
    x: int,
    y: int,
    width: int,
    height: int,
    border: int,
    title: int,
    node: tuple[float, float, int, int],
) -> None:
    """A client that draws its own title bar over its frame, and a border as wide below as
    on each side (Qt where the compositor draws no decorations), in a window at least as
    wide as tall: every control lands where it is drawn."""
    assume(width + 2 * border >= height + 2 * border + title)
    window = rect(x, y, width + 2 * border, height + 2 * border + title)
    fx, fy, node_width, node_height = node
    left = int(fx * max(width - node_width, 0))
    top = int(fy * max(height - node_height, 0))
    truth = rect(x + border + left, y + title + border + top, node_width, node_height)
    placement = place(rect(0, 0, width, height), window, window)
    assert placement.to_screen(rect(left, top, node_width, node_height)) == truth


@given(
    x=st.integers(0, 1600),
    y=st.integers(0, 1000),
    width=st.integers(50, 1200),
    height=st.integers(50, 900),
    decorations=st.tuples(st.integers(0, 5), st.integers(0, 30), st.integers(0, 5)),
    content_inset=st.integers(0, 30),
)
def test_a_toolkit_that_reports_the_screen_is_never_moved(
    x: int,
    y: int,
    width: int,
    height: int,
    decorations: tuple[int, int, int],
    content_inset: int,
) -> None:
    """Its frame is its window, or holds the window manager's decorations too; the display
    server may know of a shadow inside the window (Chromium's _GTK_FRAME_EXTENTS)."""
    side, title, bottom = decorations
    window = rect(x, y, width, height)
    frame = Rect(left=x - side, top=y - title, right=x + width + side, bottom=y + height + bottom)
    content = Rect(
        left=window.left + content_inset,
        top=window.top + content_inset,
        right=window.right - content_inset,
        bottom=window.bottom - content_inset,
    )
    if content.width <= 0 or content.height <= 0:
        content = window
    assert place(frame, content, window).identity
