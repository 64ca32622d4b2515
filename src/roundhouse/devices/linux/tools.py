"""The desktop device's tools: what an agent (or an MCP client) can observe and do.

    async with open_registry(desktop, settings, extra=shell_tools) as registry:
        result = await registry.call(Command(tool_name="list_windows"), 30)

or, to reach the connections (tests, benchmarks): `async with await DesktopTools.open(
desktop, settings) as tools: registry = desktop_registry(tools, extra=shell_tools)`.

Every tool is a typed method whose docstring is what the model reads. Windows are named
by `window_id` (the X window id from list_windows; omitted = the active window);
controls by their `label` from the latest get_controls of that window (the numbers on
the annotated screenshot) or by their node id. A bad id raises an error naming what
exists: the registry turns it into a failure Result the model can read and correct.
Actions wait for the screen to settle (settle.wait_quiet) before they return.

Screenshots are written to the `path` given (best for logs); without one, the PNG comes
back inline as base64 (for MCP clients on another machine).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import functools
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from pathlib import Path
from typing import Any, Literal

from roundhouse.config import Settings
from roundhouse.core.commands import ToolType
from roundhouse.devices.base import Closing, DeviceLost, Tool, ToolRegistry, make_tool
from roundhouse.devices.contract import (
    DESKTOP_ACTIONS,
    DESKTOP_DATA_COLLECTION,
    Control,
    ControlList,
    ToolName,
    UiNode,
    WindowInfo,
)
from roundhouse.devices.linux.apps.launch import LAUNCH_TIMEOUT, Launcher
from roundhouse.devices.linux.apps.launcher import Applications, application_list
from roundhouse.devices.linux.atspi.client import (
    AtspiClient,
    AtspiError,
    AtspiTimeout,
    TreeLimits,
    ui_tree_json,
)
from roundhouse.devices.linux.atspi.constants import COMPONENT, EDITABLE_TEXT, TEXT, VALUE
from roundhouse.devices.linux.atspi.tree import keep_numbers
from roundhouse.devices.linux.desktops.desktop import Desktop
from roundhouse.devices.linux.display.backends import open_display
from roundhouse.devices.linux.display.base import (
    Button,
    DisplayServer,
    WindowError,
    describe,
    find_window,
)
from roundhouse.devices.linux.display.keys import LayoutError
from roundhouse.devices.linux.effects import Effect, Look, effect_of
from roundhouse.devices.linux.effects_read import TEXT_LIMIT, TextOf, look
from roundhouse.devices.linux.screenshots import (
    Screenshot,
    capture_desktop_png,
    capture_window_png,
)
from roundhouse.devices.linux.settle import Settled, frame, wait_quiet

log = logging.getLogger(__name__)

Direction = Literal["up", "down", "left", "right"]

# Actions that mean "what a left click does" on the roles that have them.
_CLICK_ACTIONS = ("click", "press", "activate", "toggle", "jump", "open", "select")
# Text fields: a click places the caret; their "activate" action would press Enter.
_TEXT_ROLES = {"text", "entry", "password text", "terminal", "document text", "paragraph"}
_MAX_LISTED = 60  # controls named in an error message
FOCUS_WAIT = 1.0  # seconds type_text waits for the control it clicked to take the focus
CARET_WAIT = 0.5  # seconds it waits for the click to move the caret of a text
CLOSE_WAIT = 1.0  # seconds close_window waits for the window to go (one that asks first stays)
LOADING_WAIT = 10.0  # seconds launch_application waits for a window titled "Loading…" to load


class ToolError(RuntimeError):
    """A bad request from the model; the message says what exists instead."""


class DesktopTools(Closing):
    """The tools on one desktop. Build with `await DesktopTools.open(desktop, settings)`."""

    def __init__(
        self,
        desktop: Desktop,
        settings: Settings,
        *,
        display: DisplayServer,
        tree: AtspiClient | None,
    ) -> None:
        self.desktop = desktop
        self.settings = settings
        self.display = display
        self.screen = display.screen
        self.input = display.input
        self.windows = display.windows
        self.launcher = Launcher(display.windows, desktop.env, desktop.app_command)
        self.tree = tree  # None: no AT-SPI bus; screenshots and coordinates still work
        self._controls: dict[int, ControlList] = {}  # the latest get_controls per window

    @classmethod
    async def open(cls, desktop: Desktop, settings: Settings) -> DesktopTools:
        """Connect to the desktop: its display server and, when it has one, AT-SPI."""
        display = open_display(desktop)
        client = AtspiClient(content=display.windows.content)
        tree: AtspiClient | None = client
        try:
            await client.connect(desktop)
        except AtspiError as error:
            log.warning("no control tree on %s: %s", desktop.display, error)
            tree = None
        except BaseException:
            display.close()
            raise
        return cls(desktop, settings, display=display, tree=tree)

    async def close(self) -> None:
        if self.tree is not None:
            await self.tree.close()
        self.launcher.close()
        self.display.close()  # a display that died: closing cannot fail

    # ------------------------------------------------------------ data collection

    async def capture_desktop_screenshot(
        self, path: str | None = None, annotate: bool = False
    ) -> dict[str, Any]:
        """Take a PNG screenshot of the whole desktop.

        annotate: draw a numbered box on each control of the active window (the labels
        of get_controls, which this reads afresh).
        path: file to write the PNG to; without it the PNG is returned as base64.
        """
        controls = (await self._read_controls(self._window(None))).controls if annotate else []
        result = _shot_result(capture_desktop_png(self.screen, controls), path)
        if annotate:
            result["annotated_controls"] = len(controls)
        return result

    async def capture_window_screenshot(
        self,
        window_id: int | None = None,
        path: str | None = None,
        annotate: bool = False,
        as_listed: bool = False,
    ) -> dict[str, Any]:
        """Take a PNG screenshot of one window (default: the active window).

        annotate: draw a numbered box on each control; the numbers are the labels of
        get_controls, which this reads afresh for the window, or with as_listed those of
        the last get_controls of the window (the list a model was given).
        path: file to write the PNG to; without it the PNG is returned as base64.
        """
        window = self._window(window_id)
        controls: list[Control] = []
        if annotate:
            # A window still filling its toolbar (Writer at start) renumbers between two
            # reads: the boxes must carry the numbers of the list the model reads.
            listed = self._controls.get(window.xid) if as_listed else None
            controls = (listed or await self._read_controls(window)).controls
        shot = capture_window_png(self.screen, window, controls)
        result = _shot_result(shot, path)
        result["window_id"] = window.xid
        if annotate:
            result["annotated_controls"] = len(controls)
        return result

    async def get_ui_tree(self, window_id: int | None = None, max_nodes: int = 5000) -> Any:
        """Read the accessibility tree of a window (default: the active one) as JSON.

        Its shape: {"root": {control_type, name, automation_id, bounding_box, children, ...}}.
        """
        window = self._window(window_id)
        if self.tree is None:
            raise ToolError("no accessibility bus on this desktop; use screenshots")
        snapshot = await self.tree.ui_tree(window, TreeLimits(max_nodes=max_nodes))
        return ui_tree_json(snapshot)

    async def list_applications(self) -> list[str]:
        """List the applications launch_application can start, as people know them, with
        what each is for: "gedit — Text Editor".

        Launch one by its name (before the dash) or by what it is ("text editor").
        """
        apps = await asyncio.to_thread(Applications.load, self.desktop.env)
        return application_list(apps)

    async def list_windows(self) -> list[dict[str, Any]]:
        """List the top-level windows with their id, title, application, pid, rectangle and
        whether each is active."""
        return [window.model_dump(mode="json") for window in self.windows.list_windows()]

    async def get_controls(self, window_id: int | None = None) -> dict[str, Any]:
        """List the interactive controls a person sees in a window (default: the active one),
        numbered by `label` in reading order, with role, name, rectangle and actions."""
        window = self._window(window_id)
        return (await self._read_controls(window)).model_dump(mode="json")

    # ------------------------------------------------------------ actions

    async def select_window(
        self, window_id: int | None = None, title: str | None = None
    ) -> dict[str, Any]:
        """Bring a window to the front and give it the keyboard focus.

        Name it by window_id (from list_windows) or by title (a part of it is enough).
        """
        if window_id is None and title is None:
            raise ToolError("give window_id or title")
        windows = self.windows.list_windows()
        xid = window_id if window_id is not None else find_window(windows, title or "").xid
        return (await self.windows.activate(xid)).model_dump(mode="json")

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
        launched = await self.launcher.launch(name, timeout=timeout)
        # The window manager focuses a new window when it gets to it; the next tool call
        # (window_id omitted = the active window) must find this one active.
        window = await self.windows.activate(launched.window.xid)
        window = await self._loaded(window)
        await self._settle(None)
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
        deadline = time.monotonic() + LOADING_WAIT
        while _loading(window.title) and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
            try:
                window = self.windows.get(window.xid)
            except WindowError:
                break  # gone: what happens next says so
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
        control is covered); otherwise the centre is clicked.
        """
        window = self._window(window_id)
        control = await self._control(label, control_id, window_id)
        action = _click_action(control) if button == "left" and not double else None
        route = "pointer"

        async def act() -> None:
            nonlocal route
            if action is not None and await self._do_action(control, action):
                route = f"action:{action}"
                return
            x, y = control.rect.center
            await asyncio.to_thread(self.input.click, x, y, button, 2 if double else 1)

        done = await self._observed(act, window, target=control)
        return {"control": _brief(control), "route": route, **done}

    async def _do_action(self, control: Control, action: str) -> bool:
        """Whether the control's named action was done; one it refuses (or lacks) is
        logged, and the pointer clicks instead."""
        if self.tree is None:
            return False
        try:
            return await self.tree.do_action(control.id, action)
        except AtspiError as error:
            log.info("%s: action %r failed (%s); clicking instead", _brief(control), action, error)
            return False

    async def click_coordinates(
        self, x: int, y: int, button: Button = "left", double: bool = False
    ) -> dict[str, Any]:
        """Click at screen coordinates (pixels from the desktop's top-left corner)."""
        self._on_screen(x, y)
        return await self._act(
            lambda: self.input.click(x, y, button, 2 if double else 1), "pointer"
        )

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
        window = self._window(window_id)
        control = await self._control(label, control_id, window_id)
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
                await asyncio.to_thread(self.input.press_keys, "ctrl+a")
                await asyncio.to_thread(self.input.type_text, text)

        done = await self._observed(act, window, target=control, typed=text)
        return {"control": _brief(control), "route": route, **done}

    async def type_text(
        self, text: str, label: int | None = None, control_id: str | None = None
    ) -> dict[str, Any]:
        """Type text with the keyboard (any Unicode; "\\n" is Enter) into the focused
        control, or into the control named, which is given the focus first."""
        control: Control | None = None
        if label is not None or control_id is not None:
            control = await self._control(label, control_id, None)
        route = "keyboard"

        async def act() -> None:
            nonlocal route
            if control is not None:
                route = f"{await self._focus(control, await self._interfaces(control))}+keyboard"
            try:
                await asyncio.to_thread(self.input.type_text, text)
            except LayoutError:
                route = await self._insert(text, control)

        done = await self._observed(act, None, target=control, typed=text)
        return {"route": route, **done}

    async def _insert(self, text: str, control: Control | None) -> str:
        """Text the session's keyboard layout cannot type (a Wayland session reads keys
        with its own keymap), inserted at the caret of the control (else of the focused
        one) through the accessibility tree: the route taken. LayoutError again where
        there is none."""
        if control is None and self.tree is not None:
            listed = await self._read_controls(self._window(None))
            control = next((c for c in listed.controls if "focused" in c.states), None)
        if control is None or self.tree is None:
            raise LayoutError(
                f"the keyboard layout cannot type {text!r}, and no focused text field takes "
                "it otherwise: name the field, or use set_text"
            )
        try:
            inserted = await self.tree.insert_text(control.id, text)
        except AtspiError as error:
            raise LayoutError(
                f"the keyboard layout cannot type {text!r}, and {_brief(control)} takes no "
                f"inserted text ({error}): use set_text"
            ) from None
        if not inserted:
            raise LayoutError(f"{_brief(control)} refused the text {text!r}: use set_text")
        return "editable-text"

    async def _interfaces(self, control: Control) -> frozenset[str]:
        if self.tree is None:
            return frozenset()
        try:
            return await self.tree.interfaces(control.id)
        except AtspiError as error:
            log.info("%s: interfaces not read (%s)", _brief(control), error)
            return frozenset()

    async def _set_editable(self, control: Control, text: str) -> bool:
        assert self.tree is not None  # (it had interfaces)
        try:
            return await self.tree.set_text(control.id, text)
        except AtspiError as error:
            log.info("%s: EditableText refused (%s); typing instead", _brief(control), error)
            return False

    async def _set_value(self, control: Control, value: float) -> bool:
        assert self.tree is not None  # (it had interfaces)
        try:
            await self.tree.set_value(control.id, value)
        except AtspiError as error:
            log.info("%s: Value not set (%s); typing instead", _brief(control), error)
            return False
        return True

    async def _focus(self, control: Control, found: frozenset[str]) -> Literal["focus", "pointer"]:
        """Give the control the keyboard focus: through Component.GrabFocus where it offers
        it and then says it is focused (the caret stays where it was), else with a click on
        its centre (GTK 4 refuses GrabFocus)."""
        if self.tree is not None and COMPONENT in found:
            try:
                grabbed = await self.tree.grab_focus(control.id)
            except AtspiError as error:
                log.info("%s: GrabFocus refused (%s); clicking it", _brief(control), error)
                grabbed = False
            if grabbed and await self._focus_taken(control):
                return "focus"
        caret = await self._caret(control) if TEXT in found else None
        await asyncio.to_thread(self.input.click, *control.rect.center)
        await self._focus_taken(control)
        if caret is not None:
            await self._caret_moved(control, caret)
        return "pointer"

    async def _caret(self, control: Control) -> int | None:
        assert self.tree is not None  # (it had interfaces)
        try:
            return await self.tree.caret(control.id)
        except AtspiError as error:
            log.info("%s: no caret to watch (%s)", _brief(control), error)
            return None

    async def _caret_moved(self, control: Control, before: int) -> None:
        """Wait (up to CARET_WAIT s) for a click in a text to move its caret: GTK 4 places it
        a moment after the click, and keys typed at once went where it was before ("more"
        typed into GNOME Text Editor became "m" at the start and "ore" at the end). A click
        where the caret already was moves nothing: then the time is up."""
        deadline = time.monotonic() + CARET_WAIT
        while time.monotonic() < deadline:
            if await self._caret(control) != before:
                return
            await asyncio.sleep(0.02)

    async def _focus_taken(self, control: Control) -> bool:
        """Wait (up to FOCUS_WAIT s) for a control given the focus to say it has it: whether
        it did. Chromium moves the focus a moment after the click: keys typed at once went
        to the field focused before ("Ada" lost its "Ad"). A control that never says so (or
        has no states to ask) is typed into when the time is up."""
        if self.tree is None:
            return False
        deadline = time.monotonic() + FOCUS_WAIT
        while time.monotonic() < deadline:
            try:
                if "focused" in await self.tree.states(control.id):
                    return True
            except AtspiError as error:
                log.info("typing into %s without knowing its focus: %s", _brief(control), error)
                return False
            await asyncio.sleep(0.02)
        return False

    async def press_keys(self, keys: str) -> dict[str, Any]:
        """Press a key or key combination ("Return", "ctrl+s", "alt+F4", "ctrl+shift+t");
        several, separated by spaces, are pressed in turn."""
        return await self._act(lambda: self.input.press_keys(keys), "keyboard", focused_text=True)

    async def close_window(self, window_id: int | None = None) -> dict[str, Any]:
        """Close a window (default: the active one) as its title bar's close button does:
        the application may ask first ("Save changes?")."""
        window = self._window(window_id)
        # Asked of the display server, not pressed as alt+F4: a Wayland compositor may bind
        # no such key (sway does not; KWin's shortcut daemon is not part of a headless KWin).
        # A window that asks first stays: CLOSE_WAIT is what a closing one is given.
        done = await self._observed(
            lambda: self.windows.close_window(window.xid, timeout=CLOSE_WAIT),
            window,
            controls=False,
        )
        return {"window": window.title, "route": "window-manager", **done}

    async def scroll(
        self, x: int, y: int, direction: Direction = "down", amount: int = 3
    ) -> dict[str, Any]:
        """Scroll the mouse wheel `amount` notches at screen coordinates (x, y)."""
        self._on_screen(x, y)
        dx = {"left": -amount, "right": amount}.get(direction, 0)
        dy = {"up": -amount, "down": amount}.get(direction, 0)
        return await self._act(lambda: self.input.scroll(x, y, dx=dx, dy=dy), "pointer")

    async def drag(
        self, start_x: int, start_y: int, end_x: int, end_y: int, button: Button = "left"
    ) -> dict[str, Any]:
        """Drag: press the mouse button at (start_x, start_y), move to (end_x, end_y) and
        release it there."""
        self._on_screen(start_x, start_y)
        self._on_screen(end_x, end_y)
        return await self._act(
            lambda: self.input.drag((start_x, start_y), (end_x, end_y), button), "pointer"
        )

    async def wait(self, seconds: float) -> dict[str, Any]:
        """Wait (up to 60 s) for something slow to happen, then for the screen to settle."""
        if not 0 <= seconds <= 60:
            raise ToolError("seconds must be between 0 and 60")
        # Waiting acts on nothing: what changed meanwhile is read from the window list only,
        # with no late watch. The engine settles with wait(0) at each subtask's end; reading
        # the tree there cost up to a second, and woke Chromium's accessibility early.
        return await self._observed(
            lambda: asyncio.sleep(seconds), None, settle_from_start=False, controls=False
        )

    # ------------------------------------------------------------ helpers

    def _window(self, window_id: int | None) -> WindowInfo:
        if window_id is not None:
            return self.windows.get(window_id)
        active = self.windows.active_window()
        if active is None:
            windows = describe(self.windows.list_windows())
            raise WindowError(f"no window is active; give window_id (windows: {windows})")
        return active

    async def _read_controls(self, window: WindowInfo) -> ControlList:
        if self.tree is None:
            note = "no accessibility bus on this desktop; use screenshots and coordinates"
            listed = ControlList(window=window, controls=[], tree_available=False, note=note)
        else:
            try:
                listed = keep_numbers(
                    self._controls.get(window.xid), await self.tree.controls(window)
                )
            except AtspiTimeout as error:
                # A hung application: say so, as what was seen, rather than fail the look.
                name = window.application or window.title or "the application"
                reason = f"not responding: {name} did not answer ({error})"
                listed = ControlList(
                    window=window,
                    controls=[],
                    truncated=True,
                    truncated_reason=reason,
                    responding=False,
                )
        self._controls[window.xid] = listed
        return listed

    async def _control(
        self, label: int | None, control_id: str | None, window_id: int | None
    ) -> Control:
        if (label is None) == (control_id is None):
            raise ToolError("give exactly one of label (from get_controls) or control_id")
        window = self._window(window_id)
        listed = self._controls.get(window.xid) or await self._read_controls(window)
        for control in listed.controls:
            if control.label == label or control.id == control_id:
                return control
        if control_id is not None and self.tree is not None:
            # A node id from get_ui_tree need not be among the numbered controls.
            try:
                node = await self.tree.describe(control_id, window)
            except AtspiError as error:  # gone, or not an id at all: list what exists
                log.info("control %s: %s", control_id, error)
            else:
                return _placed(node, window)
        wanted = f"label {label}" if label is not None else f"id {control_id!r}"
        raise ToolError(
            f"no control with {wanted} in window {window.xid} {window.title!r}; "
            f"controls: {_list_controls(listed)}"
        )

    def _on_screen(self, x: int, y: int) -> None:
        width, height = self.screen.size
        if not (0 <= x < width and 0 <= y < height):
            raise ToolError(f"({x}, {y}) is outside the {width}x{height} screen")

    async def _act(
        self, action: Callable[[], None], route: str, focused_text: bool = False
    ) -> dict[str, Any]:
        # Typing a long text or dragging takes a while: keep the event loop (an MCP server's
        # other requests) running meanwhile. XInput serialises its calls on its own lock.
        done = await self._observed(
            lambda: asyncio.to_thread(action), None, focused_text=focused_text
        )
        return {"route": route, **done}

    async def _observed(
        self,
        act: Callable[[], Awaitable[object]],
        window: WindowInfo | None,
        *,
        target: Control | None = None,
        typed: str | None = None,
        focused_text: bool = False,
        settle_from_start: bool = True,
        controls: bool = True,
    ) -> dict[str, Any]:
        """Run `act` in `window` (default: the active one), wait for the screen to settle,
        and say what came of it, read from the window list and the accessibility tree
        (effects.py): the result's "effect" is "confirmed" or "not seen", "seen" says what.

        With `typed`, the text was meant for `target` (else for the focused control);
        `focused_text` also compares the focused control's text (keys may edit it).
        Without `controls`, only the window list is compared, and at once.
        """
        text_of = None
        if target is not None and typed is not None:
            text_of = TextOf.of(target.id, target.role, target.name)
        wants_text = focused_text or (typed is not None and text_of is None)
        before = await look(
            self.windows,
            self.tree,
            window,
            text_of=text_of,
            focused_text=wants_text,
            controls=controls,
        )
        pixels = frame(self.screen) if settle_from_start else None
        await act()
        settled = await self._settle(pixels)
        if before.text is not None:
            text_of = TextOf.seen(before.text)  # the same control after, even if focus moved

        async def look_after() -> Effect:
            after = await look(
                self.windows,
                self.tree,
                self._window_after(before),
                text_of=text_of,
                focused_text=wants_text,
                text_limit=max(TEXT_LIMIT, len(typed or "") + 200),
                controls=controls,
            )
            return effect_of(before, after, typed=typed, target=target.id if target else None)

        effect = await look_after()
        if not effect.seen and controls:
            started = time.monotonic()
            if await self._changes_late():
                later = await self._settle(None)
                waited = (time.monotonic() - started) * 1000
                settled = Settled(settled.elapsed_ms + waited, True, later.timed_out)
                effect = await look_after()
        return {**effect.as_result(), **_settled(settled)}

    async def _changes_late(self) -> bool:
        """Whether the windows or the screen change within desktop.effect_grace seconds."""
        pixels = frame(self.screen)
        windows = _window_states(self.windows.list_windows())
        deadline = time.monotonic() + self.settings.desktop.effect_grace
        while time.monotonic() < deadline:
            await asyncio.sleep(0.05)
            if frame(self.screen) != pixels:
                return True
            if _window_states(self.windows.list_windows()) != windows:
                return True
        return False

    def _window_after(self, before: Look) -> WindowInfo | None:
        """The window to read after an action: the one read before, unless the action
        made another active (a dialog that opened, a window that closed)."""
        active = self.windows.active_window()
        was_active = next((w.xid for w in before.windows if w.active), None)
        if before.window is None or (active is not None and active.xid != was_active):
            return active
        try:
            return self.windows.get(before.window)
        except WindowError:
            return active

    def _settle(self, before: bytes | None) -> Awaitable[Settled]:
        return wait_quiet(
            self.screen,
            before=before,
            timeout=self.settings.desktop.settle_timeout,
            floor=self.settings.sleep_time,
        )


