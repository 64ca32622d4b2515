"""One screenshot scaling and one coordinate map for every computer-use family. Pure.

A screenshot shows a region of the desktop (the whole desktop, one monitor, one window)
given in the desktop's logical pixels, the pixels windows and the pointer speak. Its own
pixels may be more (a monitor at scale 1.5 shoots 1920x1200 for a 1280x800 place). Each
family wants the image at a size of its own:

- Anthropic: at most 1568 pixels on the long side and about 1.15 megapixels, aspect kept
  (the API shrinks a larger image itself, and the model's clicks then miss);
- OpenAI's computer-use-preview: at most 768 pixels on the short side, aspect kept (what
  its "high detail" image reading shrinks an image to), so the display it is told of is
  the image it reads;
- Qwen-VL and UI-TARS: smart_resize, each side a multiple of a factor (28, Qwen3-VL 32),
  the area between a minimum and a maximum;
- Gemini: shrunk, aspect kept, to at most 1440 on the long side and 1440x900 pixels (the
  screen its reference client uses);
- Gemini and Qwen3-VL: whatever the image, points on a 0–999 grid (Qwen3-VL's image
  smart-resized with factor 32; the earlier UI-TARS models' on 0–1000 likewise, factor 28);
- OpenCUA with absolute coordinates: the screenshot as taken.

`ScreenMap` keeps the region and the image sent, and maps a point the model gives back to
a logical pixel of the desktop: the one under the centre of the image pixel (or grid cell)
it named, so within one logical pixel of where the model pointed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from roundhouse.devices.contract import Rect

ANTHROPIC_LONG_SIDE = 1568
ANTHROPIC_PIXELS = 1_150_000  # about 1.15 megapixels


def fit_anthropic(
    width: int, height: int, long_side: int = ANTHROPIC_LONG_SIDE, pixels: int = ANTHROPIC_PIXELS
) -> tuple[int, int]:
    """The largest size, aspect kept, with the long side at most `long_side` and at most
    `pixels` pixels in all; an image already within both keeps its size."""
    if width < 1 or height < 1:
        raise ValueError(f"an image of {width}x{height} pixels")
    factor = min(1.0, long_side / max(width, height), math.sqrt(pixels / (width * height)))
    if factor >= 1.0:
        return width, height
    # The epsilon keeps 3000 * (1568 / 3000) at 1568, not 1567.99...
    return (
        max(1, math.floor(width * factor + 1e-9)),
        max(1, math.floor(height * factor + 1e-9)),
    )


OPENAI_SHORT_SIDE = 768
GEMINI_SCREEN = (1440, 900)  # the screen Google's reference client declares


def fit_short_side(width: int, height: int, short_side: int = OPENAI_SHORT_SIDE) -> tuple[int, int]:
    """The size, aspect kept, with the short side at most `short_side`."""
    if width < 1 or height < 1:
        raise ValueError(f"an image of {width}x{height} pixels")
    factor = min(1.0, short_side / min(width, height))
    if factor >= 1.0:
        return width, height
    return (
        max(1, math.floor(width * factor + 1e-9)),
        max(1, math.floor(height * factor + 1e-9)),
    )


def smart_resize(
    width: int,
    height: int,
    factor: int = 28,
    min_pixels: int = 100 * 28 * 28,
    max_pixels: int = 16384 * 28 * 28,
    max_ratio: float = 200.0,
) -> tuple[int, int]:
    """Qwen2-VL's smart_resize (as Qwen-VL and UI-TARS publish it), in width, height order:
    each side a multiple of `factor`, the area within [min_pixels, max_pixels], the aspect
    as close as that allows."""
    if max(width, height) / min(width, height) > max_ratio:
        raise ValueError(f"an aspect ratio over {max_ratio:g}: {width}x{height}")
    w_bar = max(factor, round(width / factor) * factor)
    h_bar = max(factor, round(height / factor) * factor)
    if w_bar * h_bar > max_pixels:
        beta = math.sqrt(width * height / max_pixels)
        w_bar = max(factor, math.floor(width / beta / factor) * factor)
        h_bar = max(factor, math.floor(height / beta / factor) * factor)
    elif w_bar * h_bar < min_pixels:
        beta = math.sqrt(min_pixels / (width * height))
        w_bar = math.ceil(width * beta / factor) * factor
        h_bar = math.ceil(height * beta / factor) * factor
    return w_bar, h_bar


@dataclass(frozen=True)
class ScreenMap:
    """A region of the desktop (logical pixels) as shown by an image of `sent` pixels.

    grid: None when the model's points are pixels of the image sent; 1000 when they are on
    a 0–999 grid over it (Gemini, Qwen3-VL), whatever the image's size.
    """

    region: Rect
    sent: tuple[int, int]
    grid: int | None = None

    def __post_init__(self) -> None:
        if self.region.width < 1 or self.region.height < 1:
            raise ValueError(f"an empty region: {self.region}")
        if self.sent[0] < 1 or self.sent[1] < 1:
            raise ValueError(f"an empty image: {self.sent}")

    @property
    def space(self) -> tuple[int, int]:
        """The extent of the model's points: the image's pixels, or the grid."""
        return (self.grid, self.grid) if self.grid is not None else self.sent

    def to_logical(self, x: float, y: float) -> tuple[int, int]:
        """The logical pixel under the centre of the model's point (x, y): a point outside
        the image is held to its edge."""
        width, height = self.space
        region = self.region
        column = _cell(x, width) + 0.5
        row = _cell(y, height) + 0.5
        left = region.left + math.floor(column * region.width / width)
        top = region.top + math.floor(row * region.height / height)
        return min(left, region.right - 1), min(top, region.bottom - 1)

    def to_model(self, x: float, y: float) -> tuple[float, float]:
        """Where the model sees the logical point (x, y): the inverse of to_logical before
        the model rounds it to a pixel of its own."""
        width, height = self.space
        region = self.region
        return (
            (x - region.left + 0.5) * width / region.width - 0.5,
            (y - region.top + 0.5) * height / region.height - 0.5,
        )


def _cell(value: float, extent: int) -> int:
    """The pixel (or grid cell) a coordinate names, held inside [0, extent)."""
    return min(max(math.floor(value), 0), extent - 1)


def screen_map_for(
    region: Rect, pixels: tuple[int, int], target: str, *, grid: int | None = None
) -> ScreenMap:
    """The map for a screenshot of `region` holding `pixels`, shrunk to a family's target:
    "anthropic" (fit_anthropic), "openai" (fit_short_side), "qwen25" (smart_resize, factor
    28), "qwen3" (factor 32), "gemini" (within 1440 on the long side and 1440x900
    pixels), "as_taken" (its own pixels)."""
    width, height = pixels
    if target == "anthropic":
        sent = fit_anthropic(width, height)
    elif target == "openai":
        sent = fit_short_side(width, height)
    elif target == "qwen25":
        sent = smart_resize(width, height, 28)
    elif target == "qwen3":
        sent = smart_resize(width, height, 32, 64 * 32 * 32, 16384 * 32 * 32)
    elif target == "gemini":
        sent = fit_anthropic(width, height, GEMINI_SCREEN[0], GEMINI_SCREEN[0] * GEMINI_SCREEN[1])
    elif target == "as_taken":
        sent = (width, height)
    else:
        raise ValueError(f"unknown screenshot target {target!r}")
    return ScreenMap(region, sent, grid)
