"""The naive way to read a tree, kept as the reference the bulk reader is checked against
and as the benchmark's baseline: a depth-first walk that awaits one D-Bus call per
property per node, as OSWorld's pyatspi walk does, with the same D-Bus library.

Unlike OSWorld's walk it never lists the children of a managed container (atspi_node): a
spreadsheet would build 2^34 cells. It reads nothing of them at all, where the bulk reader
reads their part in view; comparisons leave those nodes out.
"""

from __future__ import annotations

from roundhouse.devices.contract import Rect, UiNode
from roundhouse.devices.linux.atspi.bus import AtspiBus, Ref, node_id
from roundhouse.devices.linux.atspi.constants import (
    ACCESSIBLE,
    ACTION,
    COMPONENT,
    COORD_SCREEN,
    GET_ACTION_NAME,
    GET_CHILDREN,
    GET_EXTENTS,
    GET_INTERFACES,
    GET_LOCALIZED_ACTION_NAME,
    GET_ROLE,
    GET_STATE,
    NULL_PATH,
    OFFSCREEN,
    TEXT,
    VALUE,
    VALUE_READ_ROLES,
    role_name,
    state_names,
)
from roundhouse.devices.linux.atspi.node import is_managed
from roundhouse.devices.linux.atspi.props import read_text


async def naive_tree(
    bus: AtspiBus,
    ref: Ref,
    *,
    details_when_hidden: bool = False,
    text_limit: int = 4000,
    max_depth: int = 64,
) -> UiNode | None:
    """The whole subtree under `ref`. Details (extents, actions, text) are read for showing
    nodes, or for every node when `details_when_hidden` (what OSWorld reads), and then kept
    for showing nodes only, so that the result is comparable with the bulk reader's."""
    role = await bus.call_or_none(ref, GET_ROLE)
    if role is None:
        return None
    name = await bus.get_property(ref, ACCESSIBLE, "Name")
    description = await bus.get_property(ref, ACCESSIBLE, "Description")
    (bits,) = await bus.call(ref, GET_STATE)
    (interfaces,) = await bus.call(ref, GET_INTERFACES)
    states = state_names(bits)
    showing = "showing" in states
    rect: Rect | None = None
    actions: list[str] = []
    text: str | None = None
    if showing or details_when_hidden:
        if COMPONENT in interfaces:
            (extents,) = await bus.call(ref, GET_EXTENTS, [COORD_SCREEN])
            x, y, width, height = extents
            if x != OFFSCREEN and y != OFFSCREEN:
                rect = Rect(left=x, top=y, right=x + width, bottom=y + height)
        if ACTION in interfaces:
            count = await bus.get_property(ref, ACTION, "NActions")
            for index in range(int(count)):
                # The localized name is what GetActions lists ("Click", not "click");
                # Qt has only GetName (the same text).
                name_reply = await bus.call_or_none(ref, GET_LOCALIZED_ACTION_NAME, [index])
                if name_reply is None:
                    name_reply = await bus.call(ref, GET_ACTION_NAME, [index])
                actions.append(str(name_reply[0]))
        if TEXT in interfaces:
            text = await read_text(bus, ref, text_limit)
        elif VALUE in interfaces:
            value = await bus.get_property(ref, VALUE, "CurrentValue")
            if role_name(role[0]) in VALUE_READ_ROLES:  # the others' tell nothing
                text = str(int(value)) if float(value).is_integer() else str(value)
    if not showing:
        rect, actions, text = None, [], None
    count = await bus.get_property(ref, ACCESSIBLE, "ChildCount")
    children = []
    if count and not is_managed(states, int(count)):
        (children,) = await bus.call(ref, GET_CHILDREN)
    nodes = []
    for child in children if max_depth > 0 else []:
        child_ref = (str(child[0]), str(child[1]))
        if not child_ref[0] or child_ref[1] == NULL_PATH:
            continue
        node = await naive_tree(
            bus,
            child_ref,
            details_when_hidden=details_when_hidden,
            text_limit=text_limit,
            max_depth=max_depth - 1,
        )
        if node is not None:
            nodes.append(node)
    return UiNode(
        id=node_id(ref),
        role=role_name(role[0]),
        name=str(name),
        description=str(description),
        states=states,
        rect=rect,
        actions=actions,
        text=None if text is None else str(text),
        children=nodes,
    )
