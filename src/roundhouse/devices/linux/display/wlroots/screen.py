"""wlroots screenshots: zwlr_screencopy_manager_v1 into a shared-memory buffer of ours.

The compositor says what buffer it wants (format, size, stride), we hand it one in a
memfd, it copies the output (or a region of it) into that and says "ready". The buffer
is kept for the next shot of the same size (one per output, a few in all).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping

from PIL import Image

from roundhouse.devices.contract import Rect
from roundhouse.devices.linux.display.base import Closing, Monitor, RegionScreen, clip, numbered
from roundhouse.devices.linux.display.wayland.globals import Output, bind_outputs, desktop_box
from roundhouse.devices.linux.display.wayland.wire import TIMEOUT, Connection, WaylandError
from roundhouse.devices.linux.display.wlroots.copies import Buffer, Frame

# wl_shm formats (little-endian words): ARGB8888/XRGB8888 are B, G, R, A/X in memory.
RAW_MODES = {0: "BGRX", 1: "BGRX", 0x34324241: "RGBX", 0x34324258: "RGBX"}  # alpha dropped
Y_INVERT = 1


class Screencopy(RegionScreen, Closing):
    """The screen through wlr-screencopy (a display.base.Screen; a window is its region).

    Every output is copied on its own, in its own pixels; the desktop and its regions are in
    logical pixels (those of the windows, the pointer and the tree), so an output scaled by
    1.5 is copied at its own size and shrunk to its place. A monitor's own screenshot is
    its copy, unshrunk."""

    def __init__(self, env: Mapping[str, str], timeout: float = TIMEOUT) -> None:
        self._wayland = Connection.open(env, timeout)
        self._lock = threading.Lock()
        self._buffers: dict[tuple[int, int, int, int], Buffer] = {}  # one per output size
        try:
            if self._wayland.find("zwlr_screencopy_manager_v1") is None:
                raise WaylandError(
                    "this compositor offers no zwlr_screencopy_manager_v1: wlroots "
                    "screenshots need sway, Hyprland, labwc, river or another wlroots compositor"
                )
            self._outputs: list[Output] = bind_outputs(self._wayland)
            if not self._outputs:
                raise WaylandError("the compositor has no output")
            self._shm = self._wayland.bind("wl_shm", 1)
            self._manager = self._wayland.bind("zwlr_screencopy_manager_v1", 3)
        except BaseException:
            self._wayland.close()
            raise
        box = desktop_box(self._outputs)
        self.size = (box.right, box.bottom)

    def close(self) -> None:
        with self._lock:
            for buffer in self._buffers.values():
                buffer.release()
            self._wayland.close()

    def monitors(self) -> list[Monitor]:
        return numbered([(out.name, out.rect, _scale(out)) for out in self._outputs])

    def monitor(self, number: int) -> tuple[Image.Image, Monitor]:
        """The output's own pixels, copied whole."""
        found = self._monitor(number)
        return self._capture(self._outputs[found.number - 1], None), found

    def desktop(self) -> Image.Image:
        width, height = self.size
        return self.region(Rect(0, 0, width, height))

    def region(self, rect: Rect) -> Image.Image:
        rect = clip(rect, self.size)
        parts = list(self._parts(rect))
        if len(parts) == 1 and parts[0][1] == rect:
            return parts[0][2]
        image = Image.new("RGB", (rect.width, rect.height))
        for _output, part, copied in parts:
            image.paste(copied, (part.left - rect.left, part.top - rect.top))
        return image

    def raw(self, rect: Rect | None = None) -> bytes:
        """Each output's copy of the region as it comes (unshrunk: only compared)."""
        width, height = self.size
        area = clip(rect or Rect(0, 0, width, height), self.size)
        return b"".join(
            self._capture(output, _local(part, output)).tobytes()
            for output, part in self._overlapping(area)
        )

    def _overlapping(self, rect: Rect) -> list[tuple[Output, Rect]]:
        """The outputs `rect` lies on, each with the part of `rect` on it."""
        found = []
        for output in self._outputs:
            part = _intersection(rect, output.rect)
            if part is not None:
                found.append((output, part))
        return found

    def _parts(self, rect: Rect) -> list[tuple[Output, Rect, Image.Image]]:
        """Each output's part of `rect`, copied and brought to logical pixels."""
        parts = []
        for output, part in self._overlapping(rect):
            copied = self._capture(output, _local(part, output))
            if copied.size != (part.width, part.height):
                copied = copied.resize((part.width, part.height), Image.Resampling.LANCZOS)
            parts.append((output, part, copied))
        return parts

    def _capture(self, output: Output, rect: Rect | None) -> Image.Image:
        """The output (or `rect` of it, in its own logical pixels), in its own pixels."""
        with self._lock:
            frame = Frame()
            frame_id = self._wayland.new_id(frame.on_event)
            target = output.object_id
            if rect is None:
                self._wayland.request(self._manager, 0, "nio", frame_id, 0, target)
            else:
                self._wayland.request(
                    self._manager, 1, "nioiiii", frame_id, 0, target,
                    rect.left, rect.top, rect.width, rect.height,
                )  # fmt: skip
            version = self._wayland.version("zwlr_screencopy_manager_v1")
            self._wayland.wait(
                lambda: frame.described(version), None, "describe the screen copy's buffer"
            )
            if frame.failed or frame.shm_format not in RAW_MODES:
                self._wayland.request(frame_id, 1)  # destroy
                raise WaylandError(
                    "the compositor refused the screen copy"
                    if frame.failed
                    else f"the compositor offers the screen in format {frame.shm_format:#x} only"
                )
            buffer = self._buffer_for(frame)
            self._wayland.request(frame_id, 0, "o", buffer.object_id)  # copy
            self._wayland.wait(frame.answered, None, "copy the screen")
            self._wayland.request(frame_id, 1)  # destroy
            if frame.failed:
                raise WaylandError("the compositor failed to copy the screen")
            image = Image.frombuffer(
                "RGB",
                (frame.width, frame.height),
                buffer.memory[: buffer.size],
                "raw",
                RAW_MODES[frame.shm_format],
                frame.stride,
                1,
            )
        if frame.flags & Y_INVERT:
            image = image.transpose(Image.Transpose.FLIP_TOP_BOTTOM)
        return image

    def _buffer_for(self, frame: Frame) -> Buffer:
        """The buffer kept for this size and format (each output's), made the first time."""
        key = (frame.shm_format, frame.width, frame.height, frame.stride)
        if key not in self._buffers:
            if len(self._buffers) >= MAX_BUFFERS:  # regions of many sizes: start again
                for buffer in self._buffers.values():
                    buffer.destroy()
                self._buffers.clear()
            self._buffers[key] = Buffer(self._wayland, self._shm, frame)
        return self._buffers[key]


MAX_BUFFERS = 4


def _scale(output: Output) -> float:
    """How many of the output's pixels make a logical one (1.5 for an output at 150%)."""
    return round(output.width / output.rect.width, 3) if output.rect.width else 1.0


def _local(part: Rect, output: Output) -> Rect | None:
    """`part` in the output's own logical coordinates; None when it is the whole output."""
    if part == output.rect:
        return None
    origin = output.rect
    return Rect(
        part.left - origin.left,
        part.top - origin.top,
        part.right - origin.left,
        part.bottom - origin.top,
    )


def _intersection(one: Rect, other: Rect) -> Rect | None:
    found = Rect(
        max(one.left, other.left),
        max(one.top, other.top),
        min(one.right, other.right),
        min(one.bottom, other.bottom),
    )
    return found if found.width > 0 and found.height > 0 else None
