"""A screenshot as the tools give it: grabbed by the display server, its controls marked
with their numbers (set-of-marks; where the tags go is marks.py), encoded as PNG.

PNG encoding dominates the cost, so we encode at zlib level 1 without row filters (flat
UI pictures stay small: ~60 KB for a 1280x800 desktop).
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import mss.tools
from PIL import Image, ImageDraw, ImageFont

from roundhouse.devices.contract import Control, Rect, WindowInfo
from roundhouse.devices.linux.action.marks import place_labels
from roundhouse.devices.linux.display.base import Monitor, Screen, clip

PNG_LEVEL = 1
_FONT_FILE = "DejaVuSans-Bold.ttf"
_FONT_SIZE = 14  # a two-digit tag is 23x14 pixels: as tall as a dense list's row
# Distinct, readable on light and dark UIs; cycled by label so neighbours differ.
_COLOURS = ["#e6194b", "#3cb44b", "#4363d8", "#f58231", "#911eb4", "#008080", "#9a6324"]


@dataclass(frozen=True)
class Screenshot:
    png: bytes
    width: int
    height: int
    rect: Rect  # where the picture is on the screen
    # "screen", "monitor" (its own pixels), "composite" or "region" (the window may be
    # covered)
    method: str

    def save(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(self.png)
        return path


def encode_png(image: Image.Image, level: int = PNG_LEVEL) -> bytes:
    """PNG without row filters (mss's writer): 2.5x faster than Pillow's adaptive filtering
    at level 1 on a 1280x800 desktop (8 ms vs 20 ms), and about as small."""
    png = mss.tools.to_png(image.convert("RGB").tobytes(), image.size, level=level)
    if png is None:  # only when given an output file, which we never pass
        raise RuntimeError("mss.tools.to_png returned no bytes")
    return png


def capture_desktop_png(screen: Screen, controls: Sequence[Control] = ()) -> Screenshot:
    """The whole screen; with `controls`, numbered boxes are drawn on them."""
    image = screen.desktop()
    if controls:
        image = annotate(image, controls)
    width, height = image.size
    rect = Rect(left=0, top=0, right=width, bottom=height)
    return Screenshot(encode_png(image), width, height, rect, "screen")


def capture_window_png(
    screen: Screen, window: WindowInfo, controls: Sequence[Control] = ()
) -> Screenshot:
    """One window; with `controls`, numbered boxes are drawn on them (set-of-marks)."""
    image, method = screen.window(window)
    rect = window.rect
    if method == "region":
        rect = clip(rect, screen.size)
    if controls:
        image = annotate(image, controls, origin=(rect.left, rect.top))
    width, height = image.size
    return Screenshot(encode_png(image), width, height, rect, method)


def capture_monitor_png(
    screen: Screen, number: int, controls: Sequence[Control] = ()
) -> tuple[Screenshot, Monitor]:
    """One monitor, in its own pixels (1920x1200 for a 1280x800 place at scale 1.5); with
    `controls`, numbered boxes are drawn on them, scaled as the monitor is."""
    image, monitor = screen.monitor(number)
    if controls:
        origin = (monitor.rect.left, monitor.rect.top)
        image = annotate(image, controls, origin=origin, scale=monitor.scale)
    width, height = image.size
    return Screenshot(encode_png(image), width, height, monitor.rect, "monitor"), monitor


@dataclass(frozen=True)
class Mark:
    """One numbered control as drawn: its box and its label, in image pixels."""

    control: Control
    box: Rect
    label: Rect
    text: str


def layout_marks(
    controls: Sequence[Control],
    size: tuple[int, int],
    origin: tuple[int, int] = (0, 0),
    scale: float = 1.0,
) -> list[Mark]:
    """Where the boxes and labels of `controls` go on an image of `size` whose top-left
    corner is at `origin` on the screen, `scale` image pixels to a screen pixel (a monitor
    scaled by 1.5). Only numbered controls in the image get a mark."""
    shown = [
        (control, box)
        for control in controls
        if control.label > 0  # what the model cannot name by a number gets no box
        and (box := _in_image(control.rect, origin, size, scale)) is not None
    ]
    texts = [str(control.label) for control, _ in shown]
    sizes = [_tag_size(text) for text in texts]
    labels = place_labels([box for _, box in shown], sizes, size)
    return [
        Mark(control, box, label, text)
        for (control, box), label, text in zip(shown, labels, texts, strict=True)
    ]


def annotate(
    image: Image.Image,
    controls: Sequence[Control],
    origin: tuple[int, int] = (0, 0),
    scale: float = 1.0,
) -> Image.Image:
    """A copy of `image` with each numbered control boxed and labelled with its number.

    Control rectangles are screen coordinates; `origin` is where the image's top-left
    corner is on the screen. Labels go outside their boxes, clear of one another (marks.py).
    """
    marked = image.copy()
    draw = ImageDraw.Draw(marked)
    font = _font(_FONT_SIZE)
    marks = layout_marks(controls, marked.size, origin, scale)
    for mark in marks:
        box = mark.box
        outline = colour_of(mark.control)
        draw.rectangle((box.left, box.top, box.right - 1, box.bottom - 1), outline=outline, width=2)
    # Tags after every box, so that no box is drawn across a number.
    for mark in marks:
        tag = mark.label
        draw.rectangle(
            (tag.left, tag.top, tag.right - 1, tag.bottom - 1), fill=colour_of(mark.control)
        )
        left, top, _, _ = font.getbbox(mark.text)
        draw.text((tag.left + 2 - left, tag.top + 2 - top), mark.text, "white", font)
    return marked


def colour_of(control: Control) -> str:
    return _COLOURS[control.label % len(_COLOURS)]


def _tag_size(text: str) -> tuple[int, int]:
    """The filled tag around a number: its ink plus 2 pixels each side."""
    left, top, right, bottom = _font(_FONT_SIZE).getbbox(text)
    return int(right - left) + 4, int(bottom - top) + 4


def _in_image(
    rect: Rect, origin: tuple[int, int], size: tuple[int, int], scale: float = 1.0
) -> Rect | None:
    """The rectangle in image pixels, clipped to the image; None when none of it is there."""
    ox, oy = origin
    box = Rect(
        max(round((rect.left - ox) * scale), 0),
        max(round((rect.top - oy) * scale), 0),
        min(round((rect.right - ox) * scale), size[0]),
        min(round((rect.bottom - oy) * scale), size[1]),
    )
    return box if box.width > 0 and box.height > 0 else None


_fonts: dict[int, ImageFont.FreeTypeFont] = {}


def _font(size: int) -> ImageFont.FreeTypeFont:
    if size not in _fonts:
        data = resources.files("roundhouse.devices.linux").joinpath("fonts", _FONT_FILE)
        with data.open("rb") as handle:
            _fonts[size] = ImageFont.truetype(io.BytesIO(handle.read()), size)
    return _fonts[size]
