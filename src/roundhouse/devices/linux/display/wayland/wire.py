"""A Wayland client in plain Python: the wire protocol over the compositor's socket.

Wayland is a stream of messages on a unix socket: an object id, an opcode, the size, then
the arguments (32-bit words; strings and arrays padded to 4 bytes), with file descriptors
passed beside them (SCM_RIGHTS). We need a handful of requests of a handful of
interfaces (a virtual pointer and keyboard, a screen copy, the output's size, the seat's
keymap), so this speaks the wire directly instead of loading libwayland-client: about the
size of the bindings we would otherwise have to generate.

An argument signature is a string of one letter per argument, as libwayland writes them:
i int, u uint, f fixed (24.8), s string, o object (0 = null), n new id, a array, h fd.

    connection = Connection.open(env, timeout=2.0)
    registry = connection.registry()            # name -> (interface, version)
    seat = connection.bind("wl_seat", 1)
    connection.roundtrip()

Every wait has a deadline: a compositor that does not answer raises WaylandTimeout, and
one that reports a protocol error (or hangs up) raises WaylandError with its message.
"""

from __future__ import annotations

import array
import contextlib
import os
import select
import socket
import struct
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from roundhouse.devices.linux.display.base import Closing

DISPLAY_ID = 1
# Seconds a compositor gets to answer: one busy starting an application beside other
# desktops stalled for ~2 s on this machine kind. One that died hangs up at once.
TIMEOUT = 5.0
MAX_FDS = 28  # libwayland's limit per message
HEADER = struct.Struct("=IHH")  # object id, opcode, size (native order: the same machine)

Handler = Callable[[int, bytes, deque[int]], None]  # opcode, payload, fds


class WaylandError(RuntimeError):
    """The compositor refused a request, or the connection is gone."""


class WaylandTimeout(WaylandError):
    """The compositor did not answer within the time given."""


class WaylandGone(WaylandError):
    """The connection to the compositor is gone (it exited, or hung up on us)."""


@dataclass(frozen=True)
class Global:
    name: int
    interface: str
    version: int


def socket_path(env: Mapping[str, str]) -> Path:
    """The compositor's socket, as libwayland finds it: WAYLAND_DISPLAY (a name in
    XDG_RUNTIME_DIR, or an absolute path; default "wayland-0")."""
    display = env.get("WAYLAND_DISPLAY") or "wayland-0"
    if display.startswith("/"):
        return Path(display)
    runtime = env.get("XDG_RUNTIME_DIR")
    if not runtime:
        raise WaylandError("XDG_RUNTIME_DIR is not set: cannot find the Wayland socket")
    return Path(runtime) / display


def fixed(value: float) -> int:
    """A number as Wayland's 24.8 fixed point."""
    return round(value * 256)


def encode(signature: str, args: Sequence[Any]) -> tuple[bytes, list[int]]:
    """The words of a request's arguments, and the fds that go beside them."""
    if len(signature) != len(args):
        raise ValueError(f"signature {signature!r} takes {len(signature)} arguments")
    out = bytearray()
    fds: list[int] = []
    for kind, value in zip(signature, args, strict=True):
        if kind == "i":
            out += struct.pack("=i", value)
        elif kind in "uon":
            out += struct.pack("=I", value or 0)
        elif kind == "f":
            out += struct.pack("=i", fixed(value))
        elif kind in "sa":
            data = value.encode() + b"\0" if kind == "s" else bytes(value)
            out += struct.pack("=I", len(data)) + data + b"\0" * (-len(data) % 4)
        elif kind == "h":
            fds.append(int(value))
        else:
            raise ValueError(f"unknown argument kind {kind!r}")
    return bytes(out), fds


