"""What the X server draws, as it draws it: the DAMAGE extension on the root window.

A damage object on the root reports every rectangle drawn on the screen (raw rectangles:
no accumulation, nothing to acknowledge). A thread of its own, on a connection of its own,
turns each into a bump of a Changes (changes.py) carrying the rectangle; the settle and the
kept reads wait on and ask that, instead of grabbing the screen and comparing.
"""

from __future__ import annotations

import contextlib
import logging
import os
import select
import threading

from Xlib import error  # type: ignore[import-untyped, unused-ignore]
from Xlib.display import Display  # type: ignore[import-untyped, unused-ignore]
from Xlib.ext import damage  # type: ignore[import-untyped, unused-ignore]

from roundhouse.devices.contract import Rect
from roundhouse.devices.linux.display.changes import Changes

log = logging.getLogger(__name__)


class DamageWatch:
    """The screen's damage on `display`, as `changes`; None from `start` where the server
    has no DAMAGE extension."""

    def __init__(self, connection: Display) -> None:
        self.changes = Changes("the X screen", exact=True)
        self._x = connection
        self._stop_read, self._stop_write = os.pipe()
        self._thread = threading.Thread(target=self._watch, name="roundhouse-damage", daemon=True)
        self._thread.start()  # last: _watch may use all of the above at once

    @classmethod
    def start(cls, display: str) -> DamageWatch | None:
        connection = Display(display)
        try:
            if not connection.has_extension("DAMAGE"):
                connection.close()
                return None
            connection.damage_query_version()
            connection.screen().root.damage_create(damage.DamageReportRawRectangles)
            connection.sync()
        except error.XError as failure:
            log.info("no damage on %s (%s): the settle compares screenshots", display, failure)
            connection.close()
            return None
        return cls(connection)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.write(self._stop_write, b"x")
        self._thread.join(2)
        for fd in (self._stop_read, self._stop_write):
            with contextlib.suppress(OSError):
                os.close(fd)
        with contextlib.suppress(OSError, *_LOST):
            self._x.close()

    def _watch(self) -> None:
        notify = self._x.extension_event.DamageNotify
        fd = self._x.fileno()
        try:
            while True:
                ready, _, _ = select.select([fd, self._stop_read], [], [])
                if self._stop_read in ready:
                    return
                while self._x.pending_events():
                    event = self._x.next_event()
                    if event.type == notify:
                        area = event.area
                        self.changes.bump(
                            Rect(
                                left=area.x,
                                top=area.y,
                                right=area.x + area.width,
                                bottom=area.y + area.height,
                            )
                        )
        except (OSError, *_LOST) as failure:
            # The display is gone: the tools find out from their own connections.
            log.info("damage watch ended: %s", failure)


_LOST = (error.ConnectionClosedError, error.DisplayConnectionError)
