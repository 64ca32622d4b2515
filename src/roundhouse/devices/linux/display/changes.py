"""A witness's count of changes: what the screen drew (display servers), what an application
announced (atspi/events.py). Bumped from any thread, read anywhere, awaited on the event loop.

The settle (settle.py) waits on these to tell when an application is done with an action,
and the reader (atspi/kept.py) asks them whether anything changed since it read a window.
A change may carry the rectangle it touched (X11's damage, wlroots' screen copy), so that a
caret's blink, a sliver a few pixels wide, can be told from a change to the controls.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence

from roundhouse.devices.contract import Rect, bounding

KEPT = 256  # the latest changes kept with their rectangles; older ones count as any change
# A text caret drawn or wiped: at most this wide (GTK 3 draws it 3 px wide with its margin,
# Qt 8, GTK 4 and LibreOffice 1) and this tall (a line of text).
CARET_WIDTH = 8
CARET_HEIGHT = 48

Waiter = tuple[asyncio.AbstractEventLoop, "asyncio.Future[None]"]


class Changes:
    """How many changes a witness has seen, and when the latest came."""

    def __init__(self, name: str, *, exact: bool = False) -> None:
        self.name = name
        # Whether its rectangles are where the pixels changed (X11's damage), so that a
        # caret's blink is told by its size; not where they are extents or a whole window
        # or output (wlroots' screen copy gives the whole output for GTK 4's caret fading).
        self.exact = exact
        self.count = 0
        self.last = 0.0  # time.monotonic() of the latest
        self._lock = threading.Lock()
        self._latest: deque[tuple[int, Rect | None]] = deque(maxlen=KEPT)
        self._waiters: list[Waiter] = []

    def bump(self, rect: Rect | None = None) -> None:
        """One change seen (touching `rect`, where the witness says); wakes its waiters."""
        with self._lock:
            self.count += 1
            self.last = time.monotonic()
            self._latest.append((self.count, rect))
            waiters, self._waiters = self._waiters, []
        for loop, future in waiters:
            if not loop.is_closed():
                loop.call_soon_threadsafe(_wake, future)

    def mark(self) -> int:
        return self.count

    def since(self, mark: int, ignore: Callable[[Rect], bool] | None = None) -> bool:
        """Whether a change came after `mark`, other than those whose rectangle `ignore`
        says are no change (a change without one, or too old to be kept, always counts)."""
        with self._lock:
            count = self.count
            if count == mark:
                return False
            if ignore is None or count - mark > len(self._latest):
                return True
            return any(
                rect is None or not ignore(rect) for number, rect in self._latest if number > mark
            )

    def extent(self, mark: int) -> Rect | None:
        """The box around every change after `mark`; None where one came without a
        rectangle or is too old to be kept (then it may have been anywhere), or none came."""
        with self._lock:
            if self.count == mark or self.count - mark > len(self._latest):
                return None
            rects = [rect for number, rect in self._latest if number > mark]
        if any(rect is None for rect in rects):
            return None
        return bounding(rect for rect in rects if rect is not None)

    def _add_waiter(self, waiter: Waiter) -> None:
        with self._lock:
            self._waiters.append(waiter)

    def _drop_waiter(self, waiter: Waiter) -> None:
        with self._lock:
            if waiter in self._waiters:
                self._waiters.remove(waiter)


async def any_change(witnesses: Sequence[Changes], marks: Sequence[int], timeout: float) -> bool:
    """Wait until one of `witnesses` counts past its mark, or `timeout` seconds: whether one
    did. (Every change wakes it; the caller judges whether it mattered.)"""
    if any(w.count != mark for w, mark in zip(witnesses, marks, strict=True)):
        return True
    if timeout <= 0 or not witnesses:
        if timeout > 0:
            await asyncio.sleep(timeout)
        return False
    loop = asyncio.get_running_loop()
    future: asyncio.Future[None] = loop.create_future()
    waiter = (loop, future)
    for witness in witnesses:
        witness._add_waiter(waiter)
    try:
        # Counted again now the waiter is in: a bump between the check and here woke nobody.
        if any(w.count != mark for w, mark in zip(witnesses, marks, strict=True)):
            return True
        try:
            await asyncio.wait_for(asyncio.shield(future), timeout)
        except TimeoutError:
            return False
        return True
    finally:
        for witness in witnesses:
            witness._drop_waiter(waiter)
        if not future.done():
            future.cancel()


def caret_like(rect: Rect) -> bool:
    """A sliver the size of a text caret: its blink is drawn, and announced by nothing."""
    return 0 < rect.width <= CARET_WIDTH and 0 < rect.height <= CARET_HEIGHT


def _wake(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
