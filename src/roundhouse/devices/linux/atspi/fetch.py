"""What is asked of one accessible node, or of an application's cache: the bulk read
(read.py) is made of these.

- `load_cache`: Cache.GetItems, the whole application (role, name, states, interfaces,
  parent, index, child count) in one call, where the toolkit fills it (GTK does once an
  event listener is registered; Qt always answers an empty list).
- `fetch_node`: a node the cache lacks, its own fields pipelined; `fetch_children`: the
  children of a node that is opened (never of a managed container).
- `read_details`: extents, actions, text or value, only for the nodes that need them,
  pipelined, within the read's deadline.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, TypeVar

from roundhouse.devices.contract import Rect
from roundhouse.devices.linux.atspi.bus import AtspiBus, AtspiTimeout, Ref, answered
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
    TEXT,
    VALUE,
    VALUE_READ_ROLES,
    role_name,
    state_names,
)
from roundhouse.devices.linux.atspi.node import RawNode, TreeLimits, is_managed
from roundhouse.devices.linux.atspi.props import child_count, extents, read_text, value

log = logging.getLogger(__name__)
T = TypeVar("T")


def stalled_reason(error: AtspiTimeout) -> str:
    return f"the application stopped answering ({error})"


async def within_deadline(deadline: float, job: Callable[[], Awaitable[T]]) -> T:
    """job(), or TimeoutError at the deadline (it is then cancelled); not started at all
    when the time is already up."""
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise TimeoutError
    return await asyncio.wait_for(job(), remaining)


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
    gathered = asyncio.gather(*reads)
    # Taken however it ends: cancelled from outside, Python 3.11's wait_for waits for the
    # gather without taking its CancelledError, and asyncio printed "_GatheringFuture
    # exception was never retrieved" to the person.
    gathered.add_done_callback(_taken)
    try:
        await within_deadline(deadline, lambda: gathered)
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


def _taken(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()


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
