"""wlroots screenshots: zwlr_screencopy_manager_v1 into a shared-memory buffer of ours.

The compositor says what buffer it wants (format, size, stride), we hand it one in a
memfd, it copies the output (or a region of it) into that and says "ready". The buffer
is kept for the next shot of the same size.
"""

from __future__ import annotations

import mmap
import os
import threading
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass

from PIL import Image

from roundhouse.devices.contract import Rect
from roundhouse.devices.linux.display.base import Closing, RegionScreen, clip
from roundhouse.devices.linux.display.wayland.globals import Output, bind_output
from roundhouse.devices.linux.display.wayland.wire import TIMEOUT, Connection, WaylandError, decode

# wl_shm formats (little-endian words): ARGB8888/XRGB8888 are B, G, R, A/X in memory.
RAW_MODES = {0: "BGRX", 1: "BGRX", 0x34324241: "RGBX", 0x34324258: "RGBX"}  # alpha dropped
Y_INVERT = 1


@dataclass
class _Frame:
    shm_format: int = -1
    width: int = 0
    height: int = 0
    stride: int = 0
    buffer_done: bool = False
    flags: int = 0
    ready: bool = False
    failed: bool = False


class _Buffer:
    """A wl_buffer over a memfd, reused while the size and format stay."""

    def __init__(self, wayland: Connection, shm: int, frame: _Frame) -> None:
        self.key = (frame.shm_format, frame.width, frame.height, frame.stride)
        self.size = frame.stride * frame.height
        self._wayland = wayland
        self._fd = os.memfd_create("roundhouse-screencopy", os.MFD_CLOEXEC)
        os.ftruncate(self._fd, self.size)
        self.memory = mmap.mmap(self._fd, self.size)
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
        self._wayland.request(self.object_id, 0)  # wl_buffer.destroy
        self._wayland.request(self._pool, 1)  # wl_shm_pool.destroy
        self.memory.close()
        os.close(self._fd)


class Screencopy(RegionScreen, Closing):
    """The screen through wlr-screencopy (a display.base.Screen; a window is its region)."""

    def __init__(self, env: Mapping[str, str], timeout: float = TIMEOUT) -> None:
        self._wayland = Connection.open(env, timeout)
        self._lock = threading.Lock()
        self._buffer: _Buffer | None = None
        try:
            if self._wayland.find("zwlr_screencopy_manager_v1") is None:
                raise WaylandError(
                    "this compositor offers no zwlr_screencopy_manager_v1: wlroots "
                    "screenshots need sway, Hyprland, labwc, river or another wlroots compositor"
                )
            self._output: Output = bind_output(self._wayland)
            self._shm = self._wayland.bind("wl_shm", 1)
            self._manager = self._wayland.bind("zwlr_screencopy_manager_v1", 3)
        except BaseException:
            self._wayland.close()
            raise
        self.size = (self._output.width, self._output.height)

    def close(self) -> None:
        with self._lock:
            if self._buffer is not None:
                self._buffer.memory.close()
            self._wayland.close()

    def desktop(self) -> Image.Image:
        return self._capture(None)

    def region(self, rect: Rect) -> Image.Image:
        return self._capture(clip(rect, self.size))

    def raw(self, rect: Rect | None = None) -> bytes:
        return self._capture(None if rect is None else clip(rect, self.size)).tobytes()

    def _capture(self, rect: Rect | None) -> Image.Image:
        with self._lock:
            frame = _Frame()
            frame_id = self._wayland.new_id(lambda op, data, fds: _on_frame(frame, op, data, fds))
            output = self._output.object_id
            if rect is None:
                self._wayland.request(self._manager, 0, "nio", frame_id, 0, output)
            else:
                self._wayland.request(
                    self._manager, 1, "nioiiii", frame_id, 0, output,
                    rect.left, rect.top, rect.width, rect.height,
                )  # fmt: skip
            version = self._wayland.version("zwlr_screencopy_manager_v1")
            self._wayland.wait(
                lambda: frame.failed or (frame.buffer_done if version >= 3 else frame.width > 0),
                None,
                "describe the screen copy's buffer",
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
            self._wayland.wait(lambda: frame.ready or frame.failed, None, "copy the screen")
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

    def _buffer_for(self, frame: _Frame) -> _Buffer:
        key = (frame.shm_format, frame.width, frame.height, frame.stride)
        if self._buffer is not None and self._buffer.key != key:
            self._buffer.destroy()
            self._buffer = None
        if self._buffer is None:
            self._buffer = _Buffer(self._wayland, self._shm, frame)
        return self._buffer


def _on_frame(frame: _Frame, opcode: int, payload: bytes, fds: deque[int]) -> None:
    if opcode == 0 and frame.shm_format < 0:  # buffer(format, width, height, stride)
        frame.shm_format, frame.width, frame.height, frame.stride = decode("uuuu", payload, fds)
    elif opcode == 1:  # flags
        (frame.flags,) = decode("u", payload, fds)
    elif opcode == 2:  # ready
        frame.ready = True
    elif opcode == 3:  # failed
        frame.failed = True
    elif opcode == 6:  # buffer_done
        frame.buffer_done = True
