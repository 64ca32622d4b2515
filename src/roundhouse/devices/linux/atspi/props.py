"""Small reads of one object that every reader shares: extents, text, child count."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any

from roundhouse.devices.contract import Rect
from roundhouse.devices.linux.atspi.bus import AtspiBus, Ref
from roundhouse.devices.linux.atspi.constants import (
    ACCESSIBLE,
    COORD_SCREEN,
    COORD_WINDOW,
    GET_EXTENTS,
    GET_PROPERTY,
    GET_TEXT,
    OFFSCREEN,
    TEXT,
)


def extents(bus: AtspiBus, ref: Ref) -> Awaitable[Rect | None]:
    """The object's rectangle, in its application's space (atspi_placement turns it into
    the screen's)."""
    return bus.ask(ref, GET_EXTENTS, [coord_type(bus, ref)], _rect)


def coord_type(bus: AtspiBus, ref: Ref) -> int:
    """The coordinates the object's application is asked in, for extents and points alike:
    its window's for GTK 4, whose answer for the screen's is its window's (4.8) or (0, 0)
    for every object (later versions), the screen's for every other."""
    return COORD_WINDOW if ref[0] in bus.window_coords else COORD_SCREEN


def _rect(body: list[Any]) -> Rect | None:
    x, y, width, height = body[0]
    if x == OFFSCREEN or y == OFFSCREEN:
        return None
    return Rect(left=x, top=y, right=x + width, bottom=y + height)


def child_count(bus: AtspiBus, ref: Ref) -> Awaitable[int | None]:
    return bus.ask(ref, GET_PROPERTY, [ACCESSIBLE, "ChildCount"], _int_value)


def value(body: list[Any]) -> Any:
    """A property's value, out of Properties.Get's variant."""
    return body[0].value


def _int_value(body: list[Any]) -> int:
    return int(body[0].value)


async def read_text(bus: AtspiBus, ref: Ref, limit: int, *, check_empty: bool = True) -> str | None:
    """The object's text, cut at `limit` characters.

    Asked with end offset -1 (the whole text): LibreOffice answers "" for any end offset past
    the end, so asking for `limit` characters read every short text as empty. Where -1 is not
    understood either, an empty answer is checked against CharacterCount (`check_empty`; a
    caller that has seen -1 work for the same kind of object can skip that call).
    """
    reply = await bus.call_or_none(ref, GET_TEXT, [0, -1])
    if reply is None:
        return None
    text = str(reply[0])
    if not text and check_empty:
        count = await bus.call_or_none(ref, GET_PROPERTY, [TEXT, "CharacterCount"])
        length = int(count[0].value) if count else 0
        if length > 0:
            reply = await bus.call_or_none(ref, GET_TEXT, [0, min(length, limit)])
            text = str(reply[0]) if reply else ""
    return text[:limit]
