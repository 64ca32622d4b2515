"""What a wlr-screencopy copy is made of, for the screenshots (screen.py) and the damage
watch (damage.py) alike: the frame's events as they come, and a wl_buffer over a memfd for
the compositor to copy into."""

from __future__ import annotations

import contextlib
import mmap
import os
from collections import deque
from dataclasses import dataclass

from roundhouse.devices.contract import Rect
from roundhouse.devices.linux.display.wayland.wire import Connection, decode


@dataclass
class Frame:
    """A zwlr_screencopy_frame_v1, as its events have told so far."""

    shm_format: int = -1
    width: int = 0
    height: int = 0
    stride: int = 0
    buffer_done: bool = False
    flags: int = 0
    damage: Rect | None = None  # where the output was drawn on (copy_with_damage)
    ready: bool = False
    failed: bool = False

    def described(self, version: int) -> bool:
        """Whether the buffer it wants is described: version 3 ends the description with
        buffer_done (a copy asked for before it is refused), earlier ones with the shm
        buffer event."""
        return self.failed or (self.buffer_done if version >= 3 else self.shm_format >= 0)

    def answered(self) -> bool:
        return self.ready or self.failed

    def on_event(self, opcode: int, payload: bytes, fds: deque[int]) -> None:
        if opcode == 0 and self.shm_format < 0:  # buffer(format, width, height, stride)
            self.shm_format, self.width, self.height, self.stride = decode("uuuu", payload, fds)
        elif opcode == 1:  # flags
            (self.flags,) = decode("u", payload, fds)
        elif opcode == 2:  # ready
            self.ready = True
        elif opcode == 3:  # failed
            self.failed = True
        elif opcode == 4:  # damage(x, y, width, height)
            x, y, width, height = decode("uuuu", payload, fds)
            self.damage = Rect(left=x, top=y, right=x + width, bottom=y + height)
        elif opcode == 6:  # buffer_done
            self.buffer_done = True


class Buffer:
    """A wl_buffer over a memfd, of the size and format a frame described."""

    def __init__(self, wayland: Connection, shm: int, frame: Frame) -> None:
        self.key = (frame.shm_format, frame.width, frame.height, frame.stride)
        self.size = frame.stride * frame.height
        self._wayland = wayland
        self._fd = os.memfd_create("roundhouse-screencopy", os.MFD_CLOEXEC)
        try:
            os.ftruncate(self._fd, self.size)
            self.memory = mmap.mmap(self._fd, self.size)
        except BaseException:
            os.close(self._fd)
            raise
        self._pool = wayland.new_id()
        wayland.request(shm, 0, "nhi", self._pool, self._fd, self.size)  # create_pool
        self.object_id = wayland.new_id()
        # create_buffer(id, offset, width, height, stride, format)
        wayland.request(
            self._pool,
            0,
            "niiiiu",
            self.object_id,
            0,
            frame.width,
            frame.height,
            frame.stride,
            frame.shm_format,
        )

    def destroy(self) -> None:
        """Gone on both sides: the compositor's buffer and pool, and our memory."""
        self._wayland.request(self.object_id, 0)  # wl_buffer.destroy
        self._wayland.request(self._pool, 1)  # wl_shm_pool.destroy
        self.release()

    def release(self) -> None:
        """Our memory and memfd let go (the connection is closing, or gone)."""
        self.memory.close()
        with contextlib.suppress(OSError):
            os.close(self._fd)
