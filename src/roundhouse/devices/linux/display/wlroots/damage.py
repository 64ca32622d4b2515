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
import threading
from collections.abc import Mapping
from functools import partial

from roundhouse.devices.linux.display.changes import Changes
from roundhouse.devices.linux.display.wayland.globals import bind_output
from roundhouse.devices.linux.display.wayland.wire import (
    Connection,
    WaylandError,
    WaylandTimeout,
)
from roundhouse.devices.linux.display.wlroots.copies import Buffer, Frame

log = logging.getLogger(__name__)

POLL = 0.25  # seconds between two looks at whether the watch is to stop


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
        self._thread.start()  # last: _watch may use all of the above at once

    @classmethod
    def start(cls, env: Mapping[str, str]) -> DamageWatch | None:
        connection = Connection.open(env)
        outputs = [g for g in connection.registry().values() if g.interface == "wl_output"]
        if connection.version("zwlr_screencopy_manager_v1") < 2 or len(outputs) != 1:
            connection.close()
            return None
        return cls(connection)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(POLL * 4)
        with contextlib.suppress(OSError):
            self._wayland.close()

    def _watch(self) -> None:
        wayland = self._wayland
        buffer: Buffer | None = None  # one pixel's, made for the first copy
        try:
            output = bind_output(wayland).object_id
            shm = wayland.bind("wl_shm", 1)
            manager = wayland.bind("zwlr_screencopy_manager_v1", 3)
            version = wayland.version("zwlr_screencopy_manager_v1")
            while not self._stop.is_set():
                copy = Frame()
                frame = wayland.new_id(copy.on_event)
                # capture_output_region(frame, overlay_cursor, output, x, y, width, height)
                wayland.request(manager, 1, "nioiiii", frame, 0, output, 0, 0, 1, 1)
                wayland.wait(partial(copy.described, version), None, "describe a copy")
                if copy.failed:
                    raise WaylandError("the compositor refused a copy of one pixel")
                if buffer is None:
                    buffer = Buffer(wayland, shm, copy)
                wayland.request(frame, 2, "o", buffer.object_id)  # copy_with_damage
                while not self._stop.is_set():
                    try:
                        wayland.wait(copy.answered, POLL, "draw")
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
            if buffer is not None:
                buffer.release()
