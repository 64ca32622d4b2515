"""The X11 screen, in-process: the desktop through mss, one window through XComposite.

A region grab of the screen shows whatever covers the window; with the root's children
redirected (automatic mode, so the screen still looks the same) a GetImage on a window
returns its own content even when it is covered, in about the time of a region grab.
"""

from __future__ import annotations

import threading

import mss
from PIL import Image
from Xlib import X, error  # type: ignore[import-untyped, unused-ignore]
from Xlib.display import Display  # type: ignore[import-untyped, unused-ignore]
from Xlib.ext import composite  # type: ignore[import-untyped, unused-ignore]

from roundhouse.devices.contract import Rect, WindowInfo
from roundhouse.devices.linux.display.base import Closing, Monitor, RegionScreen, clip
from roundhouse.devices.linux.display.x11.monitors import read_monitors


class Screen(RegionScreen, Closing):
    """Grabs pixels from one X display; keep one per display, it holds two connections."""

    def __init__(self, display: str) -> None:
        self._mss = mss.MSS(display=display)
        self._x = Display(display)
        self._lock = threading.Lock()  # python-xlib replies are not safe across threads
        self._grabbing = threading.Lock()  # nor is one mss instance
        self._composite = self._x.has_extension("Composite")
        if self._composite:
            root = self._x.screen().root
            root.composite_redirect_subwindows(composite.RedirectAutomatic)
            self._x.sync()
        screen = self._x.screen()
        self.size = (int(screen.width_in_pixels), int(screen.height_in_pixels))

    def close(self) -> None:
        self._mss.close()
        self._x.close()

    def monitors(self) -> list[Monitor]:
        """RandR's monitors (asked each time: a person may plug one in)."""
        with self._lock:
            return read_monitors(self._x, self.size)

    def desktop(self) -> Image.Image:
        width, height = self.size
        return self.region(Rect(left=0, top=0, right=width, bottom=height))

    def region(self, rect: Rect) -> Image.Image:
        clipped = clip(rect, self.size)
        with self._grabbing:  # screenshots are taken in threads, side by side
            shot = self._mss.grab((clipped.left, clipped.top, clipped.right, clipped.bottom))
        return Image.frombytes("RGB", shot.size, shot.bgra, "raw", "BGRX")

    def raw(self, rect: Rect | None = None) -> bytes:
        """The raw pixels of the screen (or a region): ~1.5 ms, for change detection."""
        width, height = self.size
        clipped = clip(rect or Rect(left=0, top=0, right=width, bottom=height), self.size)
        with self._grabbing:
            shot = self._mss.grab((clipped.left, clipped.top, clipped.right, clipped.bottom))
        return bytes(shot.raw)

    def window(self, window: WindowInfo) -> tuple[Image.Image, str]:
        """The window's own pixels when Composite allows it, else the screen region it covers."""
        if self._composite:
            image = self._window_content(window.xid)
            if image is not None:
                return image, "composite"
        return super().window(window)

    def _window_content(self, xid: int) -> Image.Image | None:
        with self._lock:
            window = self._x.create_resource_object("window", xid)
            try:
                geometry = window.get_geometry()
                if geometry.depth not in (24, 32):
                    return None  # unusual visuals: let the region grab handle them
                image = window.get_image(
                    0, 0, geometry.width, geometry.height, X.ZPixmap, 0xFFFFFFFF
                )
            except (error.BadMatch, error.BadDrawable, error.BadWindow):
                # Unmapped or gone: the caller's region grab shows what the screen shows.
                return None
        size = (int(geometry.width), int(geometry.height))
        data = image.data if isinstance(image.data, bytes) else bytes(image.data)
        return Image.frombytes("RGB", size, data, "raw", "BGRX")
