"""GNOME's screen from Mutter's screen cast: the PipeWire stream of the remote-desktop
session, read by a GStreamer pipeline that writes raw frames to a pipe of ours.

Mutter sends a frame when something on screen changes, and none while nothing does, so
the last frame is the screen (a screenshot costs a copy, not GNOME Shell's ~100 ms PNG),
and each frame received is a change drawn (`drawn`: what the settle waits on and the kept
reads ask; a frame says nothing of where, so a caret's blink counts as a change here). It
needs no GNOME Shell Eval, so a person's GNOME allows it too (its screen-sharing icon shows
meanwhile).

The pipeline scales to the screen's logical size, the space pointer positions are in. No
rate limit is set (GStreamer's videorate asserts on the stream's buffers, which carry no
duration): while the reader is busy the pipe fills and PipeWire skips frames.
"""

from __future__ import annotations

import logging
import shutil
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from typing import IO

from PIL import Image

from roundhouse.devices.contract import Rect
from roundhouse.devices.linux.display.base import (
    Closing,
    DisplayUnavailable,
    RegionScreen,
    clip,
)
from roundhouse.devices.linux.display.changes import Changes

log = logging.getLogger(__name__)

# Seconds for the first frame from the first pipeline. Mutter sends one frame when a
# stream starts and then only on a change; under load (2 runs in 80 of a screenshot beside
# two busy loops, Debian 12) that frame came while pipewiresrc was still setting its
# format, and was lost: the stream was live, the screen still, and no frame ever came. A
# new pipeline had its frame at once (4 of 4). The first frame took at most 0.32 s in
# those 80 runs.
FIRST_FRAME_QUIET = 2.0
# Seconds for the first frame from the second and last pipeline: on Debian 13 (GNOME 48)
# beside two busy desktops 5 s ran out, so a slow start still has what it had before.
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


class CastScreen(RegionScreen, Closing):
    """The screen through Mutter's screen cast (a display.base.Screen)."""

    def __init__(
        self,
        node: int,
        env: Mapping[str, str],
        size: tuple[int, int],
        argv: Sequence[str] | None = None,
    ) -> None:
        """`argv`: the program that writes raw frames to its stdout (GStreamer's pipeline
        from `node` unless given; a test gives its own)."""
        self.size = size
        width, height = size
        self._frame_bytes = width * height * 4
        self._latest: bytes | None = None
        self._frames = 0
        self._arrived = threading.Condition()
        self.drawn = Changes("GNOME's screen cast")  # a frame: something on screen changed
        caps = f"video/x-raw,format=BGRx,width={width},height={height}"
        self._argv = list(argv) if argv is not None else [
            "gst-launch-1.0", "-q",
            "pipewiresrc", f"path={node}", "always-copy=true",
            "!", "videoconvert", "!", "videoscale", "!", caps,
            "!", "fdsink", "fd=1", "sync=false",
        ]  # fmt: skip
        self._env = dict(env)
        self.pipelines = 0  # how many were started: more than one when a first frame was lost
        for wait in (FIRST_FRAME_QUIET, FIRST_FRAME_TIMEOUT):
            self._start_pipeline()
            try:
                self._wait_for_frame(0, wait)
                return
            except TimeoutError:
                self._stop_pipeline()
                log.info("no first frame from the screen cast within %g s", wait)
            except BaseException:
                self._stop_pipeline()
                raise
        raise TimeoutError(
            f"GNOME's screen cast sent no frame within {FIRST_FRAME_QUIET:g} s, nor a new "
            f"pipeline's within {FIRST_FRAME_TIMEOUT:g} s"
        )

    def _start_pipeline(self) -> None:
        try:
            self._process = subprocess.Popen(
                self._argv,
                env=self._env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
        except OSError as error:
            raise DisplayUnavailable(
                f"cannot run GStreamer for GNOME's screen cast ({error}); "
                f"sudo apt-get install {PACKAGES}"
            ) from None
        self.pipelines += 1
        assert self._process.stdout is not None
        self._reader = threading.Thread(
            target=self._read, args=(self._process.stdout,), name="roundhouse-cast", daemon=True
        )
        self._reader.start()

    def _read(self, stream: IO[bytes]) -> None:
        while True:
            frame = stream.read(self._frame_bytes)
            if len(frame) < self._frame_bytes:
                break  # the pipeline ended
            with self._arrived:
                self._latest = frame
                self._frames += 1
                self._arrived.notify_all()
            self.drawn.bump()
        with self._arrived:
            self._arrived.notify_all()

    def _wait_for_frame(self, seen: int, timeout: float) -> bytes:
        deadline = time.monotonic() + timeout
        with self._arrived:
            while self._frames <= seen or self._latest is None:
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
        self._stop_pipeline()

    def _stop_pipeline(self) -> None:
        if self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=2)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        self._reader.join(2)  # the pipe's end reached: the reader is done with it
        if self._process.stdout is not None:
            self._process.stdout.close()

    def desktop(self) -> Image.Image:
        frame = self._wait_for_frame(0, FIRST_FRAME_TIMEOUT)
        return Image.frombuffer("RGB", self.size, frame, "raw", "BGRX", 0, 1).copy()

    def region(self, rect: Rect) -> Image.Image:
        clipped = clip(rect, self.size)
        box = (clipped.left, clipped.top, clipped.right, clipped.bottom)
        return self.desktop().crop(box)

    def raw(self, rect: Rect | None = None) -> bytes:
        """How many frames Mutter has sent: the same while nothing on screen changes (it
        sends none then). `rect` is not narrowed to: any change counts."""
        if self._process.poll() is not None:
            raise DisplayUnavailable("GNOME's screen cast pipeline ended")
        with self._arrived:
            return str(self._frames).encode()
