"""OSWorld's linearised accessibility tree of one window, re-implemented from its rules, for
`roundhouse bench observation` to count what a model would read there.

What OSWorld does (desktop_env/server/main.py builds an XML tree with pyatspi; mm_agents'
heuristic_retrieve.py filters it; agent.py turns it into a table), in our words:

- Every node becomes an element named, and read, by OSWorld's tree rules (osworld/
  tree_rules.py: the tag, the text, whether it is placed on screen, how deep and wide the
  walk goes, the same for `serve --osworld`'s /accessibility). It carries the node's name,
  its states, and, for a node placed on screen, its top-left screen position and size.
- A node is kept when its tag starts with "document", or ends with "item", "button",
  "heading", "label", "scrollbar", "searchbox", "textbox", "link", "tabelement", "textfield",
  "textarea" or "menu", or is one of alert, canvas, check-box, combo-box, entry, icon, image,
  paragraph, scroll-bar, section, slider, static, table-cell, terminal, text; and it is
  showing and visible; and enabled, editable, expandable or checkable; and it has a name or
  text; and its position is not negative and its size is positive.
- The table has one row per kept node in document order, after the header
  "tag\\tname\\ttext\\tclass\\tdescription\\tposition (top-left x&y)\\tsize (w&h)": the tag,
  the name, the text (or "" when there is none; quoted, inner quotes doubled, when it holds a
  quote), the class and description, the position "(x, y)" and the size "(w, h)".
- The class and description columns are empty on Ubuntu: the agent reads them from the
  attribute namespace its Windows tree uses, which the Ubuntu tree never writes. They are
  kept empty here too, so the count is what that agent sends.

The walk awaits one call at a time, as pyatspi does; it is not timed.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from roundhouse.devices.linux.atspi.bus import AtspiBus, Ref
from roundhouse.devices.linux.atspi.constants import (
    ACCESSIBLE,
    COORD_SCREEN,
    GET_CHILD_AT_INDEX,
    GET_CHILDREN,
    GET_EXTENTS,
    GET_PROPERTY,
    GET_ROLE_NAME,
    GET_STATE,
    NULL_PATH,
    state_names,
)
from roundhouse.devices.linux.atspi.node import is_managed
from roundhouse.devices.linux.atspi.props import read_text
from roundhouse.osworld.tree_rules import MAX_DEPTH, MAX_WIDTH, placed, shown_text, tag

HEADER = "tag\tname\ttext\tclass\tdescription\tposition (top-left x&y)\tsize (w&h)"
KEPT_SUFFIXES = (
    "item", "button", "heading", "label", "scrollbar", "searchbox", "textbox", "link",
    "tabelement", "textfield", "textarea", "menu",
)  # fmt: skip
KEPT_TAGS = frozenset({
    "alert", "canvas", "check-box", "combo-box", "entry", "icon", "image", "paragraph",
    "scroll-bar", "section", "slider", "static", "table-cell", "terminal", "text",
})  # fmt: skip
USABLE = frozenset({"enabled", "editable", "expandable", "checkable"})


@dataclass(frozen=True)
class A11yNode:
    """What OSWorld's XML element holds of a node, as far as its table reads it."""

    tag: str
    name: str
    text: str
    states: frozenset[str]
    position: tuple[int, int] | None
    size: tuple[int, int] | None


def kept_by_role(tag: str) -> bool:
    return tag.startswith("document") or tag.endswith(KEPT_SUFFIXES) or tag in KEPT_TAGS


def may_keep(tag: str, states: frozenset[str]) -> bool:
    """Everything of the filter but the name-or-text and geometry tests."""
    return (
        kept_by_role(tag) and "showing" in states and "visible" in states and bool(states & USABLE)
    )


def keeps(node: A11yNode) -> bool:
    return (
        may_keep(node.tag, node.states)
        and bool(node.name or node.text)
        and node.position is not None
        and node.size is not None
        and min(node.position) >= 0
        and min(node.size) > 0
    )


def row(node: A11yNode) -> str:
    text = f'"{node.text.replace(chr(34), chr(34) * 2)}"' if '"' in node.text else node.text
    assert node.position is not None and node.size is not None  # keeps() held
    return "\t".join(
        (
            node.tag,
            node.name,
            text or '""',
            "",  # class: see the module's docstring
            "",  # description: likewise
            f"({node.position[0]}, {node.position[1]})",
            f"({node.size[0]}, {node.size[1]})",
        )
    )


def linearise(nodes: list[A11yNode]) -> str:
    """The table an OSWorld agent reads, for nodes in document order."""
    return "\n".join([HEADER, *(row(node) for node in nodes if keeps(node))])


async def read_window(bus: AtspiBus, frame: Ref) -> list[A11yNode]:
    """The window's nodes in document order, read as OSWorld's server reads them. Text is
    read only where it can change the table (a node the rest of the filter keeps): the
    result is the same, with fewer calls."""
    found: list[A11yNode] = []
    await _read(bus, frame, 0, found)
    return found


async def _read(bus: AtspiBus, ref: Ref, depth: int, found: list[A11yNode]) -> None:
    role = await bus.call_or_none(ref, GET_ROLE_NAME)
    if role is None:
        return  # gone while we read
    element = tag(str(role[0]))
    # A node can go at any moment (gedit drops one while it holds still): what went while
    # we read it is left out, as a walker that catches each node's errors leaves it.
    name, bits = await asyncio.gather(
        bus.call_or_none(ref, GET_PROPERTY, [ACCESSIBLE, "Name"]),
        bus.call_or_none(ref, GET_STATE),
    )
    if name is None or bits is None:
        return
    states = frozenset(state_names(bits[0]))
    position = size = None
    if placed(states):
        extents = await bus.call_or_none(ref, GET_EXTENTS, [COORD_SCREEN])
        if extents is not None:
            x, y, width, height = extents[0]
            position, size = (int(x), int(y)), (int(width), int(height))
    text = ""
    if may_keep(element, states):
        text = shown_text(await read_text(bus, ref, 10**7) or "")
    found.append(A11yNode(element, str(name[0].value), text, states, position, size))
    if depth == MAX_DEPTH:
        return
    for child in await _children(bus, ref, states):
        await _read(bus, child, depth + 1, found)


async def _children(bus: AtspiBus, ref: Ref, states: frozenset[str]) -> list[Ref]:
    """The first MAX_WIDTH children. pyatspi iterates a node child by child; for a container
    that would build all its children at once (atspi_node.is_managed), so do we."""
    counted = await bus.call_or_none(ref, GET_PROPERTY, [ACCESSIBLE, "ChildCount"])
    count = int(counted[0].value) if counted else 0
    if count <= 0:
        return []
    if is_managed(sorted(states), count):
        refs = []
        for index in range(min(count, MAX_WIDTH)):
            reply = await bus.call_or_none(ref, GET_CHILD_AT_INDEX, [index])
            if reply is not None:
                refs.append((str(reply[0][0]), str(reply[0][1])))
    else:
        reply = await bus.call_or_none(ref, GET_CHILDREN)
        listed = reply[0] if reply else []
        refs = [(str(child[0]), str(child[1])) for child in listed[:MAX_WIDTH]]
    return [child for child in refs if child[0] and child[1] != NULL_PATH]
