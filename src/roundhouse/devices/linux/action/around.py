"""The look around every action of the desktop tools, and the connections it goes through.

Each tool call sees the desktop through one Sight: the windows are listed once before an
action, and everything in the call that needs them (the window it names, its control, the
look before) is handed that list; once the action has settled they are listed once more
for the look after it, and once at the end of the late-change watch, only when that look
saw nothing. On KDE each listing runs a KWin script; a call used to list them up to 18
times.

What an action did is judged from those looks (effects.py, effects_read.py): "confirmed"
or "not seen", and a line saying what. The tools themselves are observing.py's (the data
collection) and acting.py's (the actions); each holds the one `Around` of its DesktopTools
(tools.py) and runs through it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any, TypeVar

from PIL import Image

from roundhouse.config import Settings
from roundhouse.core.polling import within_async
from roundhouse.devices.contract import Control, Rect, WindowInfo
from roundhouse.devices.linux.action.effects import Look, effect_of
from roundhouse.devices.linux.action.effects_read import TEXT_LIMIT, TextOf, look
from roundhouse.devices.linux.action.settle import (
    Pixels,
    Settled,
    Watch,
    frame,
    own_feedback,
    settle,
    wait_quiet,
)
from roundhouse.devices.linux.apps.launch import Launcher
from roundhouse.devices.linux.atspi.bus import AtspiError
from roundhouse.devices.linux.atspi.seam import AccessibleTree
from roundhouse.devices.linux.desktops.desktop import Desktop
from roundhouse.devices.linux.display.base import (
    DisplayServer,
    PositionsUnknown,
    WindowError,
    Windows,
    describe,
)
from roundhouse.devices.linux.display.changes import any_change
from roundhouse.devices.linux.person import Desk, SentAsOurs

log = logging.getLogger(__name__)
T = TypeVar("T")

HELD_LIMIT = 0.5  # seconds a control acted on is waited on while it says it is pressed


class Sight:
    """The windows as one tool call sees them: listed once before it acts (`listed`), and
    once more after (`relist`), whatever in the call asks."""

    def __init__(self, windows: Windows) -> None:
        self._windows = windows
        self._listed: list[WindowInfo] | None = None

    def listed(self) -> list[WindowInfo]:
        if self._listed is None:
            self._listed = self._windows.list_windows()
        return self._listed

    def relist(self) -> list[WindowInfo]:
        """The windows now, after the call acted; what follows in the call sees these."""
        self._listed = None
        return self.listed()

    def window(self, window_id: int | None) -> WindowInfo:
        """The window named, else the active one; WindowError naming the windows there are."""
        listed = self.listed()
        if window_id is not None:
            found = next((window for window in listed if window.xid == window_id), None)
            # Not in this list: the server says (X11 looks again, past openbox's empty
            # instant) or names the windows there are.
            return found if found is not None else self._windows.get(window_id)
        active = next((window for window in listed if window.active), None)
        if active is None:
            raise WindowError(f"no window is active; give window_id (windows: {describe(listed)})")
        return active


class Around:
    """The tools' connections, and the look and settle around each action: one per
    DesktopTools, shared by its observing and acting halves."""

    def __init__(
        self,
        desktop: Desktop,
        settings: Settings,
        *,
        display: DisplayServer,
        tree: AccessibleTree | None,
    ) -> None:
        self.desktop = desktop
        self.settings = settings
        self.display = display
        self.screen = display.screen
        # Whose the desktop is: asked before every action (tools.desktop_tools), told
        # after every input sent.
        self.desk = Desk(display.watch, settings.desktop.hand_back_after)
        self.input = SentAsOurs(display.input, self.desk)
        self.windows = display.windows
        self.launcher = Launcher(
            display.windows, desktop.env, desktop.app_command, startup=display.startup
        )
        self.tree = tree  # None: no AT-SPI bus; screenshots and coordinates still work
        # False: the settle compares pixels whatever the session tells, and every read is
        # fresh, as before there were witnesses (bench sessions measures both in one run).
        self.witnessed = True
        # False: a left click always goes by the control's action where it has one, as
        # before the pointer was preferred (pointing.py; bench sessions measures both).
        self.pointer_clicks = True
        # False: what a clicked control draws on itself alone (its hover, its press) is
        # waited out like any change, as before (settle.py; bench sessions measures both).
        self.spare_feedback = True

    async def close(self) -> None:
        if self.tree is not None:
            await self.tree.close()
        self.launcher.close()
        self.display.close()  # a display that died: closing cannot fail

    def sight(self) -> Sight:
        """A fresh view of the windows, for one tool call."""
        return Sight(self.windows)

    def positions_known(self) -> bool:
        """Whether the session says where its windows are: where it does not, their
        rectangles are the applications' own, and no mark or click can be placed by them."""
        return not any(isinstance(missing, PositionsUnknown) for missing in self.display.missing)

    async def window_request(self, request: Awaitable[T]) -> T:
        """A request to the window manager (activate, close), after which what came is
        the person's as after our input (person.SentAsOurs): Mutter resets its idle time
        as it activates a window, and that was taken for the person's input."""
        try:
            return await request
        finally:
            await asyncio.to_thread(self.desk.after_action)

    async def observed(
        self,
        sight: Sight,
        act: Callable[[], Awaitable[object]],
        window: WindowInfo | None,
        *,
        target: Control | None = None,
        typed: str | None = None,
        focused_text: bool = False,
        settle_from_start: bool = True,
        controls: bool = True,
        clicked: Rect | None = None,
    ) -> dict[str, Any]:
        """Run `act` in `window` (default: the active one), wait for the screen to settle,
        and say what came of it, read from the window list and the accessibility tree
        (effects.py): the result's "effect" is "confirmed" or "not seen", "seen" says what.

        With `typed`, the text was meant for `target` (else for the focused control);
        `focused_text` also compares the focused control's text (keys may edit it).
        Without `controls`, only the window list is compared, and at once.
        `clicked` is the rectangle of the control a click acts on: what is drawn there
        alone is its own feedback, which the settle does not wait out (settle.py).
        """
        text_of = None
        if target is not None and typed is not None:
            text_of = TextOf.of(target.id, target.role, target.name)
        # Where the target's own text cannot be read, what was typed is looked for in the
        # focused control's (effects_read.look).
        wants_text = focused_text or typed is not None
        before = await look(
            sight.listed(),
            self.tree,
            window,
            text_of=text_of,
            focused_text=wants_text,
            controls=controls,
            fresh=not self.witnessed,
        )
        watch = self._watch(before, target, clicked)
        marks = watch.marks()
        pixels = frame(self.screen) if settle_from_start and watch.screen is None else None
        await act()
        if not settle_from_start:
            marks = watch.marks()
        if before.text is not None:
            text_of = TextOf.seen(before.text)  # the same control after, even if focus moved

        async def look_after(listed: Sequence[WindowInfo]) -> Look:
            return await look(
                listed,
                self.tree,
                window_after(before, listed),
                text_of=text_of,
                focused_text=wants_text,
                text_limit=max(TEXT_LIMIT, len(typed or "") + 200),
                controls=controls,
                fresh=not self.witnessed,
            )

        ahead = LookAhead(lambda: look_after(sight.relist()))
        try:
            settled = await self.wait_settled(watch, marks, pixels, ahead.begin)
            listed = sight.relist()
            taken = await ahead.taken(settled.quiet_from, listed)
            after = taken if taken is not None else await look_after(listed)
        finally:
            ahead.drop()
        target_id = target.id if target else None
        effect = effect_of(before, after, typed=typed, target=target_id)
        if not effect.seen and controls:
            # Nothing seen yet: the screen is watched for the rest of the grace. A change
            # that shows nothing does not end it: LibreOffice repaints its Save dialog's
            # button at once, and opens the format question 0.2 s later.
            started = time.monotonic()
            deadline = started + self.settings.desktop.effect_grace
            while (
                not effect.seen
                and time.monotonic() < deadline
                and await self._changes_late(sight, after.windows, watch, deadline)
            ):
                later = await self.wait_settled(self._watch(after, None, clicked), None, None)
                waited = (time.monotonic() - started) * 1000
                settled = Settled(settled.elapsed_ms + waited, True, later.timed_out)
                started = time.monotonic()
                after = await look_after(sight.relist())
                effect = effect_of(before, after, typed=typed, target=target_id)
        return {**effect.as_result(), **_settled(settled)}

    def _watch(self, seen: Look, target: Control | None, clicked: Rect | None = None) -> Watch:
        """What tells that the application of the window `seen` is done with an action:
        the screen's account of what it draws, what the application announces, whether
        the control acted on says it is pressed where it did not before, and where the
        control clicked (`clicked`) draws its own feedback."""
        if not self.witnessed:
            return Watch()
        announcing = None
        if self.tree is not None and seen.window is not None:
            announcing = self.tree.announcing(seen.window)
        held = None
        if target is not None and self.tree is not None:
            node = (seen.nodes or {}).get(target.id)
            if node is None or "pressed" not in node.states:
                held = _Held(self.tree, target.id).pressed
        drawn = self.display.drawn
        feedback = own_feedback(clicked) if clicked and self.spare_feedback else None
        # Pixels are looked at where the screen's rectangles are coarse, and on X11 where
        # a box drawn may hold both the control and a caret.
        looked = drawn is not None and (not drawn.exact or feedback is not None)
        return Watch(
            screen=drawn,
            app=announcing.changes if announcing else None,
            caught_up=announcing.caught_up if announcing else None,
            held=held,
            pixels=Pixels(self._grab, self.screen.size, _acted_on(seen)) if looked else None,
            feedback=feedback,
        )

    def _grab(self, area: Rect | None) -> Image.Image:
        """The settle's look at the pixels: the whole desktop's, or an area's."""
        return self.screen.desktop() if area is None else self.screen.region(area)

    async def _changes_late(
        self, sight: Sight, seen: Sequence[WindowInfo], watch: Watch, deadline: float
    ) -> bool:
        """Whether the screen changes before `deadline` (monotonic), or the windows differ
        then from `seen` (the last look's): the screen is watched, and the windows listed
        once, at the end (a window that opens or closes changes the screen)."""
        if watch.screen is not None and self.witnessed:
            # The control clicked's own feedback (its hover fading out) is no late answer.
            drawn = Watch(screen=watch.screen, pixels=watch.pixels, feedback=watch.feedback)
            marks = drawn.marks()
            while (remaining := deadline - time.monotonic()) > 0:
                counts = drawn.marks()
                if await drawn.changed_since(marks, answer=True):
                    return True
                await any_change(drawn.witnesses, counts, remaining)
            if await drawn.changed_since(marks, answer=True):
                return True
        else:
            pixels = frame(self.screen)
            late = await within_async(
                lambda: frame(self.screen) != pixels,
                deadline - time.monotonic(),
                every=0.05,
                pause_first=True,
            )
            if late:
                return True
        return _window_states(sight.relist()) != _window_states(seen)

    async def wait_settled(
        self,
        watch: Watch | None,
        marks: tuple[int, ...] | None,
        pixels: bytes | None,
        ahead: Callable[[], object] | None = None,
    ) -> Settled:
        """Wait for the application to be done (settle.py): by what the screen and the
        application tell where the screen tells, else by the screen's pixels. Without
        `marks`, from now. `ahead`: settle.settle's."""
        desktop = self.settings.desktop
        if watch is None:
            watch = Watch(screen=self.display.drawn if self.witnessed else None)
        if watch.screen is None:
            return await wait_quiet(self.screen, before=pixels, timeout=desktop.settle_timeout)
        return await settle(
            watch,
            watch.marks() if marks is None else marks,
            timeout=desktop.settle_timeout,
            ahead=ahead,
        )


