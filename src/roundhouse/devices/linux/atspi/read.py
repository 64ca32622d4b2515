"""Reading a window's accessible subtree in bulk.

1. Cache.GetItems: the whole application (role, name, states, interfaces, parent, index,
   child count) in one call, where the toolkit fills it (GTK does once an event listener is
   registered; Qt always answers an empty list), and where it is quick to list (see
   atspi_frames.SLOW_CACHE: LibreOffice's is walked instead on reads of what shows).
2. A level-by-level walk for whatever the cache lacks: every node the cache does not hold,
   and the children of containers that hold more than the cache lists. Calls within a level
   are pipelined; levels keep the order and the cut under a node limit deterministic.
   A managed container (one that manages its descendants or claims more than MAX_CHILDREN)
   is never asked for its children, on any path: only its part in view is read
   (atspi_view), and only when it is showing.
3. Details (extents, actions, text or value) only for the nodes that need them, pipelined.

An application that stops answering ends the read with what it has, marked truncated with
the reason; so does the time limit.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, TypeVar

from roundhouse.devices.contract import Rect
from roundhouse.devices.linux.atspi.bus import AtspiBus, AtspiTimeout, Ref, answered
from roundhouse.devices.linux.atspi.cells import CellRefs
from roundhouse.devices.linux.atspi.constants import (
    ACCESSIBLE,
    ACTION,
    CACHE_PATH,
    COMPONENT,
    GET_ACTIONS,
    GET_ALL_PROPERTIES,
    GET_CACHED_ITEMS,
    GET_CHILDREN,
    GET_PROPERTY,
    GET_ROLE,
    GET_STATE,
    NULL_PATH,
    SCROLLING_ROLES,
    TEXT,
    VALUE,
    VALUE_READ_ROLES,
    role_name,
    state_names,
)
from roundhouse.devices.linux.atspi.names import tidy_gtk4_names
from roundhouse.devices.linux.atspi.node import RawNode, TreeLimits, is_managed
from roundhouse.devices.linux.atspi.placement import Placement
from roundhouse.devices.linux.atspi.props import child_count, extents, read_text, value
from roundhouse.devices.linux.atspi.scroll import LONG_LIST, rows_in_view
from roundhouse.devices.linux.atspi.view import InView, read_in_view

__all__ = [
    "RawNode",
    "Structure",
    "TreeLimits",
    "fetch_node",
    "load_cache",
    "read_details",
    "read_structure",
]

log = logging.getLogger(__name__)
T = TypeVar("T")


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


def stalled_reason(error: AtspiTimeout) -> str:
    return f"the application stopped answering ({error})"


def _valid(ref: Ref) -> bool:
    return bool(ref[0]) and ref[1] != NULL_PATH


async def load_cache(bus: AtspiBus, app: str) -> dict[Ref, RawNode]:
    """The application's own cache in one call; empty when the toolkit keeps none."""
    try:
        reply = await bus.call_or_none((app, CACHE_PATH), GET_CACHED_ITEMS)
    except AtspiTimeout:
        # A huge application can take longer to list everything than to answer small
        # calls: walk it instead, within the read's own limits.
        log.info("%s: GetItems timed out; walking its tree instead", app)
        return {}
    if not reply:
        return {}
    nodes: dict[Ref, RawNode] = {}
    listed: dict[Ref, list[tuple[int, Ref]]] = {}
    for item in reply[0]:
        if len(item) != 10 or isinstance(item[4], list):
            return {}  # the old layout (children listed inline), only ever seen empty (Qt)
        ref, _app, parent, index, child_count, interfaces, name, role, description, states = item
        ref, parent = tuple(ref), tuple(parent)
        names = state_names(states)
        # -1: the bridge did not count them (GTK's menus, managed containers): unless the
        # state says so, fetch_children asks for the count before it lists them.
        managed = is_managed(names, max(child_count, 0))
        nodes[ref] = RawNode(
            ref=ref,
            role=role_name(role),
            name=name,
            description=description,
            states=names,
            interfaces=frozenset(interfaces),
            child_count=child_count,
            children=[] if managed else None,  # never to be asked for
            managed=managed,
        )
        if index >= 0:
            listed.setdefault(parent, []).append((index, ref))
    for ref, node in nodes.items():
        children = [child for _, child in sorted(listed.get(ref, []))]
        # Only trust a complete list: a container that holds more than the cache lists
        # creates its children on demand, and they are read by walking.
        if not node.managed and len(children) == node.child_count:
            node.children = children
    return nodes


