"""What a wlroots compositor draws, as it draws it: a screen copy that waits for damage.

zwlr_screencopy_frame_v1.copy_with_damage is answered only once the output has been
damaged since this client's last copy, with a `damage` event naming where (the extents of
all that was drawn, wherever on the output). A thread of its own, on a connection of its
own, keeps one such copy of a single pixel waiting: each answer is a bump of a Changes
(changes.py) with that rectangle, and the next copy is asked for. Copying one pixel costs
the compositor nothing to speak of, and nothing is asked while nothing is drawn: these
are the compositor's own frames, seen from outside.
"""

from __future__ import annotations

import contextlib
import logging
import mmap
import os
import threading
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial

from roundhouse.devices.contract import Rect
from roundhouse.devices.linux.changes import Changes
from roundhouse.devices.linux.display.wayland.globals import bind_output
from roundhouse.devices.linux.display.wayland.wire import (
    Connection,
    WaylandError,
    WaylandTimeout,
    decode,
)

log = logging.getLogger(__name__)

POLL = 0.25  # seconds between two looks at whether the watch is to stop


@dataclass
class _Copy:
    shm_format: int = -1
    width: int = 0
    height: int = 0
    stride: int = 0
    buffer_done: bool = False
    damage: Rect | None = None
    ready: bool = False
    failed: bool = False


class DamageWatch:
    """The output's damage, as `changes`; None from `start` where the compositor's screen
    copy is older than version 2 (no copy_with_damage), or where there is more than one
    output: one copy watches one output, and a change on another unseen would let a stale
    read be served (the settle compares pixels there, and every read is fresh)."""

    def __init__(self, connection: Connection) -> None:
        self.changes = Changes("the wlroots output")
        self._wayland = connection
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="roundhouse-damage", daemon=True)

    @classmethod
    def start(cls, env: Mapping[str, str]) -> DamageWatch | None:
        connection = Connection.open(env)
        outputs = [g for g in connection.registry().values() if g.interface == "wl_output"]
        if connection.version("zwlr_screencopy_manager_v1") < 2 or len(outputs) != 1:
            connection.close()
            return None
        watch = cls(connection)
        watch._thread.start()
        return watch

    def close(self) -> None:
        self._stop.set()
        self._thread.join(POLL * 4)
        with contextlib.suppress(OSError):
            self._wayland.close()

    def _watch(self) -> None:
        wayland = self._wayland
        memory: mmap.mmap | None = None
        try:
            output = bind_output(wayland).object_id
            shm = wayland.bind("wl_shm", 1)
            manager = wayland.bind("zwlr_screencopy_manager_v1", 3)
            described = _described(wayland.version("zwlr_screencopy_manager_v1"))
            buffer: int | None = None
            while not self._stop.is_set():
                copy = _Copy()
                frame = wayland.new_id(partial(_on_copy, copy))
                # capture_output_region(frame, overlay_cursor, output, x, y, width, height)
                wayland.request(manager, 1, "nioiiii", frame, 0, output, 0, 0, 1, 1)
                wayland.wait(partial(described, copy), None, "describe a copy")
                if copy.failed:
                    raise WaylandError("the compositor refused a copy of one pixel")
                if buffer is None:
                    buffer, memory = _one_pixel(wayland, shm, copy)
                wayland.request(frame, 2, "o", buffer)  # copy_with_damage
                while not self._stop.is_set():
                    try:
                        wayland.wait(partial(_answered, copy), POLL, "draw")
                        break
                    except WaylandTimeout:
                        continue  # nothing drawn yet: look at the stop flag, wait on
                wayland.request(frame, 1)  # destroy
                if copy.ready:
                    self.changes.bump(copy.damage)
        except (OSError, WaylandError) as failure:
            # The compositor is gone or refuses: the tools find out from their own parts.
            log.info("damage watch ended: %s", failure)
        finally:
            if memory is not None:
                memory.close()


def _answered(copy: _Copy) -> bool:
    return copy.ready or copy.failed


def _described(version: int) -> Callable[[_Copy], bool]:
    """When a copy's buffer is described: version 3 ends the description with buffer_done
    (a copy asked for before it is refused), earlier ones with the shm buffer event."""

    def done(copy: _Copy) -> bool:
        return copy.failed or (copy.buffer_done if version >= 3 else copy.shm_format >= 0)

    return done


def _one_pixel(wayland: Connection, shm: int, copy: _Copy) -> tuple[int, mmap.mmap]:
    """A wl_buffer for the copy the compositor described (one pixel)."""
    size = copy.stride * copy.height
    fd = os.memfd_create("roundhouse-damage", os.MFD_CLOEXEC)
    try:
        os.ftruncate(fd, size)
        memory = mmap.mmap(fd, size)
        pool = wayland.new_id()
        wayland.request(shm, 0, "nhi", pool, fd, size)  # create_pool
        buffer = wayland.new_id()
        wayland.request(
            pool, 0, "niiiiu", buffer, 0, copy.width, copy.height, copy.stride, copy.shm_format
        )
        wayland.request(pool, 1)  # the pool may go; the buffer keeps the memory
    finally:
        os.close(fd)
    return buffer, memory


def _on_copy(copy: _Copy, opcode: int, payload: bytes, fds: deque[int]) -> None:
    if opcode == 0 and copy.shm_format < 0:  # buffer(format, width, height, stride)
        copy.shm_format, copy.width, copy.height, copy.stride = decode("uuuu", payload, fds)
    elif opcode == 2:  # ready
        copy.ready = True
    elif opcode == 3:  # failed
        copy.failed = True
    elif opcode == 4:  # damage(x, y, width, height)
        x, y, width, height = decode("uuuu", payload, fds)
        copy.damage = Rect(left=x, top=y, right=x + width, bottom=y + height)
    elif opcode == 6:  # buffer_done
        copy.buffer_done = True
