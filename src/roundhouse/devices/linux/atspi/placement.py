"""Where a window's accessible objects are on the screen (pure geometry).

AT-SPI's GetExtents(SCREEN) should give screen pixels, and GTK 3, Qt, Chromium and
LibreOffice do on X11. GTK 4 answers relative to its own window, on X11 too (GNOME
Calculator's frame says [0, 0, 355, 486] wherever its window is), and on Wayland every
toolkit does, since no client knows where its window is. On a scaled screen (GDK_SCALE=2)
toolkits speak logical pixels, half the screen's.

So each read of a window first decides its `Placement` from two rectangles: the frame's,
as the application reports it, and the window's content, as the display server knows it
(display.base.Windows.content). A read then works in the application's space: the area
it reads is turned into that space (`to_app`), and every rectangle read is turned back
into the screen's (`to_screen`). Nothing else in the reader knows about it.

    placement = place(reported_frame, content, window.rect)
    on_screen = placement.to_screen(rect)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from roundhouse.devices.contract import Rect

SCALE_STEP = 0.25  # Wayland compositors offer 1.25, 1.5, 1.75; X11 only whole scales
MAX_SCALE = 4.0
# A ratio this close to a whole number is that number: a border drawn around the frame of a
# small, squarish window makes the ratio of its content to its frame larger than the scale.
WHOLE_SCALE_SLACK = 0.2
# What a window manager may add around a window on X11 (openbox: a 20-pixel title bar and a
# 1-pixel border), and a frame that reports the screen's coordinates may include.
MAX_DECORATION = 64


@dataclass(frozen=True)
class Placement:
    """screen = (dx, dy) + scale × reported."""

    dx: int = 0
    dy: int = 0
    scale: float = 1.0

    @property
    def identity(self) -> bool:
        return self.dx == 0 and self.dy == 0 and self.scale == 1.0

    def to_screen(self, rect: Rect) -> Rect:
        if self.identity:
            return rect
        scale = self.scale
        return Rect(
            left=self.dx + round(rect.left * scale),
            top=self.dy + round(rect.top * scale),
            right=self.dx + round(rect.right * scale),
            bottom=self.dy + round(rect.bottom * scale),
        )

    def to_app(self, rect: Rect) -> Rect:
        """A screen rectangle in the application's space, rounded outwards (an area to read
        never loses its edge pixels)."""
        if self.identity:
            return rect
        scale = self.scale
        return Rect(
            left=math.floor((rect.left - self.dx) / scale),
            top=math.floor((rect.top - self.dy) / scale),
            right=math.ceil((rect.right - self.dx) / scale),
            bottom=math.ceil((rect.bottom - self.dy) / scale),
        )

    def describe(self) -> str:
        """ "screen", or how the application's rectangles are moved: "+5,+5" or "+10,+10 ×2"."""
        if self.identity:
            return "screen"
        shift = f"{self.dx:+d},{self.dy:+d}"
        return shift if self.scale == 1.0 else f"{shift} ×{self.scale:g}"


IDENTITY = Placement()


def place(reported: Rect | None, content: Rect, window: Rect) -> Placement:
    """How `window`'s accessible rectangles map to the screen, given its frame's rectangle as
    the application reports it and where the display server says its content is.

    - A frame that already says where it is (at a whole scale, it covers the window or its
      content, and exceeds them by no more than window-manager decorations) speaks the
      screen's coordinates: GTK 3's frame is its X window, Thunar's and LibreOffice's hold
      openbox's title bar too. Only the scale applies (GTK 3 at GDK_SCALE=2: 2).
    - Any other frame is window-relative, and placed where it is drawn: in the content,
      with as much below it as on each side. A client that draws a border the display
      server is not told of (GTK 4 on a window manager without a compositor: 5 pixels
      each side) draws it evenly all round, so the frame is centred; one that draws a
      title bar of its own too (Qt on GNOME: 1 pixel each side and below, 39 above, where
      Mutter offers no decorations) has it above the frame. The scale is the one that
      leaves equal margins across and down; for a squarish frame, the ratio of the sizes
      (a whole number when near one, else quarter steps).

    A GTK 4 window that really sits at (0, 0) is told apart by its size: its frame is the
    content less the border, which does not cover the window, so it is still moved by the
    border. Only a GTK 4 window with no border at all at (0, 0) reads as the screen's,
    which is then the same thing. What cannot be told apart: a squarish frame with a border
    at a whole scale of 2 or more, from one at the next quarter scale; and the scale of a
    frame under a title bar of the client's own, taller than wide or at a scale of 2 or
    more (its margins are not equal: the height's ratio is taken).
    """
    if reported is None or reported.width <= 0 or reported.height <= 0:
        return IDENTITY
    if content.width <= 0 or content.height <= 0:
        return IDENTITY
    for whole in range(1, int(MAX_SCALE) + 1):
        scaled = Placement(scale=whole).to_screen(reported)
        if _says_where(scaled, window, whole) or _says_where(scaled, content, whole):
            return Placement(scale=float(whole))
    scale = _relative_scale(reported, content)
    scaled = Placement(scale=scale).to_screen(reported)
    side = (content.width - scaled.width) // 2
    dx = content.left + side - scaled.left
    dy = content.top + content.height - scaled.height - side - scaled.top
    return Placement(dx=dx, dy=dy, scale=scale)


def _says_where(frame: Rect, target: Rect, slack: int) -> bool:
    """`frame` covers `target` (up to rounding) and exceeds it by no more than decorations."""
    return (
        frame.left <= target.left + slack
        and frame.top <= target.top + slack
        and frame.right >= target.right - slack
        and frame.bottom >= target.bottom - slack
        and frame.width - target.width <= MAX_DECORATION
        and frame.height - target.height <= MAX_DECORATION
    )


def _relative_scale(reported: Rect, content: Rect) -> float:
    across, down = reported.width, reported.height
    if abs(across - down) >= 0.1 * max(across, down):
        # Equal margins: content.width - s × across = content.height - s × down.
        exact = (content.width - content.height) / (across - down)
        if 1.0 <= exact <= MAX_SCALE:
            return _stepped(exact, slack=0.05)
    ratio = content.width / across if across >= down else content.height / down
    return _stepped(ratio, slack=WHOLE_SCALE_SLACK)


def _stepped(ratio: float, slack: float) -> float:
    whole = round(ratio)
    if abs(ratio - whole) <= slack + 1e-9:
        stepped = float(whole)
    else:
        stepped = round(ratio / SCALE_STEP) * SCALE_STEP
    return min(max(stepped, 1.0), MAX_SCALE)