def _placed(node: UiNode, window: WindowInfo) -> Control:
    if node.rect is None:
        raise ToolError(f"control {node.id} ({node.role}) is not on screen in {window.title!r}")
    return Control(
        label=0,
        id=node.id,
        role=node.role,
        name=node.name,
        rect=node.rect,
        actions=node.actions,
        text=node.text,
    )


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


def _brief(control: Control) -> str:
    return f"{control.label} {control.name!r} ({control.role})"


def _list_controls(listed: ControlList) -> str:
    if not listed.controls:
        return listed.note or "none"
    shown = [_brief(control) for control in listed.controls[:_MAX_LISTED]]
    more = len(listed.controls) - len(shown)
    return "; ".join(shown) + (f"; and {more} more" if more > 0 else "")


def _window_states(windows: Iterable[WindowInfo]) -> set[tuple[int, str, bool]]:
    return {(window.xid, window.title, window.active) for window in windows}


def _settled(settled: Settled) -> dict[str, Any]:
    return {
        "settle_ms": round(settled.elapsed_ms, 1),
        "screen_changed": settled.changed,
        "still_changing": settled.timed_out,
    }


def _shot_result(shot: Screenshot, path: str | None) -> dict[str, Any]:
    result: dict[str, Any] = {
        "width": shot.width,
        "height": shot.height,
        "rect": shot.rect.as_list(),
        "method": shot.method,
    }
    if path is not None:
        result["path"] = str(shot.save(Path(path)))
    else:
        result["png_base64"] = base64.b64encode(shot.png).decode("ascii")
    return result