def decode(signature: str, payload: bytes, fds: deque[int]) -> list[Any]:
    """An event's arguments from its payload (fds are taken from the front of `fds`)."""
    values: list[Any] = []
    offset = 0
    for kind in signature:
        if kind == "h":
            if not fds:
                raise WaylandError("an event promised a file descriptor and sent none")
            values.append(fds.popleft())
            continue
        (word,) = struct.unpack_from("=I", payload, offset)
        offset += 4
        if kind == "i":
            values.append(struct.unpack("=i", struct.pack("=I", word))[0])
        elif kind == "f":
            values.append(struct.unpack("=i", struct.pack("=I", word))[0] / 256)
        elif kind in "uon":
            values.append(word)
        elif kind in "sa":
            data = payload[offset : offset + word]
            offset += word + (-word % 4)
            values.append(data[:-1].decode(errors="replace") if kind == "s" and word else data)
        else:
            raise ValueError(f"unknown argument kind {kind!r}")
    return values


class Connection(Closing):
    """One client connection. Not thread-safe by itself: its owners serialise calls (the
    display backends hold a lock around each action)."""

    def __init__(self, sock: socket.socket, timeout: float) -> None:
        self.timeout = timeout
        self._sock = sock
        self._sock.setblocking(False)
        self._next_id = DISPLAY_ID + 1
        self._free_ids: list[int] = []
        self._handlers: dict[int, Handler] = {DISPLAY_ID: self._on_display}
        self._buffer = b""
        self._fds: deque[int] = deque()
        self._error: str | None = None
        self._gone = False
        self._globals: dict[int, Global] | None = None
        self._registry_id = 0
        self._batch: tuple[list[bytes], list[int]] | None = None  # messages, dup'd fds

    @classmethod
    def open(cls, env: Mapping[str, str], timeout: float = TIMEOUT) -> Connection:
        path = socket_path(env)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
        sock.settimeout(timeout)
        try:
            sock.connect(str(path))
        except OSError as error:
            sock.close()
            raise WaylandError(
                f"cannot connect to the Wayland compositor at {path}: {error}"
            ) from None
        return cls(sock, timeout)

    def close(self) -> None:
        self._sock.close()
        while self._fds:
            with contextlib.suppress(OSError):
                os.close(self._fds.popleft())

    # ------------------------------------------------------------ objects

    def new_id(self, handler: Handler | None = None) -> int:
        object_id = self._free_ids.pop() if self._free_ids else self._next_id
        if object_id == self._next_id:
            self._next_id += 1
        if handler is not None:
            self._handlers[object_id] = handler
        return object_id

    def track(self, object_id: int, handler: Handler) -> None:
        """Handle the events of an object the compositor made (an event's new_id argument:
        a foreign toplevel's handle)."""
        self._handlers[object_id] = handler

    def request(self, object_id: int, opcode: int, signature: str = "", *args: Any) -> None:
        """Send a request; the fds among the arguments are sent beside it (and stay ours
        to close)."""
        body, fds = encode(signature, args)
        message = HEADER.pack(object_id, opcode, HEADER.size + len(body)) + body
        if self._batch is not None:
            self._batch[0].append(message)
            self._batch[1].extend(os.dup(fd) for fd in fds)
            return
        self._send(message, fds)

    @contextlib.contextmanager
    def batch(self) -> Iterator[None]:
        """Send the requests made inside in one write, when the block ends: the compositor
        reads them together and handles them one after the other, no other client's
        request between them (a new keyboard and its keymap)."""
        if self._batch is not None:
            raise RuntimeError("a batch of requests is already open")
        messages: list[bytes] = []
        fds: list[int] = []
        self._batch = (messages, fds)
        try:
            yield
            if messages:
                self._send(b"".join(messages), fds)
        finally:
            self._batch = None
            for fd in fds:
                os.close(fd)

    def _send(self, message: bytes, fds: list[int]) -> None:
        self._raise()
        ancillary = (
            [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds).tobytes())] if fds else []
        )
        deadline = time.monotonic() + self.timeout
        sent = 0
        while sent < len(message):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise WaylandTimeout(f"the compositor took no data for {self.timeout:g} s")
            if not select.select([], [self._sock], [], remaining)[1]:
                continue
            try:
                if sent == 0 and ancillary:
                    sent += self._sock.sendmsg([message], ancillary)
                else:
                    sent += self._sock.send(message[sent:])
            except BlockingIOError:
                continue
            except OSError as error:
                self._gone = True
                self._error = f"the Wayland connection broke: {error}"
                raise WaylandGone(self._error) from None

    # ------------------------------------------------------------ the display and registry

    def registry(self) -> dict[int, Global]:
        """The compositor's globals (asked once; later globals are added as announced)."""
        if self._globals is None:
            self._globals = {}
            self._registry_id = self.new_id(self._on_registry)
            self.request(DISPLAY_ID, 1, "n", self._registry_id)
            self.roundtrip()
        return self._globals

    def find(self, interface: str) -> Global | None:
        return next((g for g in self.registry().values() if g.interface == interface), None)

    def bind(
        self,
        interface: str,
        version: int,
        handler: Handler | None = None,
        found: Global | None = None,
    ) -> int:
        """Bind the global `interface` (its first, or `found`: one of several outputs) at
        min(version, offered); WaylandError when the compositor offers none."""
        found = found or self.find(interface)
        if found is None:
            raise WaylandError(f"the compositor offers no {interface}")
        object_id = self.new_id(handler)
        self.request(
            self._registry_id,
            0,
            "usun",
            found.name,
            interface,
            min(version, found.version),
            object_id,
        )
        return object_id

    def version(self, interface: str) -> int:
        found = self.find(interface)
        return 0 if found is None else found.version

    def roundtrip(self, timeout: float | None = None) -> None:
        """Wait until the compositor has handled every request sent so far (and we every
        event it sent before answering)."""
        done = [False]

        def on_done(_opcode: int, _payload: bytes, _fds: deque[int]) -> None:
            done[0] = True

        callback = self.new_id(on_done)
        self.request(DISPLAY_ID, 0, "n", callback)
        self.wait(lambda: done[0], timeout, "answer a sync request")

    def wait(self, condition: Callable[[], bool], timeout: float | None, what: str) -> None:
        """Read and dispatch events until `condition()` holds; WaylandTimeout after
        `timeout` seconds (default: the connection's)."""
        limit = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + limit
        while not condition():
            self._raise()
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise WaylandTimeout(f"the compositor did not {what} within {limit:g} s")
            if select.select([self._sock], [], [], remaining)[0]:
                self._read()
            self._dispatch()

    def _read(self) -> None:
        try:
            data, ancillary, _flags, _ = self._sock.recvmsg(65536, socket.CMSG_SPACE(MAX_FDS * 4))
        except BlockingIOError:
            return
        except OSError as error:
            self._gone = True
            self._error = f"the Wayland connection broke: {error}"
            return
        if not data:
            self._gone = True
            self._error = self._error or "the compositor closed the connection"
            return
        for level, kind, payload in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds = array.array("i")
                fds.frombytes(payload[: len(payload) - len(payload) % fds.itemsize])
                self._fds.extend(fds)
        self._buffer += data

    def _dispatch(self) -> None:
        while len(self._buffer) >= HEADER.size:
            object_id, opcode, size = HEADER.unpack_from(self._buffer)
            if size < HEADER.size:
                self._error = "the compositor sent a malformed message"
                return
            if len(self._buffer) < size:
                return
            payload = self._buffer[HEADER.size : size]
            self._buffer = self._buffer[size:]
            handler = self._handlers.get(object_id)
            if handler is not None:
                handler(opcode, payload, self._fds)

    def _raise(self) -> None:
        if self._error is not None:
            raise (WaylandGone if self._gone else WaylandError)(self._error)

    def _on_display(self, opcode: int, payload: bytes, fds: deque[int]) -> None:
        if opcode == 0:  # error(object, code, message)
            object_id, code, message = decode("ous", payload, fds)
            self._error = (
                f"the compositor refused a request (object {object_id}, code {code}): {message}"
            )
        elif opcode == 1:  # delete_id(id)
            (object_id,) = decode("u", payload, fds)
            self._handlers.pop(object_id, None)
            self._free_ids.append(object_id)

    def _on_registry(self, opcode: int, payload: bytes, fds: deque[int]) -> None:
        assert self._globals is not None
        if opcode == 0:  # global(name, interface, version)
            name, interface, version = decode("usu", payload, fds)
            self._globals[name] = Global(name, interface, version)
        elif opcode == 1:  # global_remove(name)
            (name,) = decode("u", payload, fds)
            self._globals.pop(name, None)
