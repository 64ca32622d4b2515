"""Reading a window's accessible subtree in bulk.

1. Cache.GetItems: the whole application (role, name, states, interfaces, parent, index,
   child count) in one call, where the toolkit fills it (GTK does once an event listener is
   registered; Qt always answers an empty list).
2. A level-by-level walk for whatever the cache lacks: every node the cache does not hold,
   and the children of containers that hold more than the cache lists (GTK's
   "manages-descendants" views). Calls within a level are pipelined; levels keep the order
   and the cut under a node limit deterministic.
3. Details (extents, actions, text or value) only for the nodes that need them, pipelined.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from roundhouse.devices.contract import Rect
from roundhouse.devices.linux.atspi_bus import AtspiBus, AtspiTimeout, Ref
from roundhouse.devices.linux.atspi_constants import (
    ACCESSIBLE,
    ACTION,
    CACHE_PATH,
    COMPONENT,
    NULL_PATH,
    PROPERTIES,
    SCROLLING_ROLES,
    TEXT,
    VALUE,
    role_name,
    state_names,
)
from roundhouse.devices.linux.atspi_scroll import LONG_LIST, extents, rows_in_view

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TreeLimits:
    max_depth: int = 64
    max_nodes: int = 5000
    time_limit: float = 10.0  # seconds for the whole read
    text_limit: int = 4000  # characters of text read per node


@dataclass
class RawNode:
    ref: Ref
    role: str
    name: str
    description: str | None  # None: not read (a controls read asks only where it is used)
    states: list[str]
    interfaces: frozenset[str]
    child_count: int
    children: list[Ref] | None  # None: not known yet (must be asked for)
    rect: Rect | None = None
    actions: list[str] = field(default_factory=list)
    text: str | None = None

    @property
    def showing(self) -> bool:
        return "showing" in self.states


@dataclass
class Structure:
    nodes: dict[Ref, RawNode]  # every node read, root included
    root: Ref
    truncated_reason: str | None = None


def _valid(ref: Ref) -> bool:
    return bool(ref[0]) and ref[1] != NULL_PATH


async def load_cache(bus: AtspiBus, app: str) -> dict[Ref, RawNode]:
    """The application's own cache in one call; empty when the toolkit keeps none."""
    try:
        reply = await bus.call_or_none((app, CACHE_PATH), "org.a11y.atspi.Cache", "GetItems")
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
        nodes[ref] = RawNode(
            ref=ref,
            role=role_name(role),
            name=name,
            description=description,
            states=state_names(states),
            interfaces=frozenset(interfaces),
            child_count=child_count,
            children=None,
        )
        if index >= 0:
            listed.setdefault(parent, []).append((index, ref))
    for ref, node in nodes.items():
        children = [child for _, child in sorted(listed.get(ref, []))]
        # Only trust a complete list: a container that holds more than the cache lists
        # creates its children on demand, and they are read by walking.
        if len(children) == node.child_count:
            node.children = children
    return nodes


async def fetch_node(
    bus: AtspiBus, ref: Ref, *, get_all: bool = False, description: bool = True
) -> RawNode | None:
    """Role, name, description, states, interfaces and children, pipelined.

    With `get_all` (ATK apps implement Properties.GetAll; Qt does not) name, description and
    child count come in one call, and leaves are not asked for their children. Without
    `description` that call is saved where each property costs one (Qt).
    """
    if get_all:
        role, properties, states = await asyncio.gather(
            bus.call_or_none(ref, ACCESSIBLE, "GetRole"),
            bus.call_or_none(ref, PROPERTIES, "GetAll", "s", [ACCESSIBLE]),
            bus.call_or_none(ref, ACCESSIBLE, "GetState"),
        )
        if properties is None or states is None:
            return await fetch_node(bus, ref, description=description)
        values = {key: variant.value for key, variant in properties[0].items()}
        name, about = values.get("Name"), values.get("Description")
        count = values.get("ChildCount", -1)
        # Interfaces only matter for details, which only showing nodes get.
        showing = "showing" in state_names(states[0])
        children, interfaces = await asyncio.gather(
            bus.call_or_none(ref, ACCESSIBLE, "GetChildren") if count else _no_children(),
            bus.call_or_none(ref, ACCESSIBLE, "GetInterfaces") if showing else _no_children(),
        )
    else:
        role, name, about, states, interfaces, children = await asyncio.gather(
            bus.call_or_none(ref, ACCESSIBLE, "GetRole"),
            _property(bus, ref, "Name"),
            _property(bus, ref, "Description") if description else _nothing(),
            bus.call_or_none(ref, ACCESSIBLE, "GetState"),
            bus.call_or_none(ref, ACCESSIBLE, "GetInterfaces"),
            bus.call_or_none(ref, ACCESSIBLE, "GetChildren"),
        )
    if role is None or states is None:
        return None  # the object went away while we read it
    child_refs = [tuple(child) for child in children[0]] if children else []
    return RawNode(
        ref=ref,
        role=role_name(role[0]),
        name=str(name or ""),
        description=None if about is None else str(about),
        states=state_names(states[0]),
        interfaces=frozenset(interfaces[0]) if interfaces else frozenset(),
        child_count=len(child_refs),
        children=[child for child in child_refs if _valid(child)],
    )


