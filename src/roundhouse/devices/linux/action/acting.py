"""What the desktop tools do: the actions, each run inside the look of around.py, which says
what came of it; the controls they act on are named as observing.py last listed them.

Every window action's result says its `route`, how it reached the application: the
accessibility interfaces first where a control offers them (its action, EditableText,
Value, GrabFocus), the pointer and the keyboard (display/pointer.py, keyboard.py) as the
fallback. A point off the screen is the pointer's to refuse, before anything is sent.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any, Literal

from roundhouse.core.polling import within_async
from roundhouse.devices.contract import Control, Rect, WindowInfo
from roundhouse.devices.linux.action.around import Around, Sight
from roundhouse.devices.linux.action.observing import Observing, ToolError, brief
from roundhouse.devices.linux.action.pointing import under
from roundhouse.devices.linux.action.routes import Routes
from roundhouse.devices.linux.apps.launch import LAUNCH_TIMEOUT
from roundhouse.devices.linux.atspi.constants import EDITABLE_TEXT, VALUE
from roundhouse.devices.linux.display.base import (
    Button,
    RouteRefused,
    WindowError,
    find_window,
)
from roundhouse.devices.linux.display.keys import LayoutError

log = logging.getLogger(__name__)

Direction = Literal["up", "down", "left", "right"]

# Actions that mean "what a left click does" on the roles that have them.
_CLICK_ACTIONS = ("click", "press", "activate", "toggle", "jump", "open", "select")
# Text fields: a click places the caret; their "activate" action would press Enter.
_TEXT_ROLES = {"text", "entry", "password text", "terminal", "document text", "paragraph"}
CLOSE_WAIT = 1.0  # seconds close_window waits for the window to go (one that asks first stays)
LOADING_WAIT = 10.0  # seconds launch_application waits for a window titled "Loading…" to load


class Acting:
    """The action tools, run through the look of `around`, on the controls `observing`
    lists."""

    def __init__(self, around: Around, observing: Observing) -> None:
        self.around = around
        self.observing = observing
        self.routes = Routes(around, observing)

    async def select_window(
        self, window_id: int | None = None, title: str | None = None
    ) -> dict[str, Any]:
        """Bring a window to the front and give it the keyboard focus.

        Name it by window_id (from list_windows) or by title (a part of it is enough).
        """
        if window_id is None and title is None:
            raise ToolError("give window_id or title")
        windows = self.around.windows.list_windows()
        xid = window_id if window_id is not None else find_window(windows, title or "").xid
        activated = await self.around.window_request(self.around.windows.activate(xid))
        return activated.model_dump(mode="json")

    async def launch_application(
        self, name: str, timeout: float = LAUNCH_TIMEOUT
    ) -> dict[str, Any]:
        """Start an application by what it is ("text editor", "web browser"), its name from
        list_applications ("gedit") or a command line ("mousepad /tmp/notes.txt"), and wait
        for its window.

        A kind starts the user's default application for it first. The result is the
        window, with `started` (what opened it) and `failed` (what was tried before, and
        why it opened no window).
        """
        launched = await self.around.launcher.launch(name, timeout=timeout)
        # The window manager focuses a new window when it gets to it; the next tool call
        # (window_id omitted = the active window) must find this one active.
        window = await self.around.window_request(self.around.windows.activate(launched.window.xid))
        window = await self._loaded(window)
        await self.around.wait_settled(None, None, None)
        return {
            **window.model_dump(mode="json"),
            "started": launched.started,
            "failed": list(launched.failed),
        }

    async def _loaded(self, window: WindowInfo) -> WindowInfo:
        """The window once its title no longer says it is loading. Nautilus 48 shows a
        folder's window titled "Loading…" (GNOME's ellipsis: in progress) and does nothing
        of New Folder's ctrl+shift+n until the folder is read; under load that takes
        seconds, and a key pressed at once is lost. Bounded by LOADING_WAIT."""

        def loaded() -> bool:
            nonlocal window
            if not _loading(window.title):
                return True
            try:
                window = self.around.windows.get(window.xid)
            except WindowError:
                return True  # gone: what happens next says so
            return not _loading(window.title)

        await within_async(loaded, LOADING_WAIT, every=0.1)
        return window

    async def click_control(
        self,
        label: int | None = None,
        control_id: str | None = None,
        window_id: int | None = None,
        button: Button = "left",
        double: bool = False,
    ) -> dict[str, Any]:
        """Click a control, by default once with the left button.

        Name it by `label` (its number in get_controls) or `control_id`. A plain left click
        uses the control's own accessibility action when it has one (works even when the
        control is covered), unless the pointer is as sure to hit it and faster; otherwise
        the centre is clicked.
        """
        sight = self.around.sight()
        window = sight.window(window_id)
        control = await self.observing.control(label, control_id, window)
        action = _click_action(control) if button == "left" and not double else None
        pointer_first = action is not None and await self.routes.pointer_first(
            control, window, sight
        )
        route = "pointer"

        async def act() -> None:
            nonlocal route
            if pointer_first:
                try:
                    await asyncio.to_thread(self.around.input.click, *self.routes.position(control))
                    return
                except RouteRefused as refused:  # a session that refuses our input
                    log.info("%s: pointer refused (%s); action next", brief(control), refused)
            if action is not None and await self.routes.do_action(control, action):
                route = f"action:{action}"
                return
            x, y = self.routes.position(control)
            await asyncio.to_thread(self.around.input.click, x, y, button, 2 if double else 1)

        # A button's hover and press are drawn on it alone; a text field's caret is no such.
        clicked = control.rect if _click_action(control) is not None else None
        done = await self.around.observed(sight, act, window, target=control, clicked=clicked)
        return {"control": brief(control), "route": route, **done}

    async def click_coordinates(
        self,
        x: int,
        y: int,
        button: Button = "left",
        double: bool = False,
        triple: bool = False,
        hold: str = "",
    ) -> dict[str, Any]:
        """Click at screen coordinates (pixels from the desktop's top-left corner).
        triple: three clicks (a line or paragraph selected); hold: keys held down through
        the click ("shift", "ctrl")."""
        count = 3 if triple else 2 if double else 1
        sight = self.around.sight()
        done = await self.around.observed(
            sight,
            lambda: asyncio.to_thread(
                self._holding, hold, self.around.input.click, x, y, button, count
            ),
            None,
            clicked=self._clicked_at(sight, x, y),
        )
        return {"route": "pointer", **done}

    async def set_text(
        self,
        text: str,
        label: int | None = None,
        control_id: str | None = None,
        window_id: int | None = None,
    ) -> dict[str, Any]:
        """Replace the whole text of an editable control at once, without the keyboard.

        Name the control by label or control_id. A control that cannot be set through its
        accessibility interfaces (text, or value for a number in a slider or spin box) is
        focused, its text selected with ctrl+a and the new one typed.
        """
        sight = self.around.sight()
        window = sight.window(window_id)
        control = await self.observing.control(label, control_id, window)
        route = "keyboard"

        async def act() -> None:
            nonlocal route
            found = await self.routes.interfaces(control)
            if EDITABLE_TEXT in found and await self.routes.set_editable(control, text):
                route = "editable-text"
            elif VALUE in found and (number := _number(text)) is not None:
                if await self.routes.set_value(control, number):
                    route = "value"
            if route == "keyboard":
                route = f"{await self.routes.focus(control, found)}+keyboard"
                await asyncio.to_thread(self.around.input.press_keys, "ctrl+a")
                await asyncio.to_thread(self.around.input.type_text, text)

        done = await self.around.observed(sight, act, window, target=control, typed=text)
        return {"control": brief(control), "route": route, **done}

    async def type_text(
        self, text: str, label: int | None = None, control_id: str | None = None
    ) -> dict[str, Any]:
        """Type text with the keyboard (any Unicode; "\\n" is Enter) into the focused
        control, or into the control named, which is given the focus first."""
        sight = self.around.sight()
        control: Control | None = None
        if label is not None or control_id is not None:
            control = await self.observing.control(label, control_id, sight.window(None))
        route = "keyboard"

        async def act() -> None:
            nonlocal route
            if control is not None:
                found = await self.routes.interfaces(control)
                route = f"{await self.routes.focus(control, found)}+keyboard"
            try:
                await asyncio.to_thread(self.around.input.type_text, text)
            except LayoutError:
                route = await self.routes.insert(sight, text, control)

        done = await self.around.observed(sight, act, None, target=control, typed=text)
        return {"route": route, **done}

    async def press_keys(self, keys: str) -> dict[str, Any]:
        """Press a key or key combination ("Return", "ctrl+s", "alt+F4", "ctrl+shift+t");
        several, separated by spaces, are pressed in turn."""
        return await self._act(
            lambda: self.around.input.press_keys(keys), "keyboard", focused_text=True
        )

    async def close_window(self, window_id: int | None = None) -> dict[str, Any]:
        """Close a window (default: the active one) as its title bar's close button does:
        the application may ask first ("Save changes?")."""
        sight = self.around.sight()
        window = sight.window(window_id)
        # Asked of the display server, not pressed as alt+F4: a Wayland compositor may bind
        # no such key (sway does not; KWin's shortcut daemon is not part of a headless KWin).
        # A window that asks first stays: CLOSE_WAIT is what a closing one is given.
        done = await self.around.observed(
            sight,
            lambda: self.around.window_request(
                self.around.windows.close_window(window.xid, timeout=CLOSE_WAIT)
            ),
            window,
            controls=False,
        )
        return {"window": window.title, "route": "window-manager", **done}

    async def scroll(
        self, x: int, y: int, direction: Direction = "down", amount: int = 3, hold: str = ""
    ) -> dict[str, Any]:
        """Scroll the mouse wheel `amount` notches at (x, y); hold: keys held down
        meanwhile ("ctrl" zooms in many applications)."""
        dx = {"left": -amount, "right": amount}.get(direction, 0)
        dy = {"up": -amount, "down": amount}.get(direction, 0)
        return await self._act(
            lambda: self._holding(hold, self.around.input.scroll, x, y, dx, dy), "pointer"
        )

    async def drag(
        self, start_x: int, start_y: int, end_x: int, end_y: int, button: Button = "left"
    ) -> dict[str, Any]:
        """Drag: press the mouse button at (start_x, start_y), move to (end_x, end_y) and
        release it there."""
        return await self._act(
            lambda: self.around.input.drag((start_x, start_y), (end_x, end_y), button), "pointer"
        )

    async def wait(self, seconds: float) -> dict[str, Any]:
        """Wait (up to 60 s) for something slow to happen, then for the screen to settle."""
        if not 0 <= seconds <= 60:
            raise ToolError("seconds must be between 0 and 60")
        # Waiting acts on nothing: what changed meanwhile is read from the window list only,
        # with no late watch. The engine settles with wait(0) at each subtask's end; reading
        # the tree there cost up to a second, and woke Chromium's accessibility early.
        return await self.around.observed(
            self.around.sight(),
            lambda: asyncio.sleep(seconds),
            None,
            settle_from_start=False,
            controls=False,
        )

    async def _act(
        self, action: Callable[[], None], route: str, focused_text: bool = False
    ) -> dict[str, Any]:
        # Typing a long text or dragging takes a while: keep the event loop (an MCP server's
        # other requests) running meanwhile. The input serialises its calls on its own lock.
        done = await self.around.observed(
            self.around.sight(), lambda: asyncio.to_thread(action), None, focused_text=focused_text
        )
        return {"route": route, **done}

    def _holding(self, keys: str, action: Callable[..., None], *arguments: Any) -> None:
        """`action(*arguments)` with `keys` (one combination, or none) held down around it:
        released even when the action fails, so no key stays down."""
        if not keys:
            action(*arguments)
            return
        self.around.input.keys_down(keys)
        try:
            action(*arguments)
        finally:
            self.around.input.keys_up(keys)

    def _clicked_at(self, sight: Sight, x: int, y: int) -> Rect | None:
        """The rectangle of the button-like control a click at (x, y) lands on, as the
        active window's controls were last listed (what the click was aimed by); None where
        none was listed there."""
        try:
            window = sight.window(None)
        except WindowError:
            return None
        listed = self.observing.last_listed(window)
        if listed is None:
            return None
        buttons = [control for control in listed.controls if _click_action(control) is not None]
        found = under(buttons, x, y)
        return found.rect if found is not None else None


def _number(text: str) -> float | None:
    try:
        return float(text.strip())
    except ValueError:
        return None


def _click_action(control: Control) -> str | None:
    if control.role in _TEXT_ROLES:
        return None
    names = [action.lower() for action in control.actions]
    return next((name for name in _CLICK_ACTIONS if name in names), None)


def _loading(title: str) -> bool:
    """A title that says the window's content is still coming: "Loading…"."""
    return title.strip().casefold() in {"loading…", "loading..."}
