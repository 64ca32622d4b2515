"""The AT-SPI bus connection: every call has a timeout, calls in flight are capped, and
D-Bus errors become exceptions that say what went away.

dbus-fast drops the connection (BlockingIOError) when ~1,500 calls are written at once, so
pipelined reads go through a semaphore; 64 in flight is as fast as more on these machines.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Any

from dbus_fast import Message, MessageType
from dbus_fast.aio import MessageBus
from dbus_fast.errors import DBusFastError

from roundhouse.devices.linux.atspi_constants import PROPERTIES

log = logging.getLogger(__name__)

CONNECT_TIMEOUT = 5.0
MAX_IN_FLIGHT = 64
CALL_TIMEOUT = 3.0  # seconds; a live app answers in well under 1 ms, a stalled VM in < 1 s

Ref = tuple[str, str]  # (bus name, object path): an accessible object

_APP_GONE = {
    "org.freedesktop.DBus.Error.ServiceUnknown",
    "org.freedesktop.DBus.Error.NameHasNoOwner",
    "org.freedesktop.DBus.Error.NoReply",
    "org.freedesktop.DBus.Error.Disconnected",
}
_OBJECT_GONE = {
    "org.freedesktop.DBus.Error.UnknownObject",
    "org.freedesktop.DBus.Error.UnknownMethod",
    "org.freedesktop.DBus.Error.UnknownInterface",
}


class AtspiError(RuntimeError):
    """The accessibility tree could not be read or used."""


class AtspiTimeout(AtspiError):
    """An application did not answer in time: it is hung, stopped, or busy."""


class WindowGone(AtspiError):
    """The window, or the application owning it, no longer exists."""


class NodeGone(AtspiError):
    """The accessible object no longer exists (or never did), or lacks that interface."""


def node_id(ref: Ref) -> str:
    """ "<bus name>:<object path>": stable while the object lives."""
    return f"{ref[0]}:{ref[1]}"


def parse_node_id(value: str) -> Ref:
    bus, separator, path = value.partition(":/")
    if not separator or not bus:
        raise NodeGone(f"{value!r} is not a control id (expected '<bus name>:/<object path>')")
    return bus, "/" + path


class AtspiBus:
    """One connection to the AT-SPI bus."""

    def __init__(
        self,
        bus: MessageBus,
        *,
        max_in_flight: int = MAX_IN_FLIGHT,
        timeout: float = CALL_TIMEOUT,
    ) -> None:
        self.bus = bus
        self.timeout = timeout
        self._slots = asyncio.Semaphore(max_in_flight)
        self.calls = 0  # how many round trips: the benchmark and tests read it

    @property
    def connected(self) -> bool:
        return bool(self.bus.connected)

    async def call(
        self,
        ref: Ref,
        interface: str,
        member: str,
        signature: str = "",
        body: Sequence[Any] = (),
    ) -> list[Any]:
        message = Message(
            destination=ref[0],
            path=ref[1],
            interface=interface,
            member=member,
            signature=signature,
            body=list(body),
        )
        async with self._slots:
            self.calls += 1
            try:
                # asyncio.timeout, not wait_for: no extra task per call.
                async with asyncio.timeout(self.timeout):
                    reply = await self.bus.call(message)
            except TimeoutError:
                raise AtspiTimeout(
                    f"{ref[0]} did not answer {member} within {self.timeout:g} s"
                ) from None
            except (EOFError, OSError) as error:  # OSError: dbus-fast closed the socket
                raise AtspiError(f"the AT-SPI bus connection was lost: {error!r}") from None
        if reply is None:
            raise AtspiError(f"{member}: no reply")
        if reply.message_type is MessageType.ERROR:
            name = reply.error_name or ""
            detail = reply.body[0] if reply.body else name
            if name in _APP_GONE:
                raise WindowGone(f"application {ref[0]} is gone ({detail})")
            if name in _OBJECT_GONE:
                raise NodeGone(f"{node_id(ref)}: {detail}")
            raise AtspiError(f"{member} on {node_id(ref)} failed: {name}: {detail}")
        return list(reply.body)

    async def get_property(self, ref: Ref, interface: str, name: str) -> Any:
        (variant,) = await self.call(ref, PROPERTIES, "Get", "ss", [interface, name])
        return variant.value

    async def call_or_none(
        self,
        ref: Ref,
        interface: str,
        member: str,
        signature: str = "",
        body: Sequence[Any] = (),
    ) -> list[Any] | None:
        """For bulk reads: an object that vanished mid-read loses that detail, nothing more.

        A vanished application or a timeout still raises: the whole read is then void.
        """
        try:
            return await self.call(ref, interface, member, signature, body)
        except WindowGone:
            raise
        except AtspiTimeout:
            raise
        except AtspiError as error:
            log.debug("skipping %s.%s: %s", interface, member, error)
            return None

    async def name_pid(self, name: str) -> int | None:
        try:
            (pid,) = await self.call(
                ("org.freedesktop.DBus", "/org/freedesktop/DBus"),
                "org.freedesktop.DBus",
                "GetConnectionUnixProcessID",
                "s",
                [name],
            )
        except AtspiError:
            return None
        return int(pid)


async def a11y_address(session_address: str) -> str:
    """The AT-SPI bus of a session bus (asking activates the bus launcher)."""
    try:
        session = await asyncio.wait_for(
            MessageBus(bus_address=session_address).connect(), CONNECT_TIMEOUT
        )
    except (OSError, TimeoutError, DBusFastError) as error:
        raise AtspiError(f"cannot reach the session bus {session_address}: {error}") from None
    try:
        reply = await asyncio.wait_for(
            session.call(
                Message(
                    destination="org.a11y.Bus",
                    path="/org/a11y/bus",
                    interface="org.a11y.Bus",
                    member="GetAddress",
                )
            ),
            CONNECT_TIMEOUT,
        )
    except TimeoutError:
        raise AtspiTimeout("the AT-SPI bus launcher did not answer GetAddress") from None
    finally:
        session.disconnect()
    if reply is None or reply.message_type is MessageType.ERROR:
        raise AtspiError(
            "no AT-SPI bus on this session bus (is at-spi2-core installed?): "
            f"{reply.body if reply is not None else 'no reply'}"
        )
    return str(reply.body[0])