async def fetch_node(
    bus: AtspiBus,
    ref: Ref,
    *,
    get_all: bool = False,
    description: bool = True,
    hidden_in_full: bool = True,
) -> RawNode | None:
    """As _fetch_node; without `hidden_in_full`, a node that is not showing is read no
    further than its states (role and name stay empty): a controls read opens only showing
    nodes, and LibreOffice's uncached menus hold ~300 hidden items it asked 3 calls each."""
    if hidden_in_full:
        return await _fetch_node(bus, ref, get_all=get_all, description=description)
    states = await bus.call_or_none(ref, GET_STATE)
    if states is None:
        return None  # the object went away
    names = state_names(states[0])
    if "showing" in names:
        return await _fetch_node(bus, ref, get_all=get_all, description=description, states=states)
    return RawNode(
        ref=ref,
        role="",
        name="",
        description=None,
        states=names,
        interfaces=frozenset(),
        child_count=0,
        children=[],
    )


async def _fetch_node(
    bus: AtspiBus,
    ref: Ref,
    *,
    get_all: bool = False,
    description: bool = True,
    states: list[Any] | None = None,  # GetState's answer, when asked already
) -> RawNode | None:
    """Role, name, description, states, interfaces and child count, pipelined.

    With `get_all` (ATK apps implement Properties.GetAll; Qt does not) name, description and
    child count come in one call. Without `description` that call is saved where each
    property costs one (Qt). The children are left to fetch_children: a walk asks for them
    only where it opens the node, and never where it is a managed container.
    """
    if get_all:
        role, properties, states = await asyncio.gather(
            bus.call_or_none(ref, GET_ROLE),
            bus.call_or_none(ref, GET_ALL_PROPERTIES, [ACCESSIBLE]),
            _states(bus, ref, states),
        )
        if properties is None or states is None:
            return await _fetch_node(bus, ref, description=description, states=states)
        values = {key: variant.value for key, variant in properties[0].items()}
        name, about = values.get("Name"), values.get("Description")
        count: int | None = values.get("ChildCount")
        # Interfaces only matter for details, which only showing nodes get.
        showing = "showing" in state_names(states[0])
        interfaces = await bus.interfaces(ref) if showing else None
    else:
        role, name, about, states, interfaces, count = await asyncio.gather(
            bus.call_or_none(ref, GET_ROLE),
            _property(bus, ref, "Name"),
            _property(bus, ref, "Description") if description else answered(None),
            _states(bus, ref, states),
            bus.interfaces(ref),
            child_count(bus, ref),
        )
    if role is None or states is None:
        return None  # the object went away while we read it
    names = state_names(states[0])
    return RawNode(
        ref=ref,
        role=role_name(role[0]),
        name=str(name or ""),
        description=None if about is None else str(about),
        states=names,
        interfaces=interfaces or frozenset(),
        child_count=-1 if count is None else count,  # -1: fetch_children asks again
        children=None,
        managed=is_managed(names, 0 if count is None else count),
    )


def _states(bus: AtspiBus, ref: Ref, known: list[Any] | None) -> Awaitable[list[Any] | None]:
    return answered(known) if known is not None else bus.call_or_none(ref, GET_STATE)


async def _children(bus: AtspiBus, ref: Ref) -> list[Ref]:
    reply = await bus.call_or_none(ref, GET_CHILDREN)
    if not reply:
        return []
    return [child for child in (tuple(child) for child in reply[0]) if _valid(child)]


