"""The bus's own service, org.freedesktop.DBus (who owns a name, which process a connection
is, the environment it starts services with), addressed in one place for every caller."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dbus_fast import Message

BUS_DAEMON = "org.freedesktop.DBus"  # its bus name, and its interface's
BUS_DAEMON_PATH = "/org/freedesktop/DBus"


def bus_daemon_message(member: str, signature: str = "", body: Sequence[Any] = ()) -> Message:
    """A call of `member` ("NameHasOwner", ...) on the bus itself."""
    return Message(
        BUS_DAEMON, BUS_DAEMON_PATH, BUS_DAEMON, member, signature=signature, body=[*body]
    )
