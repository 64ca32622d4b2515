"""Reads kept warm: a window read again while nothing changed is served what was read,
after one check instead of a walk.

A cache kept up to date field by field from AT-SPI's change events was tried before, and
missed what GTK does not announce: a widget mapped or unmapped changes "showing", a window
activated changes its focus widget's "focused", without an event. So nothing is patched
here: a whole read is kept, and served again only while three witnesses say nothing a
person could see has changed since it began, each asked in the one check:

- the application announced nothing (atspi/events.py), once it has answered a question
  asked through the bus (`caught_up`: its events sent before are heard by then);
- the screen drew nothing (the display server's `drawn`, changes.py): every unannounced
  change to what shows is drawn, a focus ring or a mapped widget. A text caret's blink is
  drawn too, and announced by nothing; a sliver the size of a caret (changes.caret_like)
  over the focused control's rectangle is taken for one;
- the window is the same: its rectangle, title and activity, as the window list says.

Where the screen tells nothing (the fake display, GNOME without its screen cast), or the
bus does not carry the events, nothing is kept. What is kept is handed out as it was read:
callers do not change it (they make new lists: tree.keep_numbers).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass
from typing import Generic, TypeVar

from roundhouse.devices.contract import Rect, WindowInfo
from roundhouse.devices.linux.display.changes import Changes, caret_like

log = logging.getLogger(__name__)
T = TypeVar("T")
MAX_KEPT = 64  # reads kept (kinds × windows); the oldest goes first


@dataclass(frozen=True)
class Marks:
    """The witnesses' counts when a read began."""

    drawn: int
    heard: int


@dataclass(frozen=True)
class Kept(Generic[T]):
    value: T
    window: WindowInfo
    app: str
    marks: Marks
    caret_in: Rect | None  # the focused control's rectangle: a caret blinks there


class KeptReads:
    """The reads of one AT-SPI connection, kept while nothing changes."""

    def __init__(
        self,
        drawn: Changes | None,
        heard: Callable[[str], Changes] | None,
        caught_up: Callable[[str], Awaitable[bool]] | None,
    ) -> None:
        self._drawn = drawn
        self._heard = heard
        self._caught_up = caught_up
        self._kept: dict[Hashable, Kept[object]] = {}
        self.served = 0  # reads served from here: the benchmark and tests read it

    @property
    def enabled(self) -> bool:
        return self._drawn is not None and self._heard is not None

    def marks(self, app: str) -> Marks | None:
        """The witnesses' counts now: take them before a read begins."""
        if self._drawn is None or self._heard is None:
            return None
        return Marks(self._drawn.mark(), self._heard(app).mark())

    def keep(
        self,
        key: Hashable,
        value: T,
        window: WindowInfo,
        app: str,
        marks: Marks | None,
        caret_in: Rect | None,
    ) -> None:
        if marks is None:
            return
        self._kept.pop(key, None)
        if len(self._kept) >= MAX_KEPT:
            del self._kept[next(iter(self._kept))]
        self._kept[key] = Kept(value, window, app, marks, caret_in)

    def forget(self) -> None:
        self._kept.clear()

    async def get(self, key: Hashable, window: WindowInfo) -> object | None:
        """What was read under `key`, if nothing has changed since (the module docstring's
        check); None otherwise, and it is forgotten."""
        kept = self._kept.get(key)
        if kept is None:
            return None
        why = await self._changed(kept, window)
        if why is not None:
            log.debug("%s read again: %s", key, why)
            self._kept.pop(key, None)
            return None
        self.served += 1
        return kept.value

    async def _changed(self, kept: Kept[object], window: WindowInfo) -> str | None:
        """What changed since `kept` was read; None: nothing."""
        if self._drawn is None or self._heard is None:
            return "nothing tells"
        blink = _caret_in(kept.caret_in)
        if kept.window != window:
            return "the window moved or changed"
        if self._drawn.since(kept.marks.drawn, blink):
            return "the screen drew"
        if self._caught_up is not None and not await self._caught_up(kept.app):
            return "the application did not answer"  # read it: the read says so
        # Asked after the answer: the screen may have drawn meanwhile too.
        if self._heard(kept.app).since(kept.marks.heard):
            return "the application announced a change"
        if self._drawn.since(kept.marks.drawn, blink):
            return "the screen drew"
        return None


def _caret_in(area: Rect | None) -> Callable[[Rect], bool] | None:
    """What a caret's blink inside `area` looks like to the screen's witness."""
    if area is None:
        return None

    def blink(rect: Rect) -> bool:
        return caret_like(rect) and _touches(rect, area)

    return blink


def _touches(rect: Rect, area: Rect) -> bool:
    """Whether the two overlap: LibreOffice draws its caret taller than the paragraph it is
    in (a heading at y 217-261, its caret at 258-285)."""
    return (
        rect.left < area.right
        and area.left < rect.right
        and rect.top < area.bottom
        and area.top < rect.bottom
    )
