"""Small reads of one object that every reader shares: extents, text, child count."""

from __future__ import annotations

from roundhouse.devices.contract import Rect
from roundhouse.devices.linux.atspi_bus import AtspiBus, Ref
from roundhouse.devices.linux.atspi_constants import (
    ACCESSIBLE,
    COMPONENT,
    COORD_SCREEN,
    OFFSCREEN,
    PROPERTIES,
    TEXT,
)


async def extents(bus: AtspiBus, ref: Ref) -> Rect | None:
    reply = await bus.call_or_none(ref, COMPONENT, "GetExtents", "u", [COORD_SCREEN])
    if not reply:
        return None
    x, y, width, height = reply[0]
    if x == OFFSCREEN or y == OFFSCREEN:
        return None
    return Rect(left=x, top=y, right=x + width, bottom=y + height)


async def child_count(bus: AtspiBus, ref: Ref) -> int | None:
    reply = await bus.call_or_none(ref, PROPERTIES, "Get", "ss", [ACCESSIBLE, "ChildCount"])
    return int(reply[0].value) if reply else None


async def read_text(bus: AtspiBus, ref: Ref, limit: int, *, check_empty: bool = True) -> str | None:
    """The object's text, cut at `limit` characters.

    Asked with end offset -1 (the whole text): LibreOffice answers "" for any end offset past
    the end, so asking for `limit` characters read every short text as empty. Where -1 is not
    understood either, an empty answer is checked against CharacterCount (`check_empty`; a
    caller that has seen -1 work for the same kind of object can skip that call).
    """
    reply = await bus.call_or_none(ref, TEXT, "GetText", "ii", [0, -1])
    if reply is None:
        return None
    text = str(reply[0])
    if not text and check_empty:
        count = await bus.call_or_none(ref, PROPERTIES, "Get", "ss", [TEXT, "CharacterCount"])
        length = int(count[0].value) if count else 0
        if length > 0:
            reply = await bus.call_or_none(ref, TEXT, "GetText", "ii", [0, min(length, limit)])
            text = str(reply[0]) if reply else ""
    return text[:limit]
