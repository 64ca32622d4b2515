"""Which toolkit draws a window, where that decides how its accessible objects are placed.

On Wayland no toolkit knows where its window is, so each reports its objects relative to
its window; GTK 3 relative to its whole surface (the shadow it draws around a floating
window included), GTK 4 and the others relative to the window itself. A compositor that
tells both rectangles apart (Mutter, KWin) lets the backend answer `content()` exactly;
which one applies is read from the libraries the process has loaded.
"""

from __future__ import annotations

from pathlib import Path

from roundhouse.devices.contract import Rect


def libraries(pid: int | None) -> set[str]:
    """The file names of the shared libraries process `pid` has mapped ("libgtk-3.so.0")."""
    if pid is None or pid <= 0:
        return set()
    try:
        with Path(f"/proc/{pid}/maps").open("rb") as maps:
            paths = {line.rsplit(b"/", 1)[-1].strip() for line in maps if b".so" in line}
    except OSError:  # gone, or another user's process
        return set()
    return {path.decode(errors="replace") for path in paths}


def draws_relative_to_buffer(pid: int | None) -> bool:
    """A GTK 3 application places its accessible objects relative to its whole surface.
    A Qt application may load GTK 3 too (its GTK platform theme): Qt's own objects are
    placed relative to its window."""
    names = libraries(pid)
    gtk3 = any(name.startswith("libgtk-3.so") for name in names)
    qt = any(name.startswith(("libQt5Gui.so", "libQt6Gui.so")) for name in names)
    return gtk3 and not qt


def content_rect(pid: int | None, frame: Rect, buffer: Rect) -> Rect:
    """A window's content() where the compositor tells its frame (the window without the
    shadow drawn around it) from its buffer (its whole surface): the buffer for GTK 3,
    which places its objects relative to that, else the frame."""
    return buffer if draws_relative_to_buffer(pid) else frame
