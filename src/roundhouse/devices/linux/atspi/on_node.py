"""What the desktop tools ask of one accessible object by its id, around an action: do its
action, set or insert its text, set its value, give it the focus, and read its state, caret,
text and interfaces as they are now. The reading of whole windows is the client's
(client.py); this is its other half, a part of the AccessibleTree seam (seam.py), over the
client's connected bus (`_connected`)."""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

from dbus_fast import Variant

from roundhouse.devices.linux.atspi.bus import AtspiBus, AtspiError, NodeGone, Ref, parse_node_id
from roundhouse.devices.linux.atspi.constants import (
    DO_ACTION,
    GET_ACTIONS,
    GET_PROPERTY,
    GET_STATE,
    GET_TEXT,
    GRAB_FOCUS,
    INSERT_TEXT,
    SET_PROPERTY,
    SET_TEXT_CONTENTS,
    TEXT,
    VALUE,
    Method,
    state_names,
)
from roundhouse.devices.linux.atspi.seam import TextRead


class OnNode(ABC):
    """A node's actions and state, by its id (parse_node_id)."""

    @abstractmethod
    async def _connected(self) -> AtspiBus:
        """The bus, connected (the client's)."""

    async def do_action(self, node_id: str, action: str | None = None) -> bool:
        """Perform the node's named action (default: its first, e.g. "click" or "press")."""
        ref = parse_node_id(node_id)
        reply = await self._on_node(ref, GET_ACTIONS)
        names = [str(item[0]) for item in reply[0]]
        if not names:
            raise AtspiError(f"control {node_id} has no actions")
        index = 0
        if action is not None:
            lowered = [name.lower() for name in names]
            if action.lower() not in lowered:
                raise AtspiError(f"control {node_id} has no action {action!r}; it has {names}")
            index = lowered.index(action.lower())
        (done,) = await self._on_node(ref, DO_ACTION, [index])
        return bool(done)

    async def set_text(self, node_id: str, text: str) -> bool:
        """Replace the node's whole text through EditableText (any Unicode, no keyboard)."""
        (done,) = await self._on_node(parse_node_id(node_id), SET_TEXT_CONTENTS, [text])
        return bool(done)

    async def insert_text(self, node_id: str, text: str) -> bool:
        """Insert text at the node's caret through EditableText (any Unicode, no keyboard:
        what a Wayland session's keyboard layout cannot type)."""
        ref = parse_node_id(node_id)
        bus = await self._connected()
        try:
            caret = int(await bus.get_property(ref, TEXT, "CaretOffset"))
        except NodeGone as error:
            raise NodeGone(f"control {node_id} has no text or no longer exists") from error
        # Its length in bytes: GTK counts them (22 characters of "Grüße … 東京" as 22 bytes
        # cut a character in two, and it inserted nothing, answering True); Qt takes the
        # text whole whatever the number above its length.
        length = len(text.encode())
        (done,) = await self._on_node(ref, INSERT_TEXT, [max(caret, 0), text, length])
        return bool(done)

    async def read_text(self, node_id: str, limit: int) -> TextRead:
        """At most `limit` characters of the node's text: all of it, or the stretch around
        its caret (a long document is not sent whole over the bus to check one line)."""
        ref = parse_node_id(node_id)
        bus = await self._connected()
        try:
            count = int(await bus.get_property(ref, TEXT, "CharacterCount"))
            caret = int(await bus.get_property(ref, TEXT, "CaretOffset"))
        except NodeGone as error:
            raise NodeGone(f"control {node_id} has no text or no longer exists") from error
        start = 0 if count <= limit else max(0, min(caret - limit // 2, count - limit))
        end = min(count, start + limit)
        (text,) = await self._on_node(ref, GET_TEXT, [start, end])
        return TextRead(text=str(text), start=start, length=count, caret=caret)

    async def caret(self, node_id: str) -> int:
        """Where the node's caret is (a character offset into its text)."""
        ref = parse_node_id(node_id)
        bus = await self._connected()
        try:
            return int(await bus.get_property(ref, TEXT, "CaretOffset"))
        except NodeGone as error:
            raise NodeGone(f"control {node_id} has no text or no longer exists") from error

    async def states(self, node_id: str) -> list[str]:
        """The node's states as they are now ("focused", "editable", ...)."""
        return state_names((await self._on_node(parse_node_id(node_id), GET_STATE))[0])

    async def grab_focus(self, node_id: str) -> bool:
        return bool((await self._on_node(parse_node_id(node_id), GRAB_FOCUS))[0])

    async def interfaces(self, node_id: str) -> frozenset[str]:
        """The node's interfaces (Action, EditableText, Value, ...): what it can be asked."""
        ref = parse_node_id(node_id)
        found = await (await self._connected()).interfaces(ref)
        if found is None:
            raise NodeGone(f"control {node_id} no longer exists")
        return found

    async def set_value(self, node_id: str, value: float) -> None:
        """Set the node's Value (a slider, a spin button) within its range."""
        ref = parse_node_id(node_id)
        low, high = await asyncio.gather(
            self._on_node(ref, GET_PROPERTY, [VALUE, "MinimumValue"]),
            self._on_node(ref, GET_PROPERTY, [VALUE, "MaximumValue"]),
        )
        minimum, maximum = float(low[0].value), float(high[0].value)
        if not minimum <= value <= maximum:
            raise AtspiError(f"{value:g} is outside the control's range {minimum:g}..{maximum:g}")
        await self._on_node(ref, SET_PROPERTY, [VALUE, "CurrentValue", Variant("d", value)])

    async def _on_node(self, ref: Ref, method: Method, body: Sequence[Any] = ()) -> list[Any]:
        bus = await self._connected()
        try:
            return await bus.call(ref, method, body)
        except NodeGone as error:
            kind = method.interface.rsplit(".", 1)[-1]
            raise NodeGone(
                f"control {ref[0]}:{ref[1]} no longer exists or has no {kind} interface"
            ) from error