class LookAhead:
    """The look after an action, begun while the settle waits out the last of its gap
    (settle.settle's `ahead`), so that the read and the wait overlap: ~20 ms of every
    action on sway and KDE, where a read of GNOME Calculator takes 20-30 ms. The look
    stands where it began after the last change the settle saw, and the windows are
    listed the same after; else the look is taken again."""

    def __init__(self, take: Callable[[], Awaitable[Look]]) -> None:
        self._take = take
        self._task: asyncio.Task[Look] | None = None
        self._began = 0.0

    def begin(self) -> None:
        self.drop()  # begun before a change the settle saw since: stale
        self._began = time.monotonic()
        self._task = asyncio.ensure_future(self._take())

    async def taken(self, quiet_from: float | None, listed: Sequence[WindowInfo]) -> Look | None:
        """The look begun, where it stands (the class docstring); None where it does not."""
        task = self._task
        if task is None or quiet_from is None or self._began < quiet_from:
            return None
        self._task = None
        try:
            seen = await task
        except (AtspiError, WindowError, OSError) as error:
            log.debug("the look ahead failed, taken again: %s", error)
            return None
        return seen if seen.windows == tuple(listed) else None

    def drop(self) -> None:
        task, self._task = self._task, None
        if task is None:
            return
        if not task.done():
            task.cancel()
        elif not task.cancelled() and task.exception() is not None:
            log.debug("a look ahead dropped: %s", task.exception())


