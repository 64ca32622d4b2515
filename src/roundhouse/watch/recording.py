"""`--record-video`: the screen recorded during the run, from the watch page's frame source.

The newest frame is written to ffmpeg every 1/fps seconds (a still screen repeats its last
frame: the video keeps the run's time), as MJPEG through a pipe; ffmpeg encodes VP8 WebM
into the log folder as screen.webm (logs/video.py RECORDED_NAME), and video-markers.json
says when the recording began, so the report places each step in it. On the way out
(the run's end, Ctrl-C, stop) ffmpeg's input is closed and it finishes the file.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from roundhouse.logs.video import MARKERS_NAME, RECORDED_NAME, ffmpeg
from roundhouse.watch.frames import FrameSource

log = logging.getLogger(__name__)

RECORD_FPS = 10
FINISH_TIMEOUT = 60.0  # seconds ffmpeg has to finish the file once its input ends


class RecordingUnavailable(RuntimeError):
    """ffmpeg is not installed: the message says how to install it."""


@dataclass
class Recording:
    path: Path
    frames_written: int = 0
    began: float | None = None  # time.time() of the first frame


@asynccontextmanager
async def recording(
    source: FrameSource, folder: Path, fps: float = RECORD_FPS
) -> AsyncIterator[Recording]:
    """Record `source` into folder/screen.webm while the block runs."""
    binary = ffmpeg()
    if binary is None:
        raise RecordingUnavailable(
            "--record-video needs ffmpeg: apt-get install ffmpeg (make system-deps)"
        )
    target = folder / RECORDED_NAME
    temporary = folder / f".{RECORDED_NAME}.tmp.webm"
    process = await asyncio.create_subprocess_exec(
        binary, "-nostdin", "-hide_banner", "-loglevel", "error", "-y",
        "-f", "image2pipe", "-c:v", "mjpeg", "-framerate", f"{fps:g}", "-i", "pipe:0",
        "-vf", "format=yuv420p",
        "-c:v", "libvpx", "-deadline", "realtime", "-cpu-used", "8", "-b:v", "1M",
        str(temporary),
        stdin=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    made = Recording(target)
    looking = asyncio.ensure_future(_keep_looking(source))
    writing = asyncio.ensure_future(_write(source, process, made, folder, fps))
    try:
        yield made
    finally:
        writing.cancel()
        looking.cancel()
        for task in (writing, looking):
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await _finish(process, temporary, target)


async def _keep_looking(source: FrameSource) -> None:
    """A looker, so that the source grabs while the recording runs."""
    async for _frame in source.frames():
        pass


async def _write(
    source: FrameSource,
    process: asyncio.subprocess.Process,
    made: Recording,
    folder: Path,
    fps: float,
) -> None:
    assert process.stdin is not None
    first = await source.next() if source.latest is None else source.latest
    made.began = time.time()
    (folder / MARKERS_NAME).write_text(json.dumps({"began": made.began, "fps": fps}) + "\n")
    interval = 1.0 / fps
    due = time.monotonic()
    frame = first
    while True:
        frame = source.latest or frame
        process.stdin.write(frame.jpeg)
        await process.stdin.drain()
        made.frames_written += 1
        due += interval
        await asyncio.sleep(max(0.0, due - time.monotonic()))


async def _finish(process: asyncio.subprocess.Process, temporary: Path, target: Path) -> None:
    assert process.stdin is not None
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        process.stdin.close()
    try:
        _out, errors = await asyncio.wait_for(process.communicate(), FINISH_TIMEOUT)
    except TimeoutError:
        process.kill()
        await process.wait()
        log.warning("ffmpeg did not finish %s within %g s: left out", target, FINISH_TIMEOUT)
        temporary.unlink(missing_ok=True)
        return
    if process.returncode != 0 or not temporary.is_file():
        log.warning("ffmpeg could not record %s: %s", target, (errors or b"").decode().strip())
        temporary.unlink(missing_ok=True)
        return
    temporary.replace(target)
