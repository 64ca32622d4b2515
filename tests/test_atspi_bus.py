"""The bus's calls without a desktop: a connection that records what is sent and answers
when told. Calls over the cap wait for answers; one watchdog times out what is not
answered; errors say what went away."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, cast

import pytest
from dbus_fast import Message
from dbus_fast.aio import MessageBus

from roundhouse.devices.linux.atspi_bus import (
    AtspiBus,
    AtspiError,
    AtspiTimeout,
    NodeGone,
    WindowGone,
)
from roundhouse.devices.linux.atspi_constants import ACCESSIBLE

APP = ":1.42"
Answer = Callable[[Message | None, Exception | None], None]


class Connection:
    """Keeps each call and its reply callback; answers nothing by itself."""

    def __init__(self, fails_with: Exception | None = None) -> None:
        self.sent: list[tuple[Message, Answer]] = []
        self.fails_with = fails_with
        self.connected = True

    def _call(self, message: Message, answer: Answer) -> None:
        if self.fails_with is not None:
            answer(None, self.fails_with)  # dbus-fast answers every waiting call on closing
            raise self.fails_with
        message.serial = len(self.sent) + 1  # as dbus-fast numbers what it sends
        self.sent.append((message, answer))

    def answer(self, index: int, *body: Any, signature: str = "u") -> None:
        message, reply = self.sent[index]
        reply(Message.new_method_return(message, signature, list(body)), None)

    def fail(self, index: int, error: str) -> None:
        message, reply = self.sent[index]
        reply(Message.new_error(message, error, "it went away"), None)

    def disconnect(self) -> None:
        self.connected = False


def _bus(connection: Connection, **options: Any) -> AtspiBus:
    return AtspiBus(cast(MessageBus, connection), **options)


def _state(bus: AtspiBus, path: str = "/a") -> Any:
    return bus.call((APP, path), ACCESSIBLE, "GetState")


async def test_calls_over_the_cap_wait_for_answers_and_keep_their_order() -> None:
    connection = Connection()
    bus = _bus(connection, max_in_flight=2)
    first, second, third = _state(bus, "/1"), _state(bus, "/2"), _state(bus, "/3")
    assert [message.path for message, _ in connection.sent] == ["/1", "/2"]
    connection.answer(1, 7)
    assert [message.path for message, _ in connection.sent] == ["/1", "/2", "/3"]
    connection.answer(0, 5)
    connection.answer(2, 9)
    assert await asyncio.gather(first, second, third) == [[5], [7], [9]]
    assert bus.calls == 3
    assert connection.sent[0][0].destination == APP  # through the bus: addressed


async def test_an_unanswered_call_times_out_and_its_late_answer_is_dropped() -> None:
    connection = Connection()
    bus = _bus(connection, max_in_flight=1, timeout=0.05)
    stalled, queued = _state(bus, "/stalled"), _state(bus, "/queued")
    with pytest.raises(AtspiTimeout, match=f"{APP} did not answer GetState within 0.05 s"):
        await stalled
    # Its slot is free again: the queued call went out, and is answered.
    assert [message.path for message, _ in connection.sent] == ["/stalled", "/queued"]
    connection.answer(0, 1)  # too late: nobody waits for it, and it frees nothing twice
    connection.answer(1, 2)
    assert await queued == [2]
    later = _state(bus, "/later")
    assert len(connection.sent) == 3  # one slot, and it is free
    connection.answer(2, 3)
    assert await later == [3]


async def test_a_shorter_timeout_is_kept_even_while_a_longer_one_waits() -> None:
    connection = Connection()
    bus = _bus(connection, timeout=30.0)
    slow = _state(bus, "/slow")
    bus.timeout = 0.05
    async with asyncio.timeout(5):  # the watchdog wakes for the sooner deadline
        with pytest.raises(AtspiTimeout):
            await _state(bus, "/quick")
    assert not slow.done()
    connection.answer(0, 4)
    assert await slow == [4]


async def test_errors_say_what_went_away() -> None:
    connection = Connection()
    bus = _bus(connection)
    gone_object = bus.call((APP, "/x"), ACCESSIBLE, "GetRole")
    skipped = bus.call_or_none((APP, "/x"), ACCESSIBLE, "GetRole")
    gone_app = bus.call_or_none((APP, "/y"), ACCESSIBLE, "GetRole")
    connection.fail(0, "org.freedesktop.DBus.Error.UnknownObject")
    connection.fail(1, "org.freedesktop.DBus.Error.UnknownObject")
    connection.fail(2, "org.freedesktop.DBus.Error.ServiceUnknown")
    with pytest.raises(NodeGone, match=f"{APP}:/x: it went away"):
        await gone_object
    assert await skipped is None  # a bulk read loses that detail only
    with pytest.raises(WindowGone, match=f"application {APP} is gone"):
        await gone_app  # even for a bulk read: the whole read is void


async def test_a_closed_socket_is_a_lost_bus_or_through_its_own_a_gone_app() -> None:
    bus = _bus(Connection(fails_with=BrokenPipeError(32, "Broken pipe")))
    with pytest.raises(AtspiError, match="connection was lost"):
        await _state(bus)
    own = Connection(fails_with=BrokenPipeError(32, "Broken pipe"))
    bus = _bus(Connection())
    bus.direct[APP] = cast(MessageBus, own)
    with pytest.raises(WindowGone, match=f"application {APP} is gone"):
        await _state(bus)


async def test_a_direct_call_goes_to_the_application_unaddressed() -> None:
    own, through_bus = Connection(), Connection()
    bus = _bus(through_bus)
    bus.direct[APP] = cast(MessageBus, own)
    call = _state(bus)
    assert not through_bus.sent and own.sent[0][0].destination is None
    own.answer(0, 1)
    assert await call == [1]


async def test_interfaces_are_asked_once_of_an_application_called_directly() -> None:
    own, through_bus = Connection(), Connection()
    bus = _bus(through_bus)
    bus.direct[APP] = cast(MessageBus, own)  # at-spi2-atk: a path is never reused
    first = bus.interfaces((APP, "/a"))
    own.answer(0, ["org.a11y.atspi.Accessible", "org.a11y.atspi.Action"], signature="as")
    assert await first == {"org.a11y.atspi.Accessible", "org.a11y.atspi.Action"}
    assert await bus.interfaces((APP, "/a")) == await first
    assert len(own.sent) == 1
    # Through the bus (Qt offers no socket, and may reuse a path): asked every time.
    other = ":1.7"
    for index in range(2):
        asked = bus.interfaces((other, "/a"))
        through_bus.answer(index, ["org.a11y.atspi.Accessible"], signature="as")
        assert await asked == {"org.a11y.atspi.Accessible"}
    assert len(through_bus.sent) == 2
