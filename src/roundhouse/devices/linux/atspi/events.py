"""What the applications announce over AT-SPI, heard as witnesses of change, not as data.

Two things ask it one question: has this application announced anything since a moment?
The settle (settle.py) waits for an application to stop announcing before an action's
effect is read, and the kept reads (kept.py) serve a window again only while its
application has announced nothing. Each application gets a Changes (changes.py) bumped by
every event it sends but one kind, which changes nothing: a property announced again with
the value it was last announced with. GTK 3 names a tree view's cells lazily as they are
asked, and announces each name as it does: Thunar sent 8 such events per read of its file
list, the same 8 every time. Anything else counts: a caret moved, a selection, a bounds
change.

`caught_up(app)` makes the answer exact: it asks the application something through the bus
daemon, which keeps one sender's messages in order, so once the answer is in, every event
the application sent before answering it has been heard (an application called on its own
socket still sends its events through the bus).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any

from dbus_fast import Message, MessageType
from dbus_fast.aio import MessageBus

from roundhouse.devices.linux.atspi.bus import (
    AtspiBus,
    AtspiError,
    AtspiTimeout,
    NodeGone,
    WindowGone,
)
from roundhouse.devices.linux.atspi.constants import (
    REGISTER_EVENT,
    REGISTRY_BUS,
    REGISTRY_PATH,
    Method,
)
from roundhouse.devices.linux.display.changes import Changes
from roundhouse.devices.linux.system.bus_daemon import BUS_DAEMON, BUS_DAEMON_PATH

log = logging.getLogger(__name__)

EVENT_PREFIX = "org.a11y.atspi.Event."
# The event classes registered with the registry (applications send only what some client
# listens for) and the interfaces their signals come on.
REGISTERED = ("object:", "window:", "focus:")
INTERFACES = ("Object", "Window", "Focus")
ADD_MATCH = Method(BUS_DAEMON, "AddMatch", "s")
PING = Method("org.freedesktop.DBus.Peer", "Ping")
MAX_VALUES = 50_000  # announced values remembered (see module docstring); then forgotten
PING_TIMEOUT = 3.0  # seconds an application gets to answer caught_up


@dataclass
class _Heard:
    """One application's announcements."""

    changes: Changes


class Announcements:
    """The events of every application on one AT-SPI bus connection."""

    def __init__(self, bus: AtspiBus) -> None:
        self._bus = bus
        self._heard: dict[str, _Heard] = {}
        self._values: dict[tuple[str, str, str], Any] = {}
        self.listening = False

    async def listen(self) -> None:
        """Ask the bus for the events' signals and the registry to have them sent. A bus
        that refuses leaves the witnesses silent: nothing is then kept, and the settle
        watches the screen alone (see `listening`)."""
        connection = self._bus.bus
        connection.add_message_handler(self._on_message)
        try:
            for interface in INTERFACES:
                rule = f"type='signal',interface='{EVENT_PREFIX}{interface}'"
                await self._bus.call((BUS_DAEMON, BUS_DAEMON_PATH), ADD_MATCH, [rule])
            for event in REGISTERED:
                await self._bus.call((REGISTRY_BUS, REGISTRY_PATH), REGISTER_EVENT, [event, [], ""])
        except AtspiError as error:
            log.warning("AT-SPI events not heard (%s): reads are not kept", error)
            connection.remove_message_handler(self._on_message)
            return
        self.listening = True

    def changes(self, app: str) -> Changes:
        """What `app` (its bus name) has announced."""
        heard = self._heard.get(app)
        if heard is None:
            heard = self._heard[app] = _Heard(Changes(app))
        return heard.changes

    async def caught_up(self, app: str, timeout: float = PING_TIMEOUT) -> bool:
        """Once every event `app` sent before now has been heard (see the module docstring):
        True. One that refuses the question (an error reply) has answered all the same.
        False when it does not answer in time or is gone: what is kept of it is then read
        again, and the read says what happened. A bus connection that is lost raises
        AtspiError, as any read then does."""
        try:
            await asyncio.wait_for(self._bus.call_via_bus((app, "/"), PING), timeout)
        except NodeGone as error:  # UnknownMethod and the like: an answer
            log.debug("%s refused Ping (%s): answered all the same", app, error)
        except (TimeoutError, AtspiTimeout, WindowGone) as error:
            log.debug("%s: no answer to Ping (%s)", app, error)
            return False
        return True

    async def settled(self, app: str) -> bool:
        """As caught_up, for the settle: whether it answered, whatever went wrong (the look
        after the action reads the tree again, and says so)."""
        try:
            return await self.caught_up(app)
        except AtspiError as error:
            log.info("settle: %s did not answer (%s)", app, error)
            return False

    def _on_message(self, message: Message) -> None:
        """dbus-fast's handler for every incoming signal: an event bumps its sender's count."""
        if message.message_type is not MessageType.SIGNAL:
            return
        interface = message.interface or ""
        if not interface.startswith(EVENT_PREFIX) or not message.sender:
            return
        app, path, member = message.sender, message.path or "", message.member or ""
        body = message.body
        detail = str(body[0]) if body else ""
        if member == "PropertyChange" and len(body) > 3:
            if not self._new_value(app, path, detail, body[3]):
                return
        heard = self._heard.get(app)
        if heard is None:
            heard = self._heard[app] = _Heard(Changes(app))
        heard.changes.bump()

    def _new_value(self, app: str, path: str, name: str, value: Any) -> bool:
        """Whether a property's announced value differs from the one announced before."""
        shown = getattr(value, "value", value)
        if isinstance(shown, list | dict):
            return True  # an object reference or a list: not compared, always a change
        key = (app, path, name)
        if key in self._values and self._values[key] == shown:
            return False
        if len(self._values) >= MAX_VALUES:
            self._values.clear()
        self._values[key] = shown
        return True


def forget(connection: MessageBus, announcements: Announcements) -> None:
    """Stop hearing on a connection being closed."""
    connection.remove_message_handler(announcements._on_message)
