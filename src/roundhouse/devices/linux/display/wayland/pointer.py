"""The pointer of the Wayland input backends: it arrives at a point by moving, as a real
mouse does."""

from __future__ import annotations

from roundhouse.devices.linux.display.pointer import Pointer


def approach(x: int, y: int, width: int) -> list[tuple[int, int]]:
    """The positions to move the pointer through to reach (x, y): a pixel beside it, then
    the point. A jump onto a window is an enter event to its application; GTK 3 marks the
    widget under the pointer as hovered only on a motion after it, and a button pressed
    at once was taken for a press outside the button (GNOME, ~1 click in 3 under load).
    A real mouse never arrives without moving."""
    beside = x - 1 if x > 0 else min(x + 1, width - 1)
    return [(beside, y), (x, y)]


class ApproachingPointer(Pointer):
    """The shared pointer (display/pointer.py), reaching each point through `approach`."""

    def _points(self, x: int, y: int) -> list[tuple[int, int]]:
        return approach(x, y, self._screen_size()[0])
