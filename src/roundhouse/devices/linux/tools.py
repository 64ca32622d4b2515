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

DesktopTools is made of three parts, each in its own module of action/: `around` (the
connections, and the look and settle around each action that says what it did),
`observing` (the data-collection tools) and `acting` (the actions, run through `around` on
the controls `observing` listed; fine.py adds the finer pointer and keyboard ones that
computer-use models take). This assembles them on a desktop's display server and
accessibility bus, and serves them as registry entries. DesktopTools runs as well on the
fake display (testing/display.py, testing/tools.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from typing import Any

from roundhouse.config import Settings
from roundhouse.core.commands import ToolType
from roundhouse.devices.base import Closing, DeviceLost, Tool, ToolRegistry, make_tool
from roundhouse.devices.contract import (
    DESKTOP_ACTIONS,
    DESKTOP_DATA_COLLECTION,
    FINE_ACTIONS,
    FINE_DATA_COLLECTION,
    ToolName,
)
from roundhouse.devices.linux.action.around import Around
from roundhouse.devices.linux.action.fine import FineActing
from roundhouse.devices.linux.action.observing import Observing, ToolError
from roundhouse.devices.linux.atspi.client import AtspiClient, AtspiError
from roundhouse.devices.linux.atspi.seam import AccessibleTree
from roundhouse.devices.linux.desktops.desktop import Desktop
from roundhouse.devices.linux.display.backends import open_display
from roundhouse.devices.linux.person import Desk, hand_back_tool

__all__ = [
    "DesktopTools",
    "ToolError",
    "desktop_registry",
    "desktop_tools",
    "open_registry",
    "person_tools",
]

log = logging.getLogger(__name__)


class _SwitchOfAround:
    """An attribute of DesktopTools that is its `around`'s switch of the same name."""

    def __set_name__(self, owner: type, name: str) -> None:
        self._name = name

    def __get__(self, tools: DesktopTools, owner: type | None = None) -> bool:
        return bool(getattr(tools.around, self._name))

    def __set__(self, tools: DesktopTools, value: bool) -> None:
        setattr(tools.around, self._name, value)


class DesktopTools(Closing):
    """The tools on one desktop. Build with `await DesktopTools.open(desktop, settings)`, or
    on the connections of an `Around` made on any display server and tree (the fake
    display's, in tests).

    Each tool is the method of the part that holds it; the connections are `around`'s,
    named here too for the callers that reach them (tests, benchmarks).
    """

    def __init__(self, around: Around) -> None:
        self.around = around
        self.observing = Observing(around)
        self.acting = FineActing(around, self.observing)
        observing, acting = self.observing, self.acting
        # The connections (fixed for the tools' life).
        self.desktop, self.settings, self.display = around.desktop, around.settings, around.display
        self.screen, self.windows, self.tree = around.screen, around.windows, around.tree
        self.desk, self.input, self.launcher = around.desk, around.input, around.launcher
        # The data-collection tools.
        self.capture_desktop_screenshot = observing.capture_desktop_screenshot
        self.capture_window_screenshot = observing.capture_window_screenshot
        self.get_ui_tree = observing.get_ui_tree
        self.list_applications = observing.list_applications
        self.list_windows = observing.list_windows
        self.get_controls = observing.get_controls
        # The actions.
        self.select_window = acting.select_window
        self.launch_application = acting.launch_application
        self.click_control = acting.click_control
        self.click_coordinates = acting.click_coordinates
        self.set_text = acting.set_text
        self.type_text = acting.type_text
        self.press_keys = acting.press_keys
        self.close_window = acting.close_window
        self.scroll = acting.scroll
        self.drag = acting.drag
        self.wait = acting.wait
        # The finer actions (computer-use models only: contract.FINE_ACTIONS).
        self.pointer_position = acting.pointer_position
        self.move_pointer = acting.move_pointer
        self.click_pointer = acting.click_pointer
        self.mouse_down = acting.mouse_down
        self.mouse_up = acting.mouse_up
        self.hold_keys = acting.hold_keys

    # The switches bench sessions and bench actions turn to measure before against after
    # (around.py says what each does): set here, kept by `around`, whose parts read them
    # at every call.
    witnessed = _SwitchOfAround()
    pointer_clicks = _SwitchOfAround()
    spare_feedback = _SwitchOfAround()

    @classmethod
    async def open(cls, desktop: Desktop, settings: Settings) -> DesktopTools:
        """Connect to the desktop: its display server and, when it has one, AT-SPI."""
        display = open_display(desktop)
        client = AtspiClient(content=display.windows.content, drawn=display.drawn)
        tree: AccessibleTree | None = client
        try:
            await client.connect(desktop)
        except AtspiError as error:
            log.warning("no control tree on %s: %s", desktop.display, error)
            tree = None
        except BaseException:
            display.close()
            raise
        return cls(Around(desktop, settings, display=display, tree=tree))

    async def close(self) -> None:
        self.observing.close()  # the screenshots under way end before their display does
        await self.around.close()


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
        ToolName.POINTER_POSITION: tools.pointer_position,
        ToolName.MOVE_POINTER: tools.move_pointer,
        ToolName.CLICK_POINTER: tools.click_pointer,
        ToolName.MOUSE_DOWN: tools.mouse_down,
        ToolName.MOUSE_UP: tools.mouse_up,
        ToolName.HOLD_KEYS: tools.hold_keys,
    }
    display, lost = tools.desktop.display, tools.display.lost

    def tool(name: ToolName, kind: ToolType) -> Tool:
        function = _display_guarded(served[name], display, lost)
        if kind == "action" and name is not ToolName.WAIT:  # wait sends no input
            function = _the_persons_first(function, tools.desk)
        return make_tool(function, kind, name=name)

    data = [tool(name, "data_collection") for name in DESKTOP_DATA_COLLECTION]
    data += [tool(name, "data_collection") for name in FINE_DATA_COLLECTION]
    return data + [tool(name, "action") for name in (*DESKTOP_ACTIONS, *FINE_ACTIONS)]


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


def _the_persons_first(
    tool: Callable[..., Awaitable[Any]], desk: Desk
) -> Callable[..., Awaitable[Any]]:
    """The action, run only while the desktop is ours: refused (not run: the person took
    over, or the screen is locked) before it sends anything otherwise. What arrives while
    it runs is its own only until its input has been handled (person.SentAsOurs): input
    during its settle and look is the person's, and refuses the next action."""

    @functools.wraps(tool)
    async def guarded(*args: Any, **kwargs: Any) -> Any:
        await asyncio.to_thread(desk.before_action)
        return await tool(*args, **kwargs)

    return guarded


def person_tools(tools: DesktopTools) -> list[Tool]:
    """What the person at the desktop calls (not an agent's model): `hand_back`."""
    return [hand_back_tool(tools.desk)]


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
        yield desktop_registry(tools, [*person_tools(tools), *extra])
