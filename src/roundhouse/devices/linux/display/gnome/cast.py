"""GNOME's screen from Mutter's screen cast: the PipeWire stream of each monitor in the
remote-desktop session, each read by a GStreamer pipeline that writes raw frames to a pipe
of ours.

Mutter sends a frame when something on screen changes, and none while nothing does, so
the last frame is the screen (a screenshot costs a copy, not GNOME Shell's ~100 ms PNG),
and each frame received is a change drawn (`drawn`: what the settle waits on and the kept
reads ask; a frame says nothing of where, so a caret's blink counts as a change here). It
needs no GNOME Shell Eval, so a person's GNOME allows it too (its screen-sharing icon shows
meanwhile).

A pipeline takes its monitor's own pixels (1920x1200 for a monitor of 1280x800 at scale
1.5); the desktop is each monitor's last frame brought to its place in logical pixels, the
space windows and pointer positions are in. No rate limit is set (GStreamer's videorate
asserts on the stream's buffers, which carry no duration): while the reader is busy the
pipe fills and PipeWire skips frames.
"""

from __future__ import annotations

import logging
import shutil
import subprocess
import threading
import time
from collections.abc import Mapping

from PIL import Image

from roundhouse.devices.contract import Rect
from roundhouse.devices.linux.changes import Changes
from roundhouse.devices.linux.display.base import (
    Closing,
    DisplayUnavailable,
    Monitor,
    RegionScreen,
    clip,
)
from roundhouse.devices.linux.display.gnome.remote import Stream

log = logging.getLogger(__name__)

# Seconds for the first frame once the pipeline runs: 5 s ran out beside two busy desktops
# on Debian 13 (GNOME 48).
FIRST_FRAME_TIMEOUT = 10.0
PACKAGES = "gstreamer1.0-pipewire gstreamer1.0-tools gstreamer1.0-plugins-base"


def available() -> bool:
    """Whether the GStreamer pipeline can run here (gst-launch-1.0 and pipewiresrc)."""
    if shutil.which("gst-launch-1.0") is None or shutil.which("gst-inspect-1.0") is None:
        return False
    try:
        found = subprocess.run(
            ["gst-inspect-1.0", "pipewiresrc"], capture_output=True, timeout=10, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return found.returncode == 0


class _Pipeline(Closing):
    """One monitor's stream, read by GStreamer: its last frame, and how many came."""

    def __init__(
        self, node: int, pixels: tuple[int, int], env: Mapping[str, str], drawn: Changes
    ) -> None:
        self.pixels = pixels
        width, height = pixels
        self._frame_bytes = width * height * 4
        self._latest: bytes | None = None
        self.frames = 0
        self._arrived = threading.Condition()
        self._drawn = drawn
        caps = f"video/x-raw,format=BGRx,width={width},height={height}"
        argv = [
            "gst-launch-1.0", "-q",
            "pipewiresrc", f"path={node}", "always-copy=true",
            "!", "videoconvert", "!", "videoscale", "!", caps,
            "!", "fdsink", "fd=1", "sync=false",
        ]  # fmt: skip
        try:
            self._process = subprocess.Popen(
                argv,
                env=dict(env),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
        except OSError as error:
            raise DisplayUnavailable(
                f"cannot run GStreamer for GNOME's screen cast ({error}); "
                f"sudo apt-get install {PACKAGES}"
            ) from None
        self._reader = threading.Thread(target=self._read, name="roundhouse-cast", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        stream = self._process.stdout
        assert stream is not None
        while True:
            frame = stream.read(self._frame_bytes)
            if len(frame) < self._frame_bytes:
                break  # the pipeline ended
            with self._arrived:
                self._latest = frame
                self.frames += 1
                self._arrived.notify_all()
            self._drawn.bump()
        with self._arrived:
            self._arrived.notify_all()

    def image(self, timeout: float = FIRST_FRAME_TIMEOUT) -> Image.Image:
        """The last frame (the first, once it comes)."""
        frame = self._wait_for_frame(timeout)
        return Image.frombuffer("RGB", self.pixels, frame, "raw", "BGRX", 0, 1).copy()

    def running(self) -> bool:
        return self._process.poll() is None

    def _wait_for_frame(self, timeout: float) -> bytes:
        deadline = time.monotonic() + timeout
        with self._arrived:
            while self._latest is None:
                remaining = deadline - time.monotonic()
                if self._process.poll() is not None:
                    raise DisplayUnavailable(
                        "GNOME's screen cast pipeline ended (exit "
                        f"{self._process.returncode}); is PipeWire running in the session?"
                    )
                if remaining <= 0:
                    raise TimeoutError(f"GNOME's screen cast sent no frame within {timeout:g} s")
                self._arrived.wait(min(remaining, 0.1))
            return self._latest

    def close(self) -> None:
        if self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=2)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        if self._process.stdout is not None:
            self._process.stdout.close()
        self._reader.join(2)


class CastScreen(RegionScreen, Closing):
    """The screen through Mutter's screen cast of each monitor (a display.base.Screen)."""

    def __init__(
        self, streams: list[Stream], env: Mapping[str, str], size: tuple[int, int]
    ) -> None:
        self.size = size
        self.drawn = Changes("GNOME's screen cast")  # a frame: something on screen changed
        self._monitors = [stream.monitor for stream in streams]
        self._pipelines: list[_Pipeline] = []
        try:
            for stream in streams:
                pipeline = _Pipeline(stream.node, stream.monitor.pixels, env, self.drawn)
                self._pipelines.append(pipeline)
            for pipeline in self._pipelines:
                pipeline.image(FIRST_FRAME_TIMEOUT)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        for pipeline in self._pipelines:
            pipeline.close()

    def monitors(self) -> list[Monitor]:
        """The monitors the session's streams record (those there were when it started)."""
        return list(self._monitors)

    def monitor(self, number: int) -> tuple[Image.Image, Monitor]:
        """The monitor's own pixels, its stream's last frame."""
        found = self._monitor(number)
        return self._pipelines[self._monitors.index(found)].image(), found

    def desktop(self) -> Image.Image:
        if len(self._pipelines) == 1 and self._monitors[0].rect == Rect(0, 0, *self.size):
            image = self._pipelines[0].image()
            if image.size == self.size:
                return image
            return image.resize(self.size, Image.Resampling.LANCZOS)
        desktop = Image.new("RGB", self.size)
        for monitor, pipeline in zip(self._monitors, self._pipelines, strict=True):
            image = pipeline.image()
            rect = monitor.rect
            if image.size != (rect.width, rect.height):
                image = image.resize((rect.width, rect.height), Image.Resampling.LANCZOS)
            desktop.paste(image, (rect.left, rect.top))
        return desktop

    def region(self, rect: Rect) -> Image.Image:
        clipped = clip(rect, self.size)
        box = (clipped.left, clipped.top, clipped.right, clipped.bottom)
        return self.desktop().crop(box)

    def raw(self, rect: Rect | None = None) -> bytes:
        """How many frames Mutter has sent: the same while nothing on screen changes (it
        sends none then). `rect` is not narrowed to: any change counts."""
        if not all(pipeline.running() for pipeline in self._pipelines):
            raise DisplayUnavailable("GNOME's screen cast pipeline ended")
        return ",".join(str(pipeline.frames) for pipeline in self._pipelines).encode()
