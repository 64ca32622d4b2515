"""The device contract: the tools by name, and the plain data the desktop tools speak
(windows, control-tree nodes, controls). Agents, planners and prompts know the device
through this module alone; devices/linux/ is one implementation of it.

Rectangles are screen pixels [left, top, right, bottom], as the seeds' bounding_box.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass

from pydantic import BaseModel, Field


class ToolName(enum.StrEnum):
    """Every tool a device serves, by the name agents call it. A renamed tool is renamed
    here; the type checker finds its callers."""

    # data collection
    CAPTURE_DESKTOP_SCREENSHOT = "capture_desktop_screenshot"
    CAPTURE_WINDOW_SCREENSHOT = "capture_window_screenshot"
    GET_UI_TREE = "get_ui_tree"
    LIST_WINDOWS = "list_windows"
    GET_CONTROLS = "get_controls"
    LIST_APPLICATIONS = "list_applications"
    GET_SYSTEM_INFO = "get_system_info"
    # actions
    SELECT_WINDOW = "select_window"
    LAUNCH_APPLICATION = "launch_application"
    CLICK_CONTROL = "click_control"
    CLICK_COORDINATES = "click_coordinates"
    SET_TEXT = "set_text"
    TYPE_TEXT = "type_text"
    PRESS_KEYS = "press_keys"
    CLOSE_WINDOW = "close_window"
    SCROLL = "scroll"
    DRAG = "drag"
    WAIT = "wait"
    RUN_SHELL = "run_shell"
    # the pointer and the keys held, finer than a click (computer-use models' actions)
    POINTER_POSITION = "pointer_position"
    MOVE_POINTER = "move_pointer"
    CLICK_POINTER = "click_pointer"
    MOUSE_DOWN = "mouse_down"
    MOUSE_UP = "mouse_up"
    HOLD_KEYS = "hold_keys"


# The desktop tools of devices/linux/tools.py, in the order they are served.
DESKTOP_DATA_COLLECTION = (
    ToolName.CAPTURE_DESKTOP_SCREENSHOT,
    ToolName.CAPTURE_WINDOW_SCREENSHOT,
    ToolName.GET_UI_TREE,
    ToolName.LIST_WINDOWS,
    ToolName.GET_CONTROLS,
    ToolName.LIST_APPLICATIONS,
)
# What acts inside one window: the AppAgent's tools.
WINDOW_ACTIONS = (
    ToolName.CLICK_CONTROL,
    ToolName.CLICK_COORDINATES,
    ToolName.SET_TEXT,
    ToolName.TYPE_TEXT,
    ToolName.PRESS_KEYS,
    ToolName.CLOSE_WINDOW,
    ToolName.SCROLL,
    ToolName.DRAG,
    ToolName.WAIT,
)
DESKTOP_ACTIONS = (ToolName.SELECT_WINDOW, ToolName.LAUNCH_APPLICATION, *WINDOW_ACTIONS)
# What only the computer agent is offered: its vendors' finer pointer and keyboard actions
# (a mouse_move, a button held down, cursor_position), which an AppAgent never needs.
FINE_DATA_COLLECTION = (ToolName.POINTER_POSITION,)
FINE_ACTIONS = (
    ToolName.MOVE_POINTER,
    ToolName.CLICK_POINTER,
    ToolName.MOUSE_DOWN,
    ToolName.MOUSE_UP,
    ToolName.HOLD_KEYS,
)


@dataclass(frozen=True, slots=True)
class Rect:
    """A rectangle in pixels: left and top inside, right and bottom just outside. A plain
    frozen dataclass (pydantic reads and writes it inside the models below), because the
    label layout of an annotated screenshot makes thousands of them (marks.py)."""

    left: int
    top: int
    right: int
    bottom: int

    @property
    def width(self) -> int:
        return self.right - self.left

    @property
    def height(self) -> int:
        return self.bottom - self.top

    @property
    def area(self) -> int:
        return max(self.width, 0) * max(self.height, 0)

    @property
    def center(self) -> tuple[int, int]:
        return (self.left + self.right) // 2, (self.top + self.bottom) // 2

    def as_list(self) -> list[int]:
        return [self.left, self.top, self.right, self.bottom]

    def overlap(self, other: Rect) -> int:
        """The area the two rectangles share (0 when they only touch)."""
        # Plain comparisons: min()/max() made this, the hot spot of a layout, 2x slower.
        right = self.right if self.right < other.right else other.right
        left = self.left if self.left > other.left else other.left
        if right <= left:
            return 0
        bottom = self.bottom if self.bottom < other.bottom else other.bottom
        top = self.top if self.top > other.top else other.top
        return (right - left) * (bottom - top) if bottom > top else 0

    def contains(self, other: Rect) -> bool:
        return (
            self.left <= other.left
            and self.top <= other.top
            and other.right <= self.right
            and other.bottom <= self.bottom
        )

    def within(self, width: int, height: int) -> bool:
        return self.left >= 0 and self.top >= 0 and self.right <= width and self.bottom <= height


def bounding(rects: Iterable[Rect]) -> Rect:
    """The smallest rectangle holding every one of `rects` (at least one)."""
    boxes = list(rects)
    return Rect(
        min(box.left for box in boxes),
        min(box.top for box in boxes),
        max(box.right for box in boxes),
        max(box.bottom for box in boxes),
    )


class WindowInfo(BaseModel):
    """A top-level window as the window manager lists it."""

    xid: int  # X window id: stable while the window lives
    title: str
    application: str  # WM_CLASS class name, or the process name
    pid: int | None
    rect: Rect
    active: bool


class UiNode(BaseModel):
    """One accessible object. `id` is stable across calls while its object lives."""

    id: str
    role: str
    name: str = ""
    description: str = ""
    states: list[str] = Field(default_factory=list)
    rect: Rect | None = None
    actions: list[str] = Field(default_factory=list)
    text: str | None = None  # Text interface content, or the Value for sliders and spin boxes
    children: list[UiNode] = Field(default_factory=list)


class UiSnapshot(BaseModel):
    window: WindowInfo | None
    root: UiNode | None  # None when the application exposes no tree
    node_count: int
    truncated: bool = False
    truncated_reason: str | None = None  # "depth", "node limit", "time limit"
    tree_available: bool = True
    elapsed_ms: float = 0.0


OBJECT_REPLACEMENT = "\ufffc"  # where an application's text embeds a child object
MAX_VALUE = 120  # characters of a control's value shown to a model
# Controls whose text is what they hold (their value), not what they are called.
VALUE_ROLES = frozenset(
    {"entry", "password text", "spin button", "slider", "combo box", "text", "table cell"}
)


# Roles a person clicks to act: what a planner looks a "button" up among, and the core of
# what the tree reader counts as a control (atspi/constants.py INTERACTIVE_ROLES).
CLICKABLE_ROLES = frozenset(
    {
        "push button",
        "toggle button",
        "check box",
        "radio button",
        "menu item",
        "check menu item",
        "radio menu item",
        "link",
        "page tab",
        "list item",
        "combo box",
    }
)


# Where the text is what was typed: shown even when it reads like the name.
TYPED_VALUE_ROLES = frozenset({"entry", "password text", "text", "spin button"})


def readable(text: str | None, limit: int) -> str:
    """What a person reads of a name or text: no object-replacement characters (where an
    application embeds its children in its text), whitespace runs as one space, and long
    text cut with a visible marker."""
    flat = " ".join((text or "").replace(OBJECT_REPLACEMENT, " ").split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


class Control(BaseModel):
    """An interactive, visible control, numbered for the model."""

    label: int  # the number drawn on the annotated screenshot and shown to the model
    id: str  # the UiNode id
    role: str
    name: str
    rect: Rect
    actions: list[str] = Field(default_factory=list)
    # As the application gives it (checks compare it whole): an entry's text, a combo box's
    # shown item, a slider's value. Models read shown_value().
    text: str | None = None
    # What a person sees of its state: focused, checked / unchecked, selected, expanded /
    # collapsed, disabled, editable (atspi/controls.py shown_states).
    states: list[str] = Field(default_factory=list)
    # Inside the document the window shows (a web page, an office document), not the
    # window's own chrome (its tabs, title bar, toolbars, menus): of two controls that share
    # a name, the page's is the one a request means (models/offline/ops.find_control).
    in_document: bool = False

    def shown_value(self) -> str | None:
        """The value as a model reads it: an entry's text, a combo box's item, a slider's
        value, readable and cut; None where the text only repeats the name (a caption)."""
        value = readable(self.text, MAX_VALUE)
        if not value or (value == self.name and self.role not in TYPED_VALUE_ROLES):
            return None  # a caption, a cell or a combo box named by what it shows
        return value


class Context(BaseModel):
    """Text a person reads to act, that is not a control: a heading, a label that names no
    control, a status or alert, a group's or dialog's title. Listed without a number."""

    role: str
    text: str
    rect: Rect
    before: int  # listed before the control with this label (len(controls) + 1: after all)


class ControlList(BaseModel):
    window: WindowInfo | None
    controls: list[Control]
    context: list[Context] = Field(default_factory=list)
    # The title of a dialog drawn inside the window, in front of its content (libadwaita
    # 1.5's AdwDialog): its controls are listed with the window's (atspi/tree.py shown_dialog).
    dialog: str | None = None
    tree_available: bool = True
    note: str | None = None  # e.g. "this application exposes no accessibility tree"
    truncated: bool = False
    truncated_reason: str | None = None
    # False: the application did not answer (hung, or stopped): the list is empty because
    # of that, not because the window holds nothing.
    responding: bool = True
