"""The desktop's picture as it changes: JPEG frames from the display's own screen route.

One producer per desktop grabs the screen (the backend's own route: mss on X11, screencopy
on wlroots, ScreenShot2 on KWin, GNOME Shell's Screenshot) at most `fps` times a second,
in a thread, while anyone is looking. Where the display says what it draws (its `drawn`:
X11's damage, a compositor's frames), nothing is grabbed until it has drawn (or a second
has passed); a grab equal to the last one is not encoded again. Each looker gets the newest
frame when it is ready for one, never a queue: a slow browser sees fewer frames, not older
ones.

    source = FrameSource(display.screen, fps=15)
    async for frame in source.frames():    # Frame(number, jpeg, taken)
        await websocket.send_bytes(frame.jpeg)
"""

from __future__ import annotations

import asyncio
import io
import logging
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass

from PIL import Image

from roundhouse.devices.linux.display.base import Screen
from roundhouse.devices.linux.display.changes import Changes, any_change

log = logging.getLogger(__name__)

FPS = 15  # what the source aims at; the page needs 10 (issue 47)
QUALITY = 70  # JPEG quality: text stays readable, a 1280x800 desktop is 40-120 kB
STILL_CHECK = 1.0  # seconds: a display that says what it draws is grabbed this often anyway


@dataclass(frozen=True)
class Frame:
    number: int  # 1, 2, ...: a frame the screen changed for
    jpeg: bytes
    taken: float  # time.monotonic() when the grab began
    size: tuple[int, int]


@dataclass
class FrameStats:
    """What the producer did: grabs, frames encoded (the screen had changed), time spent."""

    grabs: int = 0
    frames: int = 0
    grab_s: float = 0.0
    encode_s: float = 0.0


def encode_jpeg(image: Image.Image, quality: int = QUALITY) -> bytes:
    out = io.BytesIO()
    image.convert("RGB").save(out, "JPEG", quality=quality)
    return out.getvalue()


class FrameSource:
    """The newest frame of a screen, for any number of lookers (see the module docstring).
    Grabs run while at least one looker waits; stop() ends them."""

    def __init__(
        self,
        screen: Screen,
        fps: float = FPS,
        quality: int = QUALITY,
        drawn: Changes | None = None,
    ) -> None:
        self.screen = screen
        self.drawn = drawn
        self._drawn_mark = -1
        self._grabbed_at = 0.0
        self.interval = 1.0 / fps
        self.quality = quality
        self.stats = FrameStats()
        self._latest: Frame | None = None
        self._last_pixels: bytes | None = None
        self._changed = asyncio.Condition()
        self._lookers = 0
        self._task: asyncio.Task[None] | None = None

    @property
    def latest(self) -> Frame | None:
        return self._latest

    async def frames(self, after: int = 0) -> AsyncIterator[Frame]:
        """Each newer frame as the looker asks for it (skipping those it was too slow for)."""
        self._lookers += 1
        self._start()
        try:
            seen = after
            while True:
                frame = await self._newer_than(seen)
                seen = frame.number
                yield frame
        finally:
            self._lookers -= 1

    async def _newer_than(self, seen: int) -> Frame:
        async with self._changed:
            await self._changed.wait_for(
                lambda: self._latest is not None and self._latest.number > seen
            )
            assert self._latest is not None
            return self._latest

    async def next(self) -> Frame:
        """The next new frame."""
        after = self._latest.number if self._latest else 0
        frames = self.frames(after)
        try:
            return await anext(frames)
        finally:
            await frames.aclose()  # type: ignore[attr-defined]

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
            self._task = None

    def _start(self) -> None:
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._produce(), name="frame source")

    async def _produce(self) -> None:
        while True:
            if self._lookers == 0:
                await asyncio.sleep(self.interval)
                continue
            began = time.monotonic()
            if not self._may_have_changed(began):
                await self._until_drawn(began)
                continue
            try:
                frame = await asyncio.to_thread(self._grab, began)
            except Exception as error:  # a grab the compositor refused once: try again
                log.warning("frame source: the screen grab failed: %s", error)
                frame = None
            if frame is not None:
                async with self._changed:
                    self._latest = frame
                    self._changed.notify_all()
            await asyncio.sleep(max(0.0, self.interval - (time.monotonic() - began)))

    async def _until_drawn(self, now: float) -> None:
        """Wait until the display draws (woken by it: no tick's delay), or the still check."""
        assert self.drawn is not None
        left = STILL_CHECK - (now - self._grabbed_at)
        await any_change([self.drawn], [self._drawn_mark], max(left, 0.0))

    def _may_have_changed(self, now: float) -> bool:
        """Whether to grab now: the display drew since the last grab (or cannot say), or the
        last grab is a second old."""
        if self.drawn is None or now - self._grabbed_at >= STILL_CHECK:
            return True
        return self.drawn.mark() != self._drawn_mark

    def _grab(self, began: float) -> Frame | None:
        if self.drawn is not None:
            self._drawn_mark = self.drawn.mark()  # before: what it draws meanwhile is seen next
        self._grabbed_at = began
        """The screen now, as a new frame; None when it is as the last one was."""
        image = self.screen.desktop()
        grabbed = time.monotonic()
        self.stats.grabs += 1
        self.stats.grab_s += grabbed - began
        pixels = image.tobytes()
        if pixels == self._last_pixels:
            return None
        self._last_pixels = pixels
        jpeg = encode_jpeg(image, self.quality)
        self.stats.encode_s += time.monotonic() - grabbed
        self.stats.frames += 1
        number = (self._latest.number if self._latest else 0) + 1
        return Frame(number, jpeg, began, image.size)
