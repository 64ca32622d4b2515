"""Reads kept while nothing changes (atspi/kept.py) and the witnesses they ask (changes.py),
without a desktop: every witness that reports a change makes the next read a fresh one, a
caret's blink over the focused control does not, and an application that does not answer
is read again."""

from __future__ import annotations

import asyncio
import threading

from roundhouse.devices.contract import Rect, WindowInfo
from roundhouse.devices.linux.atspi.kept import KeptReads
from roundhouse.devices.linux.display.changes import KEPT, Changes, any_change, caret_like

APP = ":1.42"
WINDOW = WindowInfo(
    xid=7,
    title="Notes",
    application="gedit",
    pid=100,
    rect=Rect(left=0, top=0, right=800, bottom=600),
    active=True,
)
FIELD = Rect(left=100, top=100, right=500, bottom=130)  # the focused control
CARET = Rect(left=200, top=104, right=203, bottom=126)


class Reader:
    """KeptReads over witnesses the test bumps, and an application whose answer it sets."""

    def __init__(self) -> None:
        self.drawn = Changes("screen")
        self.heard: dict[str, Changes] = {}
        self.answers = True
        self.kept = KeptReads(self.drawn, self.changes, self.caught_up)

    def changes(self, app: str) -> Changes:
        return self.heard.setdefault(app, Changes(app))

    async def caught_up(self, app: str) -> bool:
        return self.answers

    def read(self, value: str, window: WindowInfo = WINDOW) -> None:
        """A read made now, kept."""
        marks = self.kept.marks(APP)
        self.kept.keep("controls", value, window, APP, marks, FIELD)

    async def get(self, window: WindowInfo = WINDOW) -> object | None:
        return await self.kept.get("controls", window)


async def test_a_read_is_served_while_nothing_changes() -> None:
    reader = Reader()
    reader.read("the controls")
    assert await reader.get() == "the controls"
    assert await reader.get() == "the controls"
    assert reader.kept.served == 2


async def test_an_announcement_makes_the_next_read_fresh() -> None:
    reader = Reader()
    reader.read("before")
    reader.changes(APP).bump()
    assert await reader.get() is None
    assert await reader.get() is None  # forgotten: nothing is served until read again


async def test_another_applications_announcement_changes_nothing() -> None:
    reader = Reader()
    reader.read("before")
    reader.changes(":1.99").bump()
    assert await reader.get() == "before"


async def test_anything_drawn_makes_the_next_read_fresh() -> None:
    reader = Reader()
    reader.read("before")
    reader.drawn.bump(Rect(left=0, top=0, right=800, bottom=600))
    assert await reader.get() is None
    reader.read("after")
    reader.drawn.bump()  # a witness that says not where: a change all the same
    assert await reader.get() is None


async def test_a_caret_blinking_in_the_focused_control_is_no_change() -> None:
    reader = Reader()
    reader.read("before")
    for _ in range(5):
        reader.drawn.bump(CARET)
    assert await reader.get() == "before"
    # The same sliver elsewhere is a change: a caret belongs to the focused control.
    reader.drawn.bump(Rect(left=600, top=300, right=602, bottom=320))
    assert await reader.get() is None


async def test_an_application_that_does_not_answer_is_read_again() -> None:
    reader = Reader()
    reader.read("before")
    reader.answers = False
    assert await reader.get() is None


async def test_an_announcement_heard_while_asking_counts() -> None:
    """The answer comes after every event sent before it: one heard meanwhile counts."""
    reader = Reader()
    reader.read("before")

    async def answering(app: str) -> bool:
        reader.changes(app).bump()  # arrived just before the answer
        return True

    reader.kept = KeptReads(reader.drawn, reader.changes, answering)
    reader.read("before")
    assert await reader.get() is None


async def test_a_window_moved_retitled_or_deactivated_is_read_again() -> None:
    for changed in (
        WINDOW.model_copy(update={"rect": Rect(left=10, top=0, right=810, bottom=600)}),
        WINDOW.model_copy(update={"title": "*Notes"}),
        WINDOW.model_copy(update={"active": False}),
    ):
        reader = Reader()
        reader.read("before")
        assert await reader.get(changed) is None


async def test_nothing_is_kept_where_the_screen_tells_nothing() -> None:
    kept = KeptReads(None, Reader().changes, None)
    assert not kept.enabled and kept.marks(APP) is None
    kept.keep("controls", "before", WINDOW, APP, kept.marks(APP), FIELD)
    assert await kept.get("controls", WINDOW) is None


def test_changes_count_and_tell_what_mattered() -> None:
    changes = Changes("screen")
    mark = changes.mark()
    assert not changes.since(mark)
    changes.bump(CARET)
    assert changes.since(mark) and not changes.since(mark, caret_like)
    changes.bump(FIELD)
    assert changes.since(mark, caret_like)
    # Past what is kept, the rectangles are forgotten: any change then counts.
    mark = changes.mark()
    for _ in range(KEPT + 1):
        changes.bump(CARET)
    assert changes.since(mark, caret_like)


async def test_a_change_from_another_thread_wakes_a_waiter() -> None:
    changes = Changes("screen")
    mark = changes.mark()
    timer = threading.Timer(0.05, changes.bump)
    timer.start()
    try:
        assert await any_change([changes], [mark], 5.0)
    finally:
        timer.cancel()
    assert not await any_change([changes], [changes.mark()], 0.05)
    await asyncio.sleep(0)  # nothing left scheduled on the loop
