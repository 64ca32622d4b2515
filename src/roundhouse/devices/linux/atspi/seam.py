"""What the desktop tools ask of a window's accessibility tree: one seam, as display/base.py
is the display server's. AtspiClient (client.py) reads AT-SPI; the fake display's tree
(testing/tools.py) answers from windows kept in memory, for tests without a desktop.

Node ids are the reader's own ("<bus name>:<object path>" for AT-SPI). A node that is gone,
or refuses what it is asked, raises AtspiError (bus.py); the tools fall back or say so.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

from roundhouse.devices.contract import ControlList, UiNode, UiSnapshot, WindowInfo
from roundhouse.devices.linux.atspi.frames import Toolkit
from roundhouse.devices.linux.atspi.node import TreeLimits
from roundhouse.devices.linux.display.changes import Changes


@dataclass(frozen=True)
class TextRead:
    """A stretch of a node's text: `text` starts at `start` of `length` characters."""

    text: str
    start: int
    length: int
    caret: int


@dataclass(frozen=True)
class Announcing:
    """An application as the settle watches it: what it announces (`changes`), and a
    question that returns once it has handled what was sent to it before (False: it did
    not answer)."""

    changes: Changes
    caught_up: Callable[[], Awaitable[bool]]


class AccessibleTree(Protocol):
    # ------------------------------------------------------------ reading

    async def ui_tree(
        self, window: WindowInfo, limits: TreeLimits | None = None, *, showing_only: bool = False
    ) -> UiSnapshot:
        """The window's tree; details (rectangle, actions, text) for showing nodes."""

    async def controls(
        self, window: WindowInfo, limits: TreeLimits | None = None, *, fresh: bool = False
    ) -> ControlList:
        """The interactive controls a person sees in the window, numbered in reading order:
        the last read of it where nothing changed since (atspi_kept), unless `fresh`."""

    async def showing_nodes(
        self, window: WindowInfo, limits: TreeLimits, *, fresh: bool = False
    ) -> tuple[list[UiNode], bool] | None:
        """Every showing node of the window, flat, with role, name, states and the start of
        a text field's text, and whether all were read; None: the window exposes no tree."""

    async def describe(self, node_id: str, window: WindowInfo) -> UiNode:
        """One node of `window` with its rectangle on screen, actions and text."""

    async def read_text(self, node_id: str, limit: int) -> TextRead:
        """At most `limit` characters of the node's text, around its caret."""

    async def caret(self, node_id: str) -> int: ...

    async def states(self, node_id: str) -> list[str]: ...

    async def interfaces(self, node_id: str) -> frozenset[str]:
        """The node's interfaces (constants.py: EDITABLE_TEXT, VALUE, COMPONENT, TEXT...)."""

    async def toolkit(self, node_id: str) -> Toolkit:
        """The toolkit of the node's application, as it names itself ("Qt", "6.4.2")."""

    def announcing(self, window_id: int) -> Announcing | None:
        """The application of a window read before, as the settle watches it; None where
        it is not known or its announcements are not heard."""

    # ------------------------------------------------------------ acting

    async def do_action(self, node_id: str, action: str | None = None) -> bool: ...

    async def set_text(self, node_id: str, text: str) -> bool:
        """Replace the node's whole text (EditableText)."""

    async def insert_text(self, node_id: str, text: str) -> bool:
        """Insert text at the node's caret (EditableText)."""

    async def set_value(self, node_id: str, value: float) -> None: ...

    async def grab_focus(self, node_id: str) -> bool: ...

    async def close(self) -> None: ...