async def _no_children() -> list[Any]:
    return [[]]


async def _nothing() -> None:
    return None


async def _property(bus: AtspiBus, ref: Ref, name: str) -> object:
    reply = await bus.call_or_none(ref, PROPERTIES, "Get", "ss", [ACCESSIBLE, name])
    return reply[0].value if reply else None


async def fetch_children(bus: AtspiBus, node: RawNode) -> None:
    reply = await bus.call_or_none(node.ref, ACCESSIBLE, "GetChildren")
    node.children = [tuple(child) for child in reply[0] if _valid(tuple(child))] if reply else []


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
) -> Structure:
    """The subtree under `root_node`, breadth first; `descend(node)` says whether to open a
    node. The root is always part of it, even when the time runs out at once. With
    `in_view_only`, long scrolling lists are read only where they are in view."""
    root = root_node.ref
    # An application that fills its cache speaks ATK, which implements GetAll (Qt does not).
    get_all = bool(cache)
    cache = {**cache, root: root_node}
    structure = Structure(nodes={}, root=root)
    frontier: list[tuple[Ref, int]] = [(root, 0)]
    parent_of: dict[Ref, Ref | None] = {root: None}  # who listed a node first
    while frontier:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            structure.truncated_reason = "time limit"
            break
        try:
            level = await asyncio.wait_for(
                _read_level(bus, frontier, cache, get_all, descriptions), remaining
            )
        except TimeoutError:
            structure.truncated_reason = "time limit"
            break
        following: list[tuple[Ref, int]] = []
        for (ref, depth), node in zip(frontier, level, strict=True):
            if node is None:
                continue
            structure.nodes[ref] = node
            children = node.children or []
            if not descend(node):
                node.children = []
                continue
            if depth + 1 > limits.max_depth and children:
                structure.truncated_reason = "depth"
                node.children = []
                continue
            if in_view_only and _long_list(node, cache):
                children = await rows_in_view(bus, ref, children) or children
                node.children = children
            fresh = [child for child in children if child not in parent_of]
            parent_of.update((child, ref) for child in fresh)
            following.extend((child, depth + 1) for child in fresh)
        room = limits.max_nodes - len(structure.nodes)
        if len(following) > room:
            structure.truncated_reason = "node limit"
            following = following[: max(room, 0)]
        frontier = following
    if root not in structure.nodes:
        structure.nodes[root] = replace(root_node, children=[])
    _keep_read_children(structure, parent_of)
    return structure


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
) -> list[RawNode | None]:
    async def one(ref: Ref) -> RawNode | None:
        node = cache.get(ref)
        if node is None:
            return await fetch_node(bus, ref, get_all=get_all, description=descriptions)
        if node.children is None:
            await fetch_children(bus, node)
        return node

    return list(await asyncio.gather(*(one(ref) for ref, _depth in frontier)))


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
    bus: AtspiBus, nodes: Iterable[RawNode], limits: TreeLimits, deadline: float
) -> bool:
    """Extents, action names and text/value of `nodes`; False when the time ran out."""
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        return False
    jobs = [_details(bus, node, limits.text_limit) for node in nodes]
    try:
        await asyncio.wait_for(asyncio.gather(*jobs), remaining)
    except TimeoutError:
        return False
    return True


async def _details(bus: AtspiBus, node: RawNode, text_limit: int) -> None:
    extents, actions, text, about = await asyncio.gather(
        _extents(bus, node),
        _actions(bus, node),
        _text(bus, node, text_limit),
        _property(bus, node.ref, "Description") if node.description is None else _nothing(),
    )
    node.rect, node.actions, node.text = extents, actions, text
    if about is not None:
        node.description = str(about)


async def _extents(bus: AtspiBus, node: RawNode) -> Rect | None:
    return await extents(bus, node.ref) if COMPONENT in node.interfaces else None


async def _actions(bus: AtspiBus, node: RawNode) -> list[str]:
    if ACTION not in node.interfaces:
        return []
    reply = await bus.call_or_none(node.ref, ACTION, "GetActions")
    return [str(action[0]) for action in reply[0]] if reply else []


async def _text(bus: AtspiBus, node: RawNode, text_limit: int) -> str | None:
    if TEXT in node.interfaces:
        reply = await bus.call_or_none(node.ref, TEXT, "GetText", "ii", [0, text_limit])
        return str(reply[0]) if reply else None
    if VALUE in node.interfaces:
        reply = await bus.call_or_none(node.ref, PROPERTIES, "Get", "ss", [VALUE, "CurrentValue"])
        return _format_value(reply[0].value) if reply else None
    return None


def _format_value(value: object) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)
