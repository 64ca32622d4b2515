"""Reading a window's accessible subtree in bulk.

1. The application's cache (fetch.load_cache), where it is quick to list (see
   frames.SLOW_CACHE: LibreOffice's is walked instead on reads of what shows).
2. A level-by-level walk for whatever the cache lacks: every node the cache does not hold,
   and the children of containers that hold more than the cache lists. Calls within a level
   are pipelined; levels keep the order and the cut under a node limit deterministic.
   A managed container (one that manages its descendants or claims more than MAX_CHILDREN)
   is never asked for its children, on any path: only its part in view is read
   (view.py), and only when it is showing.
3. Details (extents, actions, text or value) only for the nodes that need them, pipelined
   (fetch.read_details).

This module is step 2 (`read_structure`) and what a read hands on (`finish`); fetch.py
asks the single calls. An application that stops answering ends the read with what it
has, marked truncated with the reason; so does the time limit.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial

from roundhouse.devices.contract import Rect
from roundhouse.devices.linux.atspi.bus import AtspiBus, AtspiTimeout, Ref
from roundhouse.devices.linux.atspi.cells import CellRefs
from roundhouse.devices.linux.atspi.constants import COMPONENT, SCROLLING_ROLES
from roundhouse.devices.linux.atspi.fetch import (
    fetch_children,
    fetch_node,
    stalled_reason,
    within_deadline,
)
from roundhouse.devices.linux.atspi.names import tidy_gtk4_names
from roundhouse.devices.linux.atspi.node import RawNode, TreeLimits
from roundhouse.devices.linux.atspi.placement import Placement
from roundhouse.devices.linux.atspi.props import extents
from roundhouse.devices.linux.atspi.scroll import LONG_LIST, rows_in_view
from roundhouse.devices.linux.atspi.view import InView, read_in_view


@dataclass
class Structure:
    nodes: dict[Ref, RawNode]  # every node read, root included
    root: Ref
    truncated_reason: str | None = None
    stalled: bool = False  # the application stopped answering: ask it nothing more


def finish(structure: Structure, placement: Placement, gtk4: bool) -> None:
    """What a read hands on: every rectangle in the screen's space (read in the
    application's), and GTK 4's names and descriptions tidied."""
    if gtk4:
        tidy_gtk4_names(structure.nodes.values())
    if placement.identity:
        return
    for node in structure.nodes.values():
        if node.rect is not None:
            node.rect = placement.to_screen(node.rect)


async def read_structure(
    bus: AtspiBus,
    root_node: RawNode,
    cache: dict[Ref, RawNode],
    limits: TreeLimits,
    descend: Callable[[RawNode], bool],
    deadline: float,
    *,
    descriptions: bool = True,
    in_view_only: bool = False,
    area: Rect | None = None,
    cells: CellRefs | None = None,
    hidden_in_full: bool = True,
    get_all: bool | None = None,
    showing_from_extents: bool = False,
) -> Structure:
    """The subtree under `root_node`, breadth first; `descend(node)` says whether to open a
    node. The root is always part of it, even when the time runs out at once. With
    `in_view_only`, long scrolling lists are read only where they are in view. Managed
    containers always are, within `area` (the window on screen); `cells` keeps their cell
    references between reads. Without `hidden_in_full`, nodes that are not showing are
    read no further than their states (see fetch_node). `get_all`: whether the application
    implements Properties.GetAll (None: it does if it fills its cache). With
    `showing_from_extents` (an application that marks nothing "showing": GTK 4.8), a
    "visible" node shows when its rectangle has some size, read as the node is reached
    (unmapped widgets, a hidden info bar or stack page, are 0 × 0), so what does not show
    is not opened, as elsewhere."""
    root = root_node.ref
    hidden_in_full = hidden_in_full or showing_from_extents
    # An application that fills its cache speaks ATK, which implements GetAll (Qt does not).
    get_all = bool(cache) if get_all is None else get_all
    cache = {**cache, root: root_node}
    structure = Structure(nodes={}, root=root)
    frontier: list[tuple[Ref, int]] = [(root, 0)]
    parent_of: dict[Ref, Ref | None] = {root: None}  # who listed a node first
    everywhere = Rect(left=-(2**31), top=-(2**31), right=2**31, bottom=2**31)
    # (not `cells or ...`: an empty CellRefs is falsy, and would be replaced every read)
    kept = cells if cells is not None else CellRefs()
    view = _View(area or everywhere, kept, limits, in_view_only)
    while frontier:
        try:
            level = await within_deadline(
                deadline,
                partial(
                    _read_level,
                    bus,
                    frontier,
                    cache,
                    get_all,
                    descriptions,
                    hidden_in_full,
                    descend,
                    showing_from_extents,
                ),
            )
            following = await within_deadline(
                deadline,
                partial(
                    _open_level, bus, structure, frontier, level, cache, descend, parent_of, view
                ),
            )
        except TimeoutError:
            structure.truncated_reason = "time limit"
            break
        except AtspiTimeout as error:
            structure.truncated_reason = stalled_reason(error)
            structure.stalled = True
            break
        room = limits.max_nodes - len(structure.nodes)
        if len(following) > room:
            structure.truncated_reason = "node limit"
            following = following[: max(room, 0)]
        frontier = following
    if root not in structure.nodes:
        structure.nodes[root] = replace(root_node, children=[])
    _keep_read_children(structure, parent_of)
    return structure


@dataclass(frozen=True)
class _View:
    """How containers are read where they are in view."""

    area: Rect
    cells: CellRefs
    limits: TreeLimits
    long_lists: bool  # long lists too, not only managed containers
    # Rows found in view, with the rectangles that placed them: not asked for again.
    rects: dict[Ref, Rect] = field(default_factory=dict)


async def _open_level(
    bus: AtspiBus,
    structure: Structure,
    frontier: list[tuple[Ref, int]],
    level: list[RawNode | None],
    cache: dict[Ref, RawNode],
    descend: Callable[[RawNode], bool],
    parent_of: dict[Ref, Ref | None],
    view: _View,
) -> list[tuple[Ref, int]]:
    """Record a level's nodes and return the next level: their children to read."""
    limits = view.limits
    opened: list[tuple[RawNode, int]] = []
    for (ref, depth), node in zip(frontier, level, strict=True):
        if node is None:
            continue
        structure.nodes[ref] = node
        if ref in view.rects:
            node.rect, node.rect_read = view.rects.pop(ref), True
        if not descend(node) or (node.managed and not node.showing):
            node.children = []  # (nothing of a managed container is in view unless it shows)
        elif depth + 1 > limits.max_depth and (node.children or node.managed):
            structure.truncated_reason = "depth"
            node.children = []
        else:
            opened.append((node, depth))
    managed = [node for node, _ in opened if node.managed]
    shown = await asyncio.gather(
        *(read_in_view(bus, node, view.area, view.cells, limits, view.rects) for node in managed)
    )
    in_view = dict(zip([node.ref for node in managed], shown, strict=True))
    following: list[tuple[Ref, int]] = []
    for node, depth in opened:
        children = node.children or []
        if node.managed:
            children = _take_in_view(structure, node, in_view[node.ref], parent_of, limits)
        elif view.long_lists and _long_list(node, cache):
            children = (
                await rows_in_view(bus, node.ref, children, view.area, view.rects) or children
            )
            node.children = children
        fresh = [child for child in children if child not in parent_of]
        parent_of.update((child, node.ref) for child in fresh)
        following.extend((child, depth + 1) for child in fresh)
    return following