def _property(bus: AtspiBus, ref: Ref, name: str) -> Awaitable[object]:
    return bus.ask(ref, GET_PROPERTY, [ACCESSIBLE, name], value)


async def fetch_children(bus: AtspiBus, node: RawNode) -> None:
    """The children of a node that is opened; a count not known (the cache's -1) is asked
    for first, and a managed container is never listed."""
    if "defunct" in node.states:
        node.children = []  # (its count is -1 in the cache too: nothing to list)
        return
    if node.child_count < 0 and not node.managed:
        count = await child_count(bus, node.ref)
        if count is not None:
            node.child_count = count
            node.managed = is_managed(node.states, count)
    node.children = [] if node.managed or node.child_count == 0 else await _children(bus, node.ref)


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
            level = await _within(
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
            following = await _within(
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


async def _within(deadline: float, job: Callable[[], Awaitable[T]]) -> T:
    """job(), or TimeoutError at the deadline (it is then cancelled); not started at all
    when the time is already up."""
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise TimeoutError
    return await asyncio.wait_for(job(), remaining)


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


async def read_details(
    bus: AtspiBus,
    nodes: Iterable[RawNode],
    limits: TreeLimits,
    deadline: float,
    *,
    rect_only: bool = False,
) -> str | None:
    """Extents, action names and text/value of `nodes` (but those read whole already), or
    with `rect_only` their extents alone. Returns why it stopped early ("time limit", a
    stalled application), None when done."""
    wanted = [node for node in nodes if not node.details_read]

    async def one(node: RawNode) -> None:
        if rect_only:
            node.rect = await _extents(bus, node)
        else:
            await _details(bus, node, limits.text_limit)

    reads = [asyncio.ensure_future(one(node)) for node in wanted]
    try:
        await _within(deadline, lambda: asyncio.gather(*reads))
    except TimeoutError:
        return "time limit"
    except AtspiTimeout as error:
        return stalled_reason(error)
    finally:
        # One read that failed ends the gather, not the others: left running, they were
        # cancelled at the loop's end, and asyncio printed each one's traceback to the
        # person ("_GatheringFuture exception was never retrieved").
        for read in reads:
            read.cancel()
        await asyncio.gather(*reads, return_exceptions=True)
    return None


async def _details(bus: AtspiBus, node: RawNode, text_limit: int) -> None:
    extents, actions, text, about = await asyncio.gather(
        _extents(bus, node),
        _actions(bus, node),
        _text(bus, node, text_limit),
        _property(bus, node.ref, "Description") if node.description is None else answered(None),
    )
    node.rect, node.actions, node.text = extents, actions or [], text
    if about is not None:
        node.description = str(about)


# (Futures, not coroutines, where one call does: see AtspiBus.ask.)
def _extents(bus: AtspiBus, node: RawNode) -> Awaitable[Rect | None]:
    if node.rect_read or COMPONENT not in node.interfaces:
        return answered(node.rect)
    return extents(bus, node.ref)


def _actions(bus: AtspiBus, node: RawNode) -> Awaitable[list[str] | None]:
    if ACTION not in node.interfaces:
        return answered([])
    return bus.ask(node.ref, GET_ACTIONS, (), _action_names)


def _action_names(body: list[Any]) -> list[str]:
    return [str(action[0]) for action in body[0]]


def _text(bus: AtspiBus, node: RawNode, text_limit: int) -> Awaitable[str | None]:
    if TEXT in node.interfaces:
        return read_text(bus, node.ref, text_limit)
    if VALUE in node.interfaces and node.role in VALUE_READ_ROLES:
        return bus.ask(node.ref, GET_PROPERTY, [VALUE, "CurrentValue"], _format_value)
    return answered(None)


def _format_value(body: list[Any]) -> str:
    shown = body[0].value
    if isinstance(shown, float) and shown.is_integer():
        return str(int(shown))
    return str(shown)
