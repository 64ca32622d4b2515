"""Reads that name what a person sees, for the few controls whose own properties do not:

- a control without a name of its own is named by the label it is "labelled by" (GTK links
  an entry to the label beside it this way, and leaves the entry's own name empty);
- a combo box whose text is only U+FFFC (Chromium's select: the text embeds its popup) shows
  the item selected in that popup, which is not showing and so was never read.

Both are a call or two per such control, pipelined; most controls need neither.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterable

from roundhouse.devices.contract import readable
from roundhouse.devices.linux.atspi.bus import AtspiBus, Ref
from roundhouse.devices.linux.atspi.constants import (
    ACCESSIBLE,
    GET_PROPERTY,
    GET_RELATION_SET,
    GET_SELECTED_CHILD,
    NULL_PATH,
)
from roundhouse.devices.linux.atspi.node import RawNode

LABELLED_BY = 2  # AtspiRelationType
# A class name, which GTK 4.8 gives as the name of what has none: "GtkButton", "AdwGizmo",
# "EditorSourceView", "HistoryView" (two capitalised parts or more, no space).
_TYPE_NAME = re.compile(r"[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+")


def gtk4_name(name: str) -> str:
    """What a person would call a GTK 4 object, from the name GTK 4.8 gives it: nothing for
    a class name, and one copy of a name said twice (a button's label property, mnemonic
    and all, then its label's text: "7 7", "_Retry Retry")."""
    if _TYPE_NAME.fullmatch(name):
        return ""
    words = name.split(" ")
    half = len(words) // 2
    if half and len(words) % 2 == 0:
        first, second = " ".join(words[:half]), " ".join(words[half:])
        if first.replace("_", "") == second:
            return second
    return name


def tidy_gtk4_names(nodes: Iterable[RawNode]) -> None:
    """Names and descriptions as gtk4_name says (GTK 4.8 gives both the class name)."""
    for node in nodes:
        if node.name:
            node.name = gtk4_name(node.name)
        if node.description:
            node.description = gtk4_name(node.description)


async def name_the_nameless(bus: AtspiBus, nodes: Iterable[RawNode]) -> None:
    """Fill the name of each control in `nodes` that has none from its labelled-by
    relation, and the text of each combo box that shows nothing from its selected item."""
    nameless = [node for node in nodes if not readable(node.name, 1)]
    blank_combos = [
        node for node in nodes if node.role == "combo box" and not readable(node.text, 1)
    ]
    names, shown = await asyncio.gather(
        asyncio.gather(*(_labelled_by(bus, node.ref) for node in nameless)),
        asyncio.gather(*(_selected_item(bus, node) for node in blank_combos)),
    )
    for node, name in zip(nameless, names, strict=True):
        if name:
            node.name = name
    for node, item in zip(blank_combos, shown, strict=True):
        if item:
            node.text = item


async def _labelled_by(bus: AtspiBus, ref: Ref) -> str:
    reply = await bus.call_or_none(ref, GET_RELATION_SET)
    if not reply:
        return ""
    labels = [
        tuple(target) for kind, targets in reply[0] if kind == LABELLED_BY for target in targets
    ]
    names = await asyncio.gather(*(_name(bus, label) for label in labels[:3]))
    return " ".join(name for name in names if name)


async def _selected_item(bus: AtspiBus, node: RawNode) -> str:
    """The selected item's name, asked of the combo box, else of its popup (its child)."""
    for owner in [node.ref, *(node.children or [])[:1]]:
        reply = await bus.call_or_none(owner, GET_SELECTED_CHILD, [0])
        if reply and reply[0] and reply[0][1] != NULL_PATH:
            name = await _name(bus, tuple(reply[0]))
            if name:
                return name
    return ""


async def _name(bus: AtspiBus, ref: Ref) -> str:
    reply = await bus.call_or_none(ref, GET_PROPERTY, [ACCESSIBLE, "Name"])
    return readable(str(reply[0].value), 200) if reply else ""
