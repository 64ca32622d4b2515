"""What a read knows of one accessible object, and the read's limits (pure data).

A container that "manages descendants" creates its children when asked for them: a spreadsheet
of 2^20 × 2^14 cells answers GetChildren by building every cell (LibreOffice climbed to 2.9 GB
and never answered). Such a container, and any that claims more children than MAX_CHILDREN, is
`managed`: nothing ever asks for its children; only the part of it in view is read
(atspi_view).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from roundhouse.devices.contract import Rect
from roundhouse.devices.linux.atspi.bus import Ref

MAX_CHILDREN = 2000  # more children than this are never listed, only read where in view
OPEN_MENU_STATES = frozenset({"selected", "expanded"})


@dataclass(frozen=True)
class TreeLimits:
    max_depth: int = 64
    max_nodes: int = 5000
    time_limit: float = 10.0  # seconds for the whole read
    text_limit: int = 4000  # characters of text read per node
    max_cells: int = 1000  # cells of a table read where it is in view


@dataclass
class RawNode:
    ref: Ref
    role: str
    name: str
    description: str | None  # None: not read (a controls read asks only where it is used)
    states: list[str]
    interfaces: frozenset[str]
    child_count: int  # as the application says: -1 or a huge number for managed containers
    children: list[Ref] | None  # None: not known yet (must be asked for)
    rect: Rect | None = None
    actions: list[str] = field(default_factory=list)
    text: str | None = None
    managed: bool = False  # never list its children (see the module's docstring)
    # What a managed container says about the part read ("rows 1-33, columns 1-15 of ...");
    # shown as its text.
    summary: str | None = None
    # Rectangle and text were read with the node (cells in view): not read again.
    details_read: bool = False
    # The rectangle was read with the node (a row found in view): not read again.
    rect_read: bool = False

    @property
    def showing(self) -> bool:
        return "showing" in self.states

    @property
    def may_show_children(self) -> bool:
        """Whether a child of this node can show: it shows, and it is not a closed menu. A
        menu bar's menu is open when "selected" (LibreOffice and GTK alike); closed, its
        items do not show, and Calc's 11 menus hold ~270 items the bridge does not cache,
        which cost a GetChildren a menu and a GetState an item on every read."""
        if not self.showing:
            return False
        return self.role != "menu" or bool(OPEN_MENU_STATES.intersection(self.states))


def is_managed(states: list[str], child_count: int) -> bool:
    """Whether listing the children could make the application build them all: it says it
    manages them, or its ChildCount claims more than MAX_CHILDREN, or is negative (nonsense:
    an overflow). The cache's -1 is another thing: "not counted" (load_cache)."""
    return "manages-descendants" in states or not 0 <= child_count <= MAX_CHILDREN
