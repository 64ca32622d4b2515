"""X11's window list read through a window manager's glitch: openbox, busy, publishes an
empty _NET_CLIENT_LIST for an instant (seen on Debian 13 under load, gedit's window active
and then "windows: none" for a millisecond)."""

from __future__ import annotations

import time

import pytest

from roundhouse.devices.contract import Rect, WindowInfo
from roundhouse.devices.linux.display.base import WindowError
from roundhouse.devices.linux.display.x11.windows import LIST_GLITCH, WindowManager

GEDIT = WindowInfo(
    xid=7,
    title="notes.txt - gedit",
    application="Gedit",
    pid=1,
    rect=Rect(left=0, top=0, right=800, bottom=600),
    active=True,
)


def manager(lists: list[list[WindowInfo]], exists: bool) -> WindowManager:
    """A WindowManager without a display: its list and its windows' existence given."""
    made = WindowManager.__new__(WindowManager)
    listed = iter(lists)
    made.list_windows = lambda: next(listed, lists[-1])  # type: ignore[method-assign]
    made._exists = lambda xid: exists  # type: ignore[method-assign]
    return made


def test_a_window_that_exists_is_found_though_the_list_was_empty_for_an_instant() -> None:
    assert manager([[], [], [GEDIT]], exists=True).get(7) == GEDIT


def test_a_window_that_is_gone_is_reported_at_once_and_an_unlisted_one_in_time() -> None:
    started = time.monotonic()
    with pytest.raises(WindowError, match="no window with id 7"):
        manager([[]], exists=False).get(7)
    assert time.monotonic() - started < LIST_GLITCH / 2
    with pytest.raises(WindowError, match="no window with id 7"):
        manager([[]], exists=True).get(7)  # withdrawn, not destroyed: not listed again
    assert time.monotonic() - started < 2 * LIST_GLITCH
