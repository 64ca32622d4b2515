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
from roundhouse.devices.linux.action.pointing import holds_press, pointer_refusal, under
from roundhouse.devices.linux.apps.launch import LAUNCH_TIMEOUT
from roundhouse.devices.linux.atspi.bus import AtspiError
from roundhouse.devices.linux.atspi.constants import COMPONENT, EDITABLE_TEXT, TEXT, VALUE
from roundhouse.devices.linux.display.base import (
    Button,
    PositionsUnknown,
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
FOCUS_WAIT = 1.0  # seconds type_text waits for the control it clicked to take the focus
CARET_WAIT = 0.5  # seconds it waits for the click to move the caret of a text
CLOSE_WAIT = 1.0  # seconds close_window waits for the window to go (one that asks first stays)
LOADING_WAIT = 10.0  # seconds launch_application waits for a window titled "Loading…" to load


class Acting:
    """The action tools, run through the look of `around`, on the controls `observing`
    lists."""

    def __init__(self, around: Around, observing: Observing) -> None:
        self.around = around
        self.observing = observing

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
        pointer_first = action is not None and await self._pointer_first(control, window, sight)
        route = "pointer"

        async def act() -> None:
            nonlocal route
            if pointer_first:
                try:
                    await asyncio.to_thread(self.around.input.click, *self._position(control))
                    return
                except RouteRefused as refused:  # a session that refuses our input
                    log.info("%s: pointer refused (%s); action next", brief(control), refused)
            if action is not None and await self._do_action(control, action):
                route = f"action:{action}"
                return
            x, y = self._position(control)
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
            found = await self._interfaces(control)
            if EDITABLE_TEXT in found and await self._set_editable(control, text):
                route = "editable-text"
            elif VALUE in found and (number := _number(text)) is not None:
                if await self._set_value(control, number):
                    route = "value"
            if route == "keyboard":
                route = f"{await self._focus(control, found)}+keyboard"
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
                route = f"{await self._focus(control, await self._interfaces(control))}+keyboard"
            try:
                await asyncio.to_thread(self.around.input.type_text, text)
            except LayoutError:
                route = await self._insert(sight, text, control)

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

    # ------------------------------------------------------------ the routes

    async def _pointer_first(self, control: Control, window: WindowInfo, sight: Sight) -> bool:
        """Whether the pointer clicks the control in place of its action: where the action
        holds a press first and the pointer is sure to land on it (pointing.py)."""
        if (
            not self.around.pointer_clicks
            or self.around.tree is None
            or not self.around.positions_known()
        ):
            return False
        try:
            toolkit = await self.around.tree.toolkit(control.id)
        except AtspiError as error:
            log.info("%s: toolkit not known (%s); its action clicks", brief(control), error)
            return False
        if not holds_press(toolkit.name, toolkit.version):
            return False
        above = await asyncio.to_thread(self.around.windows.above, window.xid)
        refused = pointer_refusal(control, window, sight.listed(), self.around.screen.size, above)
        if refused is not None:
            log.info("%s: clicked by its action: %s", brief(control), refused)
        return refused is None

    async def _do_action(self, control: Control, action: str) -> bool:
        """Whether the control's named action was done; one it refuses (or lacks) is
        logged, and the pointer clicks instead."""
        if self.around.tree is None:
            return False
        try:
            return await self.around.tree.do_action(control.id, action)
        except AtspiError as error:
            log.info("%s: action %r failed (%s); clicking instead", brief(control), action, error)
            return False

    async def _insert(self, sight: Sight, text: str, control: Control | None) -> str:
        """Text the session's keyboard layout cannot type (a Wayland session reads keys
        with its own keymap), inserted at the caret of the control (else of the focused
        one) through the accessibility tree: the route taken. LayoutError again where
        there is none."""
        if control is None and self.around.tree is not None:
            listed = await self.observing.read_controls(sight.window(None))
            control = next((c for c in listed.controls if "focused" in c.states), None)
        if control is None or self.around.tree is None:
            raise LayoutError(
                f"the keyboard layout cannot type {text!r}, and no focused text field takes "
                "it otherwise: name the field, or use set_text"
            )
        try:
            inserted = await self.around.tree.insert_text(control.id, text)
        except AtspiError as error:
            raise LayoutError(
                f"the keyboard layout cannot type {text!r}, and {brief(control)} takes no "
                f"inserted text ({error}): use set_text"
            ) from None
        if not inserted:
            raise LayoutError(f"{brief(control)} refused the text {text!r}: use set_text")
        return "editable-text"

    async def _interfaces(self, control: Control) -> frozenset[str]:
        if self.around.tree is None:
            return frozenset()
        try:
            return await self.around.tree.interfaces(control.id)
        except AtspiError as error:
            log.info("%s: interfaces not read (%s)", brief(control), error)
            return frozenset()

    async def _set_editable(self, control: Control, text: str) -> bool:
        assert self.around.tree is not None  # (it had interfaces)
        try:
            return await self.around.tree.set_text(control.id, text)
        except AtspiError as error:
            log.info("%s: EditableText refused (%s); typing instead", brief(control), error)
            return False

    async def _set_value(self, control: Control, value: float) -> bool:
        assert self.around.tree is not None  # (it had interfaces)
        try:
            await self.around.tree.set_value(control.id, value)
        except AtspiError as error:
            log.info("%s: Value not set (%s); typing instead", brief(control), error)
            return False
        return True

    async def _focus(self, control: Control, found: frozenset[str]) -> Literal["focus", "pointer"]:
        """Give the control the keyboard focus: none to give where it has it already (the
        caret stays where it is, and no pointer is needed: a person's GNOME before `setup`
        has none), through Component.GrabFocus where it offers it and then says it is
        focused (the caret stays where it was), else with a click on its centre (GTK 4
        refuses GrabFocus)."""
        if await self._has_focus(control):
            return "focus"
        if self.around.tree is not None and COMPONENT in found:
            try:
                grabbed = await self.around.tree.grab_focus(control.id)
            except AtspiError as error:
                log.info("%s: GrabFocus refused (%s); clicking it", brief(control), error)
                grabbed = False
            if grabbed and await self._focus_taken(control):
                return "focus"
        caret = await self._caret(control) if TEXT in found else None
        await asyncio.to_thread(self.around.input.click, *self._position(control))
        await self._focus_taken(control)
        if caret is not None:
            await self._caret_moved(control, caret)
        return "pointer"

    def _position(self, control: Control) -> tuple[int, int]:
        """Where the pointer acts on a control: its centre on the screen. Refused at once,
        naming the fix, where the session does not say where its windows are (a person's
        GNOME before `roundhouse setup gnome`): the rectangle is then the application's
        own, and a click there would land anywhere."""
        for missing in self.around.display.missing:
            if isinstance(missing, PositionsUnknown):
                raise PositionsUnknown(
                    f"{brief(control)} cannot be clicked by the pointer: {missing} (its "
                    "accessibility action, set_text and keys still work)",
                    missing.fix,
                )
        return control.rect.center

    async def _caret(self, control: Control) -> int | None:
        assert self.around.tree is not None  # (it had interfaces)
        try:
            return await self.around.tree.caret(control.id)
        except AtspiError as error:
            log.info("%s: no caret to watch (%s)", brief(control), error)
            return None

    async def _caret_moved(self, control: Control, before: int) -> None:
        """Wait (up to CARET_WAIT s) for a click in a text to move its caret: GTK 4 places it
        a moment after the click, and keys typed at once went where it was before ("more"
        typed into GNOME Text Editor became "m" at the start and "ore" at the end). A click
        where the caret already was moves nothing: then the time is up."""

        async def moved() -> bool:
            return await self._caret(control) != before

        await within_async(moved, CARET_WAIT)

    async def _has_focus(self, control: Control) -> bool:
        if self.around.tree is None:
            return False
        try:
            return "focused" in await self.around.tree.states(control.id)
        except AtspiError:
            return False  # then it is given the focus, as a control that never says so is

    async def _focus_taken(self, control: Control) -> bool:
        """Wait (up to FOCUS_WAIT s) for a control given the focus to say it has it: whether
        it did. Chromium moves the focus a moment after the click: keys typed at once went
        to the field focused before ("Ada" lost its "Ad"). A control that never says so (or
        has no states to ask) is typed into when the time is up."""
        tree = self.around.tree
        if tree is None:
            return False

        async def said() -> Literal["focused", "unknown"] | None:
            try:
                return "focused" if "focused" in await tree.states(control.id) else None
            except AtspiError as error:
                log.info("typing into %s without knowing its focus: %s", brief(control), error)
                return "unknown"  # asking again would not tell

        return await within_async(said, FOCUS_WAIT) == "focused"


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
