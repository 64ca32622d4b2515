"""Which toolkit draws a window, where that decides how its accessible objects are placed.

On Wayland no toolkit knows where its window is, so each reports its objects relative to
its window; GTK 3 relative to its whole surface (the shadow it draws around a floating
window included), GTK 4 and the others relative to the window itself. A compositor that
tells both rectangles apart (Mutter, KWin) lets the backend answer `content()` exactly;
which one applies is read from the libraries the process has loaded.
"""

from __future__ import annotations

from pathlib import Path


def loads(pid: int | None, library: str) -> bool:
    """Whether process `pid` has `library` (a file name prefix, "libgtk-3.so") mapped."""
    if pid is None or pid <= 0:
        return False
    try:
        with Path(f"/proc/{pid}/maps").open("rb") as maps:
            needle = ("/" + library).encode()
            return any(needle in line for line in maps)
    except OSError:  # gone, or another user's process
        return False


def draws_relative_to_buffer(pid: int | None) -> bool:
    """GTK 3 places its accessible objects relative to its whole surface."""
    return loads(pid, "libgtk-3.so")
