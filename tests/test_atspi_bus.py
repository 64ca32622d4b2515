"""The bus's calls without a desktop: a connection that records what is sent and answers
when told. Calls over the cap wait for answers; one watchdog times out what is not
answered; errors say what went away."""

from __future__ import annotations

import asyncio
import io
from collections.abc import Callable
from typing import Any, cast

import pytest
from dbus_fast import Message
from dbus_fast._private.unmarshaller import Unmarshaller
from dbus_fast.aio import MessageBus

from roundhouse.devices.linux.atspi import bus as atspi_bus
from roundhouse.devices.linux.atspi.bus import (
    AtspiBus,
    AtspiError,
    AtspiTimeout,
    NodeGone,
    WindowGone,
)
from roundhouse.devices.linux.atspi.constants import (
    ACCESSIBLE,
    GET_ROLE,
    GET_STATE,
    GET_TEXT,
    REGISTER_EVENT,
)

APP = ":1.42"
Answer = Callable[[Message | None, Exception | None], None]


class Connection:
    """What AtspiBus uses of a dbus-fast connection: serials, the reply handlers by serial,
    and a writer given marshalled bytes, which it decodes so that a test reads each call.
    Answers nothing by itself."""

    def __init__(self, fails_with: Exception | None = None) -> None:
        self.sent: list[Message] = []
        self.fails_with = fails_with
        self.connected = True
        self._disconnected = False
        self._method_return_handlers: dict[int, Answer] = {}
        self._writer = self
        self._serial = 0

    def next_serial(self) -> int:
        self._serial += 1
        return self._serial

    def schedule_write(self, message: Any, written: asyncio.Future[None]) -> None:
        assert written.done()  # the writer sets nothing for a call: its reply does
        if self.fails_with is not None:
            # As dbus-fast: a failed write closes the connection, which answers every
            # waiting call with the error; then registering the socket again raises.
            self._disconnected = True
            for answer in self._method_return_handlers.values():
                answer(None, self.fails_with)
            self._method_return_handlers.clear()
            raise self.fails_with
        wire = Unmarshaller(io.BytesIO(bytes(message._marshall(False))))
        wire.unmarshall()
        self.sent.append(wire.message)

    def _reply(self, index: int) -> tuple[Message, Answer]:
        message = self.sent[index]
        return message, self._method_return_handlers.pop(message.serial)

    def answer(self, index: int, *body: Any, signature: str = "u") -> None:
        message, reply = self._reply(index)
        reply(Message.new_method_return(message, signature, list(body)), None)

    def fail(self, index: int, error: str) -> None:
        message, reply = self._reply(index)
        reply(Message.new_error(message, error, "it went away"), None)

    def disconnect(self) -> None:
        self.connected = False


def _bus(connection: Connection, **options: Any) -> AtspiBus:
    return AtspiBus(cast(MessageBus, connection), **options)


def _state(bus: AtspiBus, path: str = "/a") -> Any:
    return bus.call((APP, path), GET_STATE)


async def test_calls_over_the_cap_wait_for_answers_and_keep_their_order() -> None:
    connection = Connection()
    bus = _bus(connection, max_in_flight=2)
    first, second, third = _state(bus, "/1"), _state(bus, "/2"), _state(bus, "/3")
    assert [message.path for message in connection.sent] == ["/1", "/2"]
    connection.answer(1, 7)
    assert [message.path for message in connection.sent] == ["/1", "/2", "/3"]
    connection.answer(0, 5)
    connection.answer(2, 9)
    assert await asyncio.gather(first, second, third) == [[5], [7], [9]]
    assert bus.calls == 3
    assert connection.sent[0].destination == APP  # through the bus: addressed


async def test_an_unanswered_call_times_out_and_its_late_answer_is_dropped() -> None:
    connection = Connection()
    bus = _bus(connection, max_in_flight=1, timeout=0.05)
    stalled, queued = _state(bus, "/stalled"), _state(bus, "/queued")
    with pytest.raises(AtspiTimeout, match=f"{APP} did not answer GetState within 0.05 s"):
        await stalled
    # Its slot is free again: the queued call went out, and is answered.
    assert [message.path for message in connection.sent] == ["/stalled", "/queued"]
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
    gone_object = bus.call((APP, "/x"), GET_ROLE)
    skipped = bus.call_or_none((APP, "/x"), GET_ROLE)
    gone_app = bus.call_or_none((APP, "/y"), GET_ROLE)
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
    assert not through_bus.sent and own.sent[0].destination is None
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


async def test_a_call_asked_again_is_written_from_its_kept_bytes_with_its_own_serial() -> None:
    connection = Connection()
    bus = _bus(connection)
    first, again = _state(bus, "/same"), _state(bus, "/same")
    text = bus.call_or_none((APP, "/same"), GET_TEXT, [0, -1])
    sent = connection.sent
    assert [m.serial for m in sent] == [1, 2, 3]
    assert (sent[1].destination, sent[1].path, sent[1].interface, sent[1].member) == (
        APP,
        "/same",
        ACCESSIBLE,
        "GetState",
    )
    assert sent[2].body == [0, -1] and sent[2].signature == "ii"
    connection.answer(1, 8)  # each answer reaches its own caller, by serial
    connection.answer(0, 7)
    connection.answer(2, "cell", signature="s")
    assert await asyncio.gather(first, again, text) == [[7], [8], ["cell"]]
    # Listeners' lists cannot key the kept bytes; such a call is written all the same.
    listen = bus.call((APP, "/r"), REGISTER_EVENT, ["focus:", [], ""])
    assert connection.sent[3].body == ["focus:", [], ""]
    connection.answer(3)
    assert await listen == []


async def test_the_kept_bytes_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(atspi_bus, "MAX_KEPT_MESSAGES", 2)
    connection = Connection()
    bus = _bus(connection)
    for index, path in enumerate(["/1", "/2", "/3", "/1"]):
        asked = _state(bus, path)
        connection.answer(index, index)
        assert await asked == [index]
        assert len(bus._templates) <= 2
    assert [m.path for m in connection.sent] == ["/1", "/2", "/3", "/1"]


async def test_a_closed_connection_answers_at_once() -> None:
    connection = Connection()
    connection._disconnected = True
    bus = _bus(connection, timeout=30.0)
    async with asyncio.timeout(1):  # not the 30 s of a call that is never answered
        with pytest.raises(AtspiError, match="connection was lost"):
            await _state(bus)
    assert not connection.sent