class _Held:
    """Whether a control acted on says it is still pressed: Qt's click through its action
    holds a button or box down 100 ms before it clicks, GTK 4's 250 ms, drawing and
    announcing nothing meanwhile. Asked for HELD_LIMIT seconds at most (a toggle button
    that stays pressed is not waited on longer)."""

    def __init__(self, tree: AccessibleTree, node: str) -> None:
        self._tree = tree
        self._node = node
        self._since: float | None = None

    async def pressed(self) -> bool:
        now = time.monotonic()
        if self._since is None:
            self._since = now
        if now - self._since > HELD_LIMIT:
            return False
        try:
            return "pressed" in await self._tree.states(self._node)
        except AtspiError:
            return False  # gone: nothing is held


def window_after(before: Look, listed: Sequence[WindowInfo]) -> WindowInfo | None:
    """The window to read after an action: the one read before, unless the action made
    another active (a dialog that opened, a window that closed)."""
    active = next((window for window in listed if window.active), None)
    was_active = next((window.xid for window in before.windows if window.active), None)
    if before.window is None or (active is not None and active.xid != was_active):
        return active
    return next((window for window in listed if window.xid == before.window), active)


def _window_states(windows: Iterable[WindowInfo]) -> set[tuple[int, str, bool]]:
    return {(window.xid, window.title, window.active) for window in windows}


def _settled(settled: Settled) -> dict[str, Any]:
    return {
        "settle_ms": round(settled.elapsed_ms, 1),
        "screen_changed": settled.changed,
        "still_changing": settled.timed_out,
    }


def _acted_on(seen: Look) -> Rect | None:
    """Where the window acted on is: the one whose controls were read, else the active one."""
    for window in seen.windows:
        if window.xid == seen.window or (seen.window is None and window.active):
            return window.rect
    return None
