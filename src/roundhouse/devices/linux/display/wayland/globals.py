"""Core Wayland objects the backends share: the output (its size) and the seat's keymap."""

from __future__ import annotations

import mmap
import os
from collections import deque
from dataclasses import dataclass

from roundhouse.devices.contract import Rect, bounding
from roundhouse.devices.linux.display.wayland.wire import Connection, Global, WaylandError, decode

MODE_CURRENT = 0x1
KEYMAP_XKB_V1 = 1


@dataclass
class Output:
    """A wl_output as the compositor describes it."""

    object_id: int
    x: int = 0
    y: int = 0
    width: int = 0  # the current mode, in pixels
    height: int = 0
    scale: int = 1
    name: str = ""
    done: bool = False
    # Where it is and how big, in the compositor's logical pixels, as xdg-output says (a
    # fractional scale is not in wl_output's whole-number one); None: not said.
    logical: Rect | None = None

    @property
    def logical_size(self) -> tuple[int, int]:
        if self.logical is not None:
            return self.logical.width, self.logical.height
        return self.width // self.scale, self.height // self.scale

    @property
    def rect(self) -> Rect:
        """Where the output is on the desktop, in logical pixels."""
        if self.logical is not None:
            return self.logical
        width, height = self.logical_size
        return Rect(self.x, self.y, self.x + width, self.y + height)


def bind_output(connection: Connection) -> Output:
    """The first output, once the compositor has described it."""
    return _bind_output(connection, None)


def bind_outputs(connection: Connection) -> list[Output]:
    """Every output, described, with its place and size in logical pixels where the
    compositor offers xdg-output (wlroots and KWin do); left to right."""
    found = [g for g in connection.registry().values() if g.interface == "wl_output"]
    outputs = [_bind_output(connection, one) for one in found]
    if connection.find(XDG_OUTPUT_MANAGER) is not None:
        manager = connection.bind(XDG_OUTPUT_MANAGER, 2)
        for output in outputs:
            _describe_logically(connection, manager, output)
        connection.roundtrip()
    return sorted(outputs, key=lambda output: (output.rect.left, output.rect.top))


def desktop_box(outputs: list[Output]) -> Rect:
    """The rectangle every output lies in: the desktop, in logical pixels."""
    return bounding(output.rect for output in outputs)


XDG_OUTPUT_MANAGER = "zxdg_output_manager_v1"


def _describe_logically(connection: Connection, manager: int, output: Output) -> None:
    place: list[int] = [0, 0, 0, 0]

    def on_event(opcode: int, payload: bytes, fds: deque[int]) -> None:
        if opcode == 0:  # logical_position(x, y)
            place[0], place[1] = decode("ii", payload, fds)
        elif opcode == 1:  # logical_size(width, height)
            place[2], place[3] = decode("ii", payload, fds)
            x, y, width, height = place
            output.logical = Rect(x, y, x + width, y + height)

    xdg_output = connection.new_id(on_event)
    connection.request(manager, 1, "no", xdg_output, output.object_id)  # get_xdg_output


def _bind_output(connection: Connection, found: Global | None) -> Output:
    output = Output(0)
    version = min(connection.version("wl_output"), 4)

    def on_event(opcode: int, payload: bytes, fds: deque[int]) -> None:
        if opcode == 0:  # geometry(x, y, mm w, mm h, subpixel, make, model, transform)
            output.x, output.y = decode("ii", payload[:8], fds)
        elif opcode == 1:  # mode(flags, width, height, refresh)
            flags, width, height, _refresh = decode("uiii", payload, fds)
            if flags & MODE_CURRENT:
                output.width, output.height = width, height
        elif opcode == 2:  # done
            output.done = True
        elif opcode == 3:  # scale
            (output.scale,) = decode("i", payload, fds)
        elif opcode == 4:  # name
            (output.name,) = decode("s", payload, fds)

    output.object_id = connection.bind("wl_output", version, on_event, found)
    if version >= 2:
        connection.wait(lambda: output.done, None, "describe its output")
    else:
        connection.roundtrip()
    if not output.width:
        raise WaylandError("the compositor's output has no current mode")
    return output


SEAT_KEYBOARD = 0x2


def seat_keymap(connection: Connection, timeout: float | None = None) -> str:
    """The keymap the compositor gives its seat's keyboard (what applications read keys
    with), as XKB text. A seat without a keyboard (a headless compositor before any
    virtual one) has none: WaylandTimeout after `timeout` (asking it for a keyboard
    would be a protocol error)."""
    capabilities: list[int] = []

    def on_seat(opcode: int, payload: bytes, fds: deque[int]) -> None:
        if opcode == 0:  # capabilities
            capabilities.append(decode("u", payload, fds)[0])

    seat = connection.bind("wl_seat", 5, on_seat)
    connection.wait(
        lambda: bool(capabilities) and bool(capabilities[-1] & SEAT_KEYBOARD),
        timeout,
        "give its seat a keyboard",
    )
    keyboard_id = 0
    found: list[str] = []

    def on_keyboard(opcode: int, payload: bytes, fds: deque[int]) -> None:
        if opcode == 0:  # keymap(format, fd, size)
            keymap_format, fd, size = decode("uhu", payload, fds)
            try:
                if keymap_format == KEYMAP_XKB_V1:
                    with mmap.mmap(fd, size, mmap.MAP_PRIVATE, mmap.PROT_READ) as mapped:
                        found.append(mapped[:size].rstrip(b"\0").decode())
            finally:
                os.close(fd)

    keyboard_id = connection.new_id(on_keyboard)
    connection.request(seat, 1, "n", keyboard_id)  # wl_seat.get_keyboard
    connection.wait(lambda: bool(found), None, "send its keyboard map")
    connection.request(keyboard_id, 0)  # wl_keyboard.release (bound at version 5)
    connection.request(seat, 3)  # wl_seat.release
    return found[0]


def memfd_with(data: bytes, name: str) -> int:
    """A sealed-size anonymous file holding `data`, to pass to the compositor."""
    fd = os.memfd_create(name, os.MFD_CLOEXEC)
    try:
        os.write(fd, data)
        os.lseek(fd, 0, os.SEEK_SET)
    except OSError:
        os.close(fd)
        raise
    return fd