def desktop_tools(tools: DesktopTools) -> list[Tool]:
    """The desktop tools as registry entries, by their names in the contract, in its order.
    Each is bound by attribute, not looked up by name: mypy sees a renamed method or name."""
    served: dict[ToolName, Callable[..., Awaitable[Any]]] = {
        ToolName.CAPTURE_DESKTOP_SCREENSHOT: tools.capture_desktop_screenshot,
        ToolName.CAPTURE_WINDOW_SCREENSHOT: tools.capture_window_screenshot,
        ToolName.GET_UI_TREE: tools.get_ui_tree,
        ToolName.LIST_WINDOWS: tools.list_windows,
        ToolName.GET_CONTROLS: tools.get_controls,
        ToolName.LIST_APPLICATIONS: tools.list_applications,
        ToolName.SELECT_WINDOW: tools.select_window,
        ToolName.LAUNCH_APPLICATION: tools.launch_application,
        ToolName.CLICK_CONTROL: tools.click_control,
        ToolName.CLICK_COORDINATES: tools.click_coordinates,
        ToolName.SET_TEXT: tools.set_text,
        ToolName.TYPE_TEXT: tools.type_text,
        ToolName.PRESS_KEYS: tools.press_keys,
        ToolName.CLOSE_WINDOW: tools.close_window,
        ToolName.SCROLL: tools.scroll,
        ToolName.DRAG: tools.drag,
        ToolName.WAIT: tools.wait,
    }
    display, lost = tools.desktop.display, tools.display.lost

    def tool(name: ToolName, kind: ToolType) -> Tool:
        return make_tool(_display_guarded(served[name], display, lost), kind, name=name)

    data = [tool(name, "data_collection") for name in DESKTOP_DATA_COLLECTION]
    return data + [tool(name, "action") for name in DESKTOP_ACTIONS]


