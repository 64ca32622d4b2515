"""A D-Bus connection for the display backends' synchronous calls.

The seam's calls are synchronous (the tools run them in a thread); dbus-fast is asyncio.
So each connection runs on an event loop of its own, in a thread, and a call waits for
its answer with a timeout. One connection for a backend's life matters here: Mutter's
remote-desktop session belongs to the connection that made it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from dbus_fast import Message, MessageType
from dbus_fast.aio import MessageBus
from dbus_fast.errors import DBusFastError
from dbus_fast.service import ServiceInterface

from roundhouse.devices.linux.display.base import DisplayUnavailable, RouteRefused
from roundhouse.devices.linux.system.bus_daemon import BUS_DAEMON, BUS_DAEMON_PATH

DBUS = (BUS_DAEMON, BUS_DAEMON_PATH, BUS_DAEMON)
# Seconds a compositor gets to answer. KWin and GNOME Shell do their D-Bus work on the
# thread that composites: starting Chromium beside two other busy desktops held KWin's
# answers back 2 s on this machine kind. A compositor that has died does not answer at
# all, and its closed connection says so at once (BusGone).
CALL_TIMEOUT = 10.0


class DBusCallError(RuntimeError):
    """The service answered with an error (its D-Bus name is `name`)."""

    def __init__(self, name: str, text: str) -> None:
        super().__init__(f"{name}: {text}" if text else name)
        self.name = name
        self.text = text


class BusGone(RuntimeError):
    """The connection to the bus is closed (the session ended)."""


class Signals:
    """Signals as they arrive (put on the bus's loop thread, taken from any other)."""

    def __init__(self) -> None:
        self._arrived: list[list[Any]] = []
        self._condition = threading.Condition()

    def put(self, body: list[Any]) -> None:
        with self._condition:
            self._arrived.append(body)
            self._condition.notify_all()

    def next(self, timeout: float) -> list[Any]:
        """The first signal not taken yet; TimeoutError when none comes within `timeout`."""
        with self._condition:
            if not self._condition.wait_for(lambda: bool(self._arrived), timeout):
                raise TimeoutError(f"no signal within {timeout:g} s")
            return self._arrived.pop(0)


class SyncBus:
    """One connection to a bus, callable from any thread."""

    def __init__(
        self, address: str, timeout: float = CALL_TIMEOUT, *, unix_fds: bool = False
    ) -> None:
        self.timeout = timeout
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="roundhouse-dbus", daemon=True
        )
        self._thread.start()

        async def connect() -> MessageBus:
            return await MessageBus(bus_address=address, negotiate_unix_fd=unix_fds).connect()

        try:
            self._bus: MessageBus = self._run(connect(), timeout)
        except BaseException:
            self._stop_loop()
            raise

    def _run(self, coroutine: Any, timeout: float) -> Any:
        future = asyncio.run_coroutine_threadsafe(coroutine, self._loop)
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise TimeoutError(f"no answer on D-Bus within {timeout:g} s") from None
        except (OSError, EOFError) as error:
            raise BusGone(f"the D-Bus connection is gone: {error}") from None

    @property
    def unique_name(self) -> str:
        return str(self._bus.unique_name)

    def call(
        self,
        destination: str,
        path: str,
        interface: str,
        member: str,
        signature: str = "",
        body: Sequence[Any] = (),
        *,
        timeout: float | None = None,
        unix_fds: Sequence[int] = (),
    ) -> list[Any]:
        """Call a method and return its answer's body; DBusCallError for an error answer."""
        message = Message(
            destination=destination,
            path=path,
            interface=interface,
            member=member,
            signature=signature,
            body=list(body),
            unix_fds=list(unix_fds),
        )
        return self.call_all([message], timeout=timeout)[0]

    def call_all(
        self, messages: Sequence[Message], *, timeout: float | None = None
    ) -> list[list[Any]]:
        """Send method calls one after another without waiting, then wait for every answer
        (their bodies, in order): a service handles one connection's calls in the order
        sent, so a run of calls costs one round trip, not one each. DBusCallError for the
        first error answer."""
        if not self._bus.connected:
            raise BusGone("the D-Bus connection is gone")

        async def send() -> list[Message | None]:
            # Each call is written out when its task first runs, in the order created.
            return list(await asyncio.gather(*(self._bus.call(m) for m in messages)))

        try:
            replies = self._run(send(), timeout or self.timeout)
        except DBusFastError as error:
            raise DBusCallError(type(error).__name__, str(error)) from None
        bodies = []
        for reply in replies:
            if reply is None:
                raise BusGone("the D-Bus connection closed before the answer")
            if reply.message_type is MessageType.ERROR:
                text = str(reply.body[0]) if reply.body else ""
                raise DBusCallError(reply.error_name or "error", text)
            bodies.append(list(reply.body))
        return bodies

    def watch(self, interface: str, member: str, path: str) -> Signals:
        """The bodies of the signals `member` of `interface` that `path` sends from now on."""
        signals = Signals()
        self.on_signal(interface, member, path, signals.put)
        return signals

    def on_signal(
        self, interface: str, member: str, path: str, handler: Callable[[list[Any]], None]
    ) -> None:
        """Call `handler` (on the bus's loop thread) with the body of each signal `member`
        of `interface` that `path` sends from now on."""

        def on_message(message: Message) -> None:
            if message.message_type is MessageType.SIGNAL and (
                message.interface,
                message.member,
                message.path,
            ) == (interface, member, path):
                handler(list(message.body))

        async def add() -> None:
            self._bus.add_message_handler(on_message)

        self._run(add(), self.timeout)
        rule = f"type='signal',interface='{interface}',member='{member}',path='{path}'"
        self.call(*DBUS, "AddMatch", "s", [rule])

    def has_name(self, name: str) -> bool:
        (owned,) = self.call(*DBUS, "NameHasOwner", "s", [name])
        return bool(owned)

    def export(self, path: str, interface: ServiceInterface) -> None:
        """Serve `interface` at `path` on this connection (its methods run on the bus's
        loop thread)."""
        self._loop.call_soon_threadsafe(self._bus.export, path, interface)

    def close(self) -> None:
        """Disconnect (waiting, briefly, until the socket is closed) and end the loop."""
        if self._loop.is_closed():
            return

        async def disconnect() -> None:
            self._bus.disconnect()
            with contextlib.suppress(Exception):  # whatever it ended with, it has ended
                await asyncio.wait_for(self._bus.wait_for_disconnect(), 1.0)  # type: ignore[no-untyped-call]

        with contextlib.suppress(TimeoutError, BusGone):
            self._run(disconnect(), 2.0)
        self._stop_loop()

    def _stop_loop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(self.timeout)
        if not self._thread.is_alive():
            self._loop.close()


def session_bus_address(env: Mapping[str, str], desktop: str) -> str:
    """The session bus a desktop driven over D-Bus is reached on (`desktop` names it in the
    error: "GNOME", "KWin"); DisplayUnavailable when the session has none."""
    address = env.get("DBUS_SESSION_BUS_ADDRESS")
    if not address:
        raise DisplayUnavailable(f"{desktop} is driven over D-Bus, and this session has no bus")
    return address


@contextlib.contextmanager
def opening_on_bus(
    bus: SyncBus, refused: type[Exception], fix: str = ""
) -> Iterator[contextlib.ExitStack]:
    """Open a display server's parts on `bus`. Should one fail, the bus is closed, and so is
    what was put on the stack yielded; `refused` (the compositor saying no, with its reason)
    becomes RouteRefused saying the same, with `fix`."""
    with contextlib.ExitStack() as opened:
        opened.callback(bus.close)
        try:
            yield opened
        except refused as error:
            raise RouteRefused(str(error), fix) from None
        opened.pop_all()