def _take_in_view(
    structure: Structure,
    node: RawNode,
    shown: InView,
    parent_of: dict[Ref, Ref | None],
    limits: TreeLimits,
) -> list[Ref]:
    """Add what a managed container shows: nodes read whole join the structure now, the
    rest are returned to be read as its children."""
    node.summary = shown.summary
    room = max(limits.max_nodes - len(structure.nodes), 0)
    whole = [cell for cell in shown.nodes if cell.ref not in parent_of]
    if len(whole) > room:
        structure.truncated_reason = "node limit"
        whole = whole[:room]
    for cell in whole:
        structure.nodes[cell.ref] = cell
        parent_of[cell.ref] = node.ref
    node.children = [cell.ref for cell in whole] + shown.children
    return shown.children


def _long_list(node: RawNode, cache: dict[Ref, RawNode]) -> bool:
    """A scrolling container with many rows to fetch (rows in the app's cache cost nothing)."""
    if node.role not in SCROLLING_ROLES or not node.children:
        return False
    return sum(1 for child in node.children if child not in cache) > LONG_LIST


async def _read_level(
    bus: AtspiBus,
    frontier: list[tuple[Ref, int]],
    cache: dict[Ref, RawNode],
    get_all: bool,
    descriptions: bool,
    hidden_in_full: bool,
    descend: Callable[[RawNode], bool],
    showing_from_extents: bool,
) -> list[RawNode | None]:
    async def one(ref: Ref) -> RawNode | None:
        node = cache.get(ref) or await fetch_node(
            bus, ref, get_all=get_all, description=descriptions, hidden_in_full=hidden_in_full
        )
        if showing_from_extents and node is not None:
            await _show_by_extents(bus, node)
        # (the children of a node that is not opened are never used: not asked for)
        if node is not None and node.children is None and descend(node):
            await fetch_children(bus, node)
        return node

    return list(await asyncio.gather(*(one(ref) for ref, _depth in frontier)))


async def _show_by_extents(bus: AtspiBus, node: RawNode) -> None:
    """Mark a "visible" node "showing" when it has a rectangle of some size (kept: the
    details do not ask for it again), or has no rectangle at all (GTK 4's stack pages:
    their children tell)."""
    if node.showing or "visible" not in node.states:
        return
    if COMPONENT in node.interfaces:
        node.rect, node.rect_read = await extents(bus, node.ref), True
        if node.rect is None or node.rect.width <= 0 or node.rect.height <= 0:
            return
    node.states = [*node.states, "showing"]


def _keep_read_children(structure: Structure, parent_of: dict[Ref, Ref | None]) -> None:
    """Children cut by a limit, or gone while we read, are not part of the tree; nor is a
    node listed again by a second parent (a buggy app's cycle must not loop the tree)."""
    for ref, node in structure.nodes.items():
        if node.children:
            node.children = [
                child
                for child in node.children
                if child in structure.nodes and parent_of.get(child) == ref
            ]
