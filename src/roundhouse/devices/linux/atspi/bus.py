"""The AT-SPI bus connection: every call has a timeout, calls in flight are capped, and
D-Bus errors become exceptions that say what went away.

dbus-fast drops the connection (BlockingIOError) when ~1,500 calls are written at once, so
pipelined reads are capped; 64 in flight is as fast as more on these machines.

An application whose toolkit bridge offers its own socket (at-spi2-atk does: GTK 3,
LibreOffice, Chromium, Firefox) is called there directly once its window is found: the bus
daemon then routes none of its calls, which spared it ~60 ms of CPU per read of a Calc
sheet, on a machine of two cores that the reader and the application share with it.

Calls are handed to dbus-fast's reply handlers and writer directly, as the bytes kept from
the last time the same call was made with only the serial written in: a read asks the same
few members of the same objects every time, and dbus-fast's Message, call() and send() were
a tenth of the reader's CPU (read for read: Writer 50 -> 47 ms, Chromium 33 -> 29).
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar

from dbus_fast import Message, MessageType
from dbus_fast.aio import MessageBus
from dbus_fast.aio.message_bus import _MessageWriter
from dbus_fast.aio.message_reader import build_message_reader
from dbus_fast.errors import DBusFastError

from roundhouse.core.polling import until_async
from roundhouse.devices.linux.atspi.constants import (
    GET_APPLICATION_BUS_ADDRESS,
    GET_INTERFACES,
    GET_PROPERTY,
    ROOT_PATH,
    Method,
)
from roundhouse.devices.linux.system.bus_daemon import BUS_DAEMON, BUS_DAEMON_PATH

log = logging.getLogger(__name__)

CONNECT_TIMEOUT = 5.0
MAX_IN_FLIGHT = 64
MAX_KNOWN_INTERFACES = 100_000  # objects whose interfaces are kept; then forgotten at once
MAX_KEPT_MESSAGES = 20_000  # calls whose bytes are kept (~5 MB); then forgotten at once
SERIAL_AT = 8  # where a message's serial lies in its header (little-endian, as marshalled)
CALL_TIMEOUT = 3.0  # seconds; a live app answers in well under 1 ms, a stalled VM in < 1 s
CONNECTION_PID = Method(BUS_DAEMON, "GetConnectionUnixProcessID", "s")

Ref = tuple[str, str]  # (bus name, object path): an accessible object
T = TypeVar("T")
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


@dataclass
class _Call:
    ref: Ref
    method: Method
    body: list[Any]
    or_none: bool  # an object that is gone, or lacks the interface, answers None
    then: Callable[[list[Any]], Any] | None = None  # what the caller keeps of the body
    deadline: float = 0.0  # loop time; set when sent
    via_bus: bool = False  # through the bus daemon even where the application has a socket


class AtspiBus:
    """One connection to the AT-SPI bus, and direct ones to the applications that offer them.

    A call is a future answered from dbus-fast's reply callback: no task and no timer of its
    own (one watchdog times out every call), so that a read of ~1,000 pipelined calls costs
    the calls and little else.
    """

    def __init__(
        self,
        bus: MessageBus,
        *,
        max_in_flight: int = MAX_IN_FLIGHT,
        timeout: float = CALL_TIMEOUT,
    ) -> None:
        self.bus = bus
        self.timeout = timeout
        self.max_in_flight = max_in_flight
        self.calls = 0  # how many round trips: the benchmark and tests read it
        # Bus name -> a connection of the application's own (None: it offers none).
        self.direct: dict[str, MessageBus | None] = {}
        self._pending: dict[asyncio.Future[Any], _Call] = {}  # sent, not yet answered
        self._waiting: deque[tuple[asyncio.Future[Any], _Call]] = deque()
        self._watchdog: asyncio.TimerHandle | None = None
        self._interfaces: dict[Ref, frozenset[str]] = {}  # see interfaces()
        self._templates: dict[tuple[Any, ...], bytes] = {}  # see _marshalled()
        self._done: asyncio.Future[None] | None = None  # see _written()
        # Bus names of the applications whose rectangles are asked relative to their window
        # (GTK 4: see atspi_frames.Toolkit); the others are asked for screen coordinates.
        self.window_coords: set[str] = set()

    @property
    def connected(self) -> bool:
        return bool(self.bus.connected)

    def call(self, ref: Ref, method: Method, body: Sequence[Any] = ()) -> Awaitable[list[Any]]:
        return self._request(_Call(ref, method, list(body), or_none=False))

    def call_or_none(
        self, ref: Ref, method: Method, body: Sequence[Any] = ()
    ) -> Awaitable[list[Any] | None]:
        """For bulk reads: an object that vanished mid-read loses that detail, nothing more.

        A vanished application or a timeout still raises: the whole read is then void.
        """
        return self._request(_Call(ref, method, list(body), or_none=True))

    def call_via_bus(
        self, ref: Ref, method: Method, body: Sequence[Any] = ()
    ) -> Awaitable[list[Any]]:
        """As call, through the bus daemon even where the application offers its own socket:
        its answer then comes after every signal it sent the bus before it (the daemon keeps
        one sender's messages in order), which is what atspi_events.caught_up needs."""
        return self._request(_Call(ref, method, list(body), or_none=False, via_bus=True))

    def ask(
        self, ref: Ref, method: Method, body: Sequence[Any], then: Callable[[list[Any]], T]
    ) -> Awaitable[T | None]:
        """As call_or_none, the answer made into what the caller keeps by `then`: still a
        future, where a coroutine doing the same would cost a task in every gather (a read
        gathers ~1,000 of these)."""
        return self._request(_Call(ref, method, list(body), or_none=True, then=then))

    def interfaces(self, ref: Ref) -> Awaitable[frozenset[str] | None]:
        """The object's interfaces; None when it is gone. Asked once per object of an
        application called directly, whose bridge is at-spi2-atk: it never reuses an object
        path, and an object's interfaces are those of its type for its whole life (Chromium
        makes a new object when a node's change). Asked every time elsewhere: Qt's paths
        may be reused."""
        known = self._interfaces.get(ref)
        if known is not None:
            return answered(known)
        if self.direct.get(ref[0]) is None:
            return self.ask(ref, GET_INTERFACES, (), _interface_set)
        if len(self._interfaces) >= MAX_KNOWN_INTERFACES:
            self._interfaces.clear()
        return self.ask(ref, GET_INTERFACES, (), partial(self._keep, ref))

    def _keep(self, ref: Ref, body: list[Any]) -> frozenset[str]:
        self._interfaces[ref] = kept = _interface_set(body)
        return kept

    async def get_property(self, ref: Ref, interface: str, name: str) -> Any:
        (variant,) = await self.call(ref, GET_PROPERTY, [interface, name])
        return variant.value

    async def name_pid(self, name: str) -> int | None:
        try:
            (pid,) = await self.call((BUS_DAEMON, BUS_DAEMON_PATH), CONNECTION_PID, [name])
        except AtspiError:
            return None
        return int(pid)

    async def connect_direct(self, app: str) -> None:
        """Call `app` on its own socket from now on, where it offers one; else, or when that
        fails, through the bus as before."""
        if app in self.direct:
            return
        self.direct[app] = None  # asked once
        try:
            (address,) = await self.call((app, ROOT_PATH), GET_APPLICATION_BUS_ADDRESS)
        except (WindowGone, AtspiTimeout):
            raise
        except AtspiError as error:  # Qt: no such method
            log.debug("%s offers no direct connection: %s", app, error)
            return
        if not str(address).startswith("unix:"):
            return  # none offered; and never a network address an application names
        try:
            peer = await asyncio.wait_for(
                PeerBus(bus_address=str(address)).connect(), CONNECT_TIMEOUT
            )
        except (OSError, TimeoutError, DBusFastError, ValueError, AttributeError) as error:
            # AttributeError: a dbus-fast whose inside PeerBus no longer fits; the bus works
            log.info("%s: no direct connection to %s (%r); using the bus", app, address, error)
            return
        self.direct[app] = peer
        ended = asyncio.ensure_future(peer.wait_for_disconnect())  # type: ignore[no-untyped-call]
        ended.add_done_callback(partial(self._direct_ended, app, peer))

    def _direct_ended(self, app: str, peer: MessageBus, ended: asyncio.Future[Any]) -> None:
        if not ended.cancelled():
            ended.exception()  # retrieved: an application that exits closes its socket
        if self.direct.get(app) is peer:
            self.direct[app] = None  # its calls go through the bus, which says it is gone

    def close(self) -> None:
        for peer in self.direct.values():
            if peer is not None:
                peer.disconnect()
        self.direct.clear()
        self.bus.disconnect()
        if self._watchdog is not None:
            self._watchdog.cancel()
            self._watchdog = None

    # ------------------------------------------------------------ sending and answering

    def _request(self, call: _Call) -> asyncio.Future[Any]:
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        if len(self._pending) < self.max_in_flight and not self._waiting:
            self._send(future, call)
        else:
            self._waiting.append((future, call))
        return future

    def _send(self, future: asyncio.Future[Any], call: _Call) -> None:
        self.calls += 1
        direct = None if call.via_bus else self.direct.get(call.ref[0])
        connection = direct or self.bus
        loop = asyncio.get_running_loop()
        call.deadline = loop.time() + self.timeout
        self._pending[future] = call
        writer = connection._writer
        if connection._disconnected or writer is None:  # it answered all it had as it closed
            self._pending.pop(future)
            _settle(future, call, None, EOFError("the connection is closed"), direct is not None)
            return
        try:
            # dbus-fast's own reply path and writer, without its Message, call() and send()
            serial = connection.next_serial()
            answer = partial(self._answered, future, direct is not None)
            connection._method_return_handlers[serial] = answer
            data = self._marshalled(call, None if direct else call.ref[0], serial)
            writer.schedule_write(_Marshalled(data), self._written(loop))  # type: ignore[arg-type]
        except (EOFError, OSError) as error:  # OSError: dbus-fast closed the socket
            if self._pending.pop(future, None) is not None:  # else closing answered it
                _settle(future, call, None, error, direct is not None)
            return
        if self._watchdog is None or self._watchdog.when() > call.deadline:
            if self._watchdog is not None:
                self._watchdog.cancel()
            self._watchdog = loop.call_at(call.deadline, self._time_out)

    def _marshalled(self, call: _Call, destination: str | None, serial: int) -> bytearray:
        """The call's bytes on the wire. A read asks the same few members of the same
        objects every time: each call's bytes are kept and only its serial written in
        (marshalling was ~10% of the reader's CPU)."""
        key = (destination, call.ref[1], call.method, *call.body)
        try:
            template = self._templates.get(key)
            keep = True
        except TypeError:  # a list in the body (RegisterEvent): not kept
            template, keep = None, False
        if template is None:
            message = Message(
                destination=destination,
                path=call.ref[1],
                interface=call.method.interface,
                member=call.method.member,
                signature=call.method.signature,
                body=call.body,
                serial=serial,
            )
            template = bytes(message._marshall(False))
            if keep:
                if len(self._templates) >= MAX_KEPT_MESSAGES:
                    self._templates.clear()
                self._templates[key] = template
        data = bytearray(template)
        data[SERIAL_AT : SERIAL_AT + 4] = serial.to_bytes(4, "little")
        return data

    def _written(self, loop: asyncio.AbstractEventLoop) -> asyncio.Future[None]:
        """What dbus-fast's writer sets once a message is written: one future, done from
        the start, for every call (a reply says more than a write; the writer only skips a
        future that is done, and a failed write closes the connection, which answers every
        waiting call)."""
        if self._done is None or self._done.get_loop() is not loop:
            self._done = loop.create_future()
            self._done.set_result(None)
        return self._done

    def _answered(
        self,
        future: asyncio.Future[Any],
        direct: bool,
        reply: Message | None,
        error: Exception | None,
    ) -> None:
        call = self._pending.pop(future, None)
        if call is None:
            return  # answered after its time was up
        _settle(future, call, reply, error, direct)
        self._send_next()

    def _send_next(self) -> None:
        while self._waiting and len(self._pending) < self.max_in_flight:
            future, call = self._waiting.popleft()
            if not future.done():  # else its caller gave up
                self._send(future, call)

    def _time_out(self) -> None:
        """Fail every call past its deadline; wake again at the next deadline."""
        self._watchdog = None
        loop = asyncio.get_running_loop()
        now = loop.time()
        late = [future for future, call in self._pending.items() if call.deadline <= now]
        for future in late:
            call = self._pending.pop(future)
            if not future.done():
                unanswered = f"{call.ref[0]} did not answer {call.method.member}"
                future.set_exception(AtspiTimeout(f"{unanswered} within {self.timeout:g} s"))
        if self._pending:
            first = min(call.deadline for call in self._pending.values())
            self._watchdog = loop.call_at(first, self._time_out)
        self._send_next()


@dataclass
class _Marshalled:
    """A message already marshalled, as dbus-fast's writer takes a message."""

    data: bytearray
    unix_fds: None = None

    def _marshall(self, negotiate_unix_fd: bool) -> bytearray:
        return self.data


def _settle(
    future: asyncio.Future[Any],
    call: _Call,
    reply: Message | None,
    error: Exception | None,
    direct: bool,
) -> None:
    if future.done():
        return  # its caller gave up (cancelled)
    try:
        body = _outcome(call, reply, error, direct)
        future.set_result(call.then(body) if call.then and body is not None else body)
    except Exception as failure:  # noqa: BLE001 - its caller gets it, not dbus-fast's reader
        future.set_exception(failure)


def _interface_set(body: list[Any]) -> frozenset[str]:
    return frozenset(str(name) for name in body[0])


def answered(value: T) -> Awaitable[T]:
    """An answer at hand, as a done future: for gather, without a task."""
    future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
    future.set_result(value)
    return future


def _outcome(
    call: _Call, reply: Message | None, error: Exception | None, direct: bool
) -> list[Any] | None:
    """The reply's body, or the error it stands for."""
    app = call.ref[0]
    if reply is None:
        if direct:  # the application's own socket closed: it exited
            raise WindowGone(f"application {app} is gone ({error!r})")
        raise AtspiError(f"the AT-SPI bus connection was lost: {error!r}")
    if reply.message_type is not MessageType.ERROR:
        return list(reply.body)
    name = reply.error_name or ""
    detail = reply.body[0] if reply.body else name
    if name in _APP_GONE:
        raise WindowGone(f"application {app} is gone ({detail})")
    if call.or_none:
        log.debug("skipping %s.%s: %s", call.method.interface, call.method.member, detail)
        return None
    if name in _OBJECT_GONE:
        raise NodeGone(f"{node_id(call.ref)}: {detail}")
    raise AtspiError(f"{call.method.member} on {node_id(call.ref)} failed: {name}: {detail}")


class PeerBus(MessageBus):
    """A connection to one application's own D-Bus socket: no bus daemon between, so no
    Hello (dbus-fast's connect() always sends one, and an application does not answer it)."""

    async def connect(self) -> PeerBus:
        loop = asyncio.get_running_loop()
        for transport, options in self._bus_address:
            sock, stream, address = self._create_socket_for_transport(transport, options)
            sock.setblocking(False)
            try:
                await loop.sock_connect(sock, address)
                self._sock, self._stream, self._fd = sock, stream, sock.fileno()
                self._writer = _MessageWriter(self)
                await self._authenticate()
            except BaseException:
                stream.close()
                sock.close()
                raise
            reader = build_message_reader(
                sock, self._process_message, self._finalize, self._negotiate_unix_fd
            )
            loop.add_reader(self._fd, reader)
            # dbus-fast writes nothing until the bus daemon has named it; no daemon here.
            self.unique_name = ":direct"
            return self
        raise OSError(f"no address to connect to in {self._bus_address!r}")


async def a11y_address(session_address: str) -> str:
    """The AT-SPI bus of a session bus (asking activates the bus launcher).

    A launcher that has just died still owns its name for a moment: the session bus hands
    it the question, and answers NoReply when it is gone. Asked again, it starts a new one.
    """
    try:
        session = await asyncio.wait_for(
            MessageBus(bus_address=session_address).connect(), CONNECT_TIMEOUT
        )
    except (OSError, TimeoutError, DBusFastError) as error:
        raise AtspiError(f"cannot reach the session bus {session_address}: {error}") from None

    async def address() -> Message | None:
        reply = await _ask_address(session)
        starting = reply.message_type is MessageType.ERROR and reply.error_name == _NO_REPLY
        return None if starting else reply  # (the launcher is still starting the bus)

    try:
        async with asyncio.timeout(CONNECT_TIMEOUT):  # bounds each ask too
            reply = await until_async(address, CONNECT_TIMEOUT, "GetAddress", every=0.1)
    except TimeoutError:
        raise AtspiTimeout("the AT-SPI bus launcher did not answer GetAddress") from None
    finally:
        session.disconnect()
    if reply.message_type is MessageType.ERROR:
        raise AtspiError(
            f"no AT-SPI bus on this session bus (is at-spi2-core installed?): {reply.body}"
        )
    return str(reply.body[0])


_NO_REPLY = "org.freedesktop.DBus.Error.NoReply"


async def _ask_address(session: MessageBus) -> Message:
    reply = await session.call(
        Message(
            destination="org.a11y.Bus",
            path="/org/a11y/bus",
            interface="org.a11y.Bus",
            member="GetAddress",
        )
    )
    if reply is None:
        raise AtspiError("the session bus gave no reply to GetAddress")
    return reply