def _display_guarded(
    tool: Callable[..., Awaitable[Any]], display: str, lost: tuple[type[BaseException], ...]
) -> Callable[..., Awaitable[Any]]:
    """The tool, with a lost display (a closed X connection) turned into DeviceLost: no
    later step can work on a display that is gone, so the round ends in ERROR instead of
    trying on."""

    @functools.wraps(tool)
    async def guarded(*args: Any, **kwargs: Any) -> Any:
        try:
            return await tool(*args, **kwargs)
        except lost as error:
            raise DeviceLost(f"display lost: the display {display} is gone ({error})") from None

    return guarded


def desktop_registry(tools: DesktopTools, extra: Iterable[Tool] = ()) -> ToolRegistry:
    """A registry with every desktop tool, plus `extra` (the engine's run_shell and
    get_system_info from devices/shell.py) so that one dispatcher serves them all."""
    return ToolRegistry([*desktop_tools(tools), *extra])


@contextlib.asynccontextmanager
async def open_registry(
    desktop: Desktop, settings: Settings, extra: Iterable[Tool] = ()
) -> AsyncIterator[ToolRegistry]:
    """`async with open_registry(desktop, settings, shell_tools) as registry:` the tools of
    one desktop (connections opened and closed around the block) plus `extra`."""
    async with await DesktopTools.open(desktop, settings) as tools:
        yield desktop_registry(tools, extra)


def _loading(title: str) -> bool:
    """A title that says the window's content is still coming: "Loading…"."""
    return title.strip().casefold() in {"loading…", "loading..."}
