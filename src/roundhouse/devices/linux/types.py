"""Plain data the Linux desktop device speaks: windows, control-tree nodes, controls.

Shared by the AT-SPI reader, the window manager side, the tools and the agents.
Rectangles are screen pixels [left, top, right, bottom], as the seeds' bounding_box.
"""

from __future__ import annotations

from pydantic import BaseModel, Field


class Rect(BaseModel):
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
    def center(self) -> tuple[int, int]:
        return (self.left + self.right) // 2, (self.top + self.bottom) // 2

    def as_list(self) -> list[int]:
        return [self.left, self.top, self.right, self.bottom]


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


class Control(BaseModel):
    """An interactive, visible control, numbered for the model."""

    label: int  # the number drawn on the annotated screenshot and shown to the model
    id: str  # the UiNode id
    role: str
    name: str
    rect: Rect
    actions: list[str] = Field(default_factory=list)
    text: str | None = None


class ControlList(BaseModel):
    window: WindowInfo | None
    controls: list[Control]
    tree_available: bool = True
    note: str | None = None  # e.g. "this application exposes no accessibility tree"
    truncated: bool = False
    truncated_reason: str | None = None
