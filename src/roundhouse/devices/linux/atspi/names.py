"""Reads that name what a person sees, for the few controls whose own properties do not:

- a control without a name of its own is named by the label it is "labelled by" (GTK links
  an entry to the label beside it this way, and leaves the entry's own name empty);
- a combo box whose text is only U+FFFC (Chromium's select: the text embeds its popup) shows
  the item selected in that popup, which is not showing and so was never read.

Both are a call or two per such control, pipelined; most controls need neither.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from roundhouse.devices.contract import readable
from roundhouse.devices.linux.atspi.bus import AtspiBus, Ref
from roundhouse.devices.linux.atspi.constants import ACCESSIBLE, NULL_PATH, PROPERTIES
from roundhouse.devices.linux.atspi.node import RawNode

SELECTION = "org.a11y.atspi.Selection"
LABELLED_BY = 2  # AtspiRelationType


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
    reply = await bus.call_or_none(ref, ACCESSIBLE, "GetRelationSet")
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
        reply = await bus.call_or_none(owner, SELECTION, "GetSelectedChild", "i", [0])
        if reply and reply[0] and reply[0][1] != NULL_PATH:
            name = await _name(bus, tuple(reply[0]))
            if name:
                return name
    return ""


async def _name(bus: AtspiBus, ref: Ref) -> str:
    reply = await bus.call_or_none(ref, PROPERTIES, "Get", "ss", [ACCESSIBLE, "Name"])
    return readable(str(reply[0].value), 200) if reply else ""
