"""Screenshots of a real desktop: right size, real content, set-of-marks boxes where asked."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

from PIL import Image, ImageChops, ImageColor
from tests.desktop.conftest import (
    QT_APP_TITLE,
    StartApp,
    qt_app_argv,
    wait_for_window,
    wait_until,
)

from roundhouse.devices.contract import Control, ControlList, Rect
from roundhouse.devices.linux.action.marks import cover
from roundhouse.devices.linux.action.screenshots import (
    annotate,
    capture_desktop_png,
    capture_window_png,
    colour_of,
    layout_marks,
)
from roundhouse.devices.linux.action.settle import wait_quiet
from roundhouse.devices.linux.desktops.desktop import Desktop
from roundhouse.devices.linux.display.x11.screen import Screen
from roundhouse.devices.linux.display.x11.windows import WindowManager
from roundhouse.devices.linux.tools import DesktopTools

ROUNDHOUSE = str(Path(sys.executable).with_name("roundhouse"))


def _decode(png: bytes) -> Image.Image:
    image = Image.open(io.BytesIO(png))
    assert image.format == "PNG"
    return image.convert("RGB")


def _colours(image: Image.Image) -> int:
    return len(image.getcolors(maxcolors=1 << 20) or [])


async def test_desktop_screenshot_has_the_screen_size_and_content(
    desktop: Desktop, screen: Screen, windows: WindowManager, launch: StartApp
) -> None:
    process = launch(desktop, qt_app_argv())
    window = wait_for_window(desktop, pid=process.pid, title=QT_APP_TITLE)
    wait_until(lambda: windows.viewable(window.xid), what="the window to be mapped")
    await wait_quiet(screen, timeout=10)
    shot = capture_desktop_png(screen)
    image = _decode(shot.png)
    assert image.size == (desktop.width, desktop.height) == (shot.width, shot.height)
    assert _colours(image) > 20  # a window with text on it, not a flat background


async def test_window_screenshot_is_the_window(
    desktop: Desktop, screen: Screen, windows: WindowManager, launch: StartApp
) -> None:
    process = launch(desktop, qt_app_argv())
    window = wait_for_window(desktop, pid=process.pid, title=QT_APP_TITLE)
    # Listed is not yet shown: wait for the frame to be mapped and the first frames drawn.
    wait_until(lambda: windows.viewable(window.xid), what="the window to be mapped")
    await wait_quiet(screen, timeout=10)
    shot = capture_window_png(screen, window)
    image = _decode(shot.png)
    assert shot.method == "composite"
    assert image.size == (window.rect.width, window.rect.height)
    assert _colours(image) > 20
    # The window's own pixels are what the screen shows where the window is (but for a
    # blinking text cursor, which may have toggled between the two grabs).
    region = screen.region(window.rect)
    difference = ImageChops.difference(image, region).convert("L")
    changed = sum(difference.point(lambda v: 1 if v else 0).histogram()[1:])
    assert changed < 0.01 * window.rect.width * window.rect.height


def test_annotation_boxes_only_the_controls(
    desktop: Desktop, screen: Screen, windows: WindowManager, launch: StartApp
) -> None:
    process = launch(desktop, qt_app_argv())
    window = wait_for_window(desktop, pid=process.pid, title=QT_APP_TITLE)
    wait_until(lambda: windows.viewable(window.xid), what="the window to be mapped")
    left, top = window.rect.left, window.rect.top
    box = Rect(left=left + 20, top=top + 30, right=left + 140, bottom=top + 70)
    control = Control(label=7, id="n1", role="push button", name="Press me", rect=box)
    unnumbered = control.model_copy(update={"label": 0, "rect": _moved(box, 200)})

    # One grab, marked and not: only the box's and its label's pixels differ (in image
    # coordinates); the label is outside the box, just above it.
    plain, _ = screen.window(window)
    marked = annotate(plain, [control, unnumbered], origin=(left, top))
    [mark] = layout_marks([control, unnumbered], plain.size, (left, top))
    assert (mark.box.left, mark.box.top, mark.box.right, mark.box.bottom) == (20, 30, 140, 70)
    assert mark.label.bottom == 30 and mark.label.left == 20
    changed = ImageChops.difference(plain, marked).getbbox()
    assert changed is not None
    assert changed[0] >= 20 and changed[1] >= mark.label.top
    assert changed[2] <= 140 and changed[3] <= 70

    # The PNG of the tool carries the box too: its outline in the label's colour.
    shot = _decode(capture_window_png(screen, window, [control]).png)
    assert shot.getpixel((100, 30)) == marked.getpixel((100, 30)) != plain.getpixel((100, 30))


def _moved(rect: Rect, dx: int) -> Rect:
    return Rect(left=rect.left + dx, top=rect.top, right=rect.right + dx, bottom=rect.bottom)


def test_annotate_puts_each_number_outside_its_box() -> None:
    image = Image.new("RGB", (200, 100), "white")
    one = Control(
        label=1,
        id="a",
        role="push button",
        name="",
        rect=Rect(left=10, top=10, right=90, bottom=60),
    )
    two = Control(
        label=28,
        id="b",
        role="push button",
        name="",
        rect=Rect(left=100, top=10, right=190, bottom=60),
    )
    marked = annotate(image, [one, two])
    # Two boxes of different colours; inside them only their outlines (the control's own
    # text stays readable); each number on a filled tag just below its box.
    assert marked.getpixel((50, 10)) != marked.getpixel((150, 10))
    assert _colours(marked.crop((12, 12, 88, 58))) == 1
    assert _colours(marked.crop((102, 12, 188, 58))) == 1
    marks = layout_marks([one, two], image.size)
    assert [(m.label.left, m.label.top) for m in marks] == [(10, 60), (100, 60)]
    for mark in marks:
        tag = marked.crop((mark.label.left, mark.label.top, mark.label.right, mark.label.bottom))
        assert _colours(tag) > 2  # its fill, white digits and their anti-aliasing
        assert tag.getpixel((0, 0)) == ImageColor.getrgb(colour_of(mark.control))
    assert marked.getpixel((95, 50)) == (255, 255, 255)  # between the boxes: untouched


async def test_dense_controls_get_labels_clear_of_each_other_and_of_the_controls(
    tools: DesktopTools,
) -> None:
    """The Qt window with 48 more buttons 2 px apart and a list of 14 px rows: in the
    tool's real annotated render, no label overlaps another or hides more than 10% of any
    control, and every label is drawn where the layout put it."""
    window = await tools.launch_application(" ".join([*qt_app_argv(), "--buttons", "48"]))
    listed = ControlList.model_validate(await tools.get_controls(window["xid"]))
    assert len(listed.controls) >= 60
    info = tools.windows.get(window["xid"])
    origin = (info.rect.left, info.rect.top)
    shot = capture_window_png(tools.screen, info, listed.controls)
    image = _decode(shot.png)
    marks = layout_marks(listed.controls, image.size, origin)
    assert [m.control for m in marks] == listed.controls  # every control is in the window
    for mark in marks:
        assert image.getpixel((mark.label.left, mark.label.top)) == ImageColor.getrgb(
            colour_of(mark.control)
        )
        for other in marks:
            if other is not mark:
                assert not mark.label.overlap(other.label), (mark.text, other.text)
            assert cover(mark.label, other.box) <= 0.10, (mark.text, other.text)


def test_screenshot_command_writes_an_annotated_window_png(
    desktop: Desktop, launch: StartApp, tmp_path: Path
) -> None:
    process = launch(desktop, qt_app_argv())
    window = wait_for_window(desktop, pid=process.pid, title=QT_APP_TITLE)
    out = tmp_path / "qt.png"
    command = [ROUNDHOUSE, "screenshot", str(out), "--window", "roundhouse qt", "--annotate"]
    done = subprocess.run(
        [*command, "--desktop", "current"], env=desktop.env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert "controls numbered" in done.stdout
    with Image.open(out) as image:
        assert image.size == (window.rect.width, window.rect.height)
