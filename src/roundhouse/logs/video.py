"""A session's video, for report.html: the screen as it was at each step, in time.

By default it is made from the step screenshots (action_step{N}.png, taken as each step
began): each is shown from its step's start until the next step's, the last for its own
step's time, so the video lasts as long as the steps did. Where the run recorded the screen
itself (`--record-video`: screen.webm, from the watch page's frame source), that is the
video instead, and the same markers place the steps in it. Made with Debian's ffmpeg, as
WebM (VP8), which every browser plays; where ffmpeg is missing the report says so.

    plan = plan_video(steps, files)          # pure: which pictures, how long, the markers
    video = make_video(folder, plan)         # ffmpeg; returns the file's name, or None
"""

from __future__ import annotations

import json
import logging
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from roundhouse.core.trajectory import StepRecord

log = logging.getLogger(__name__)

VIDEO_NAME = "video.webm"  # made from the step screenshots
RECORDED_NAME = "screen.webm"  # recorded during the run (--record-video)
MARKERS_NAME = "video-markers.json"  # a recording's start, for its markers
FFMPEG_TIMEOUT = 300.0  # seconds ffmpeg may take over a session's pictures
LAST_SHOWN = 1.0  # seconds the last picture shows, at least
SIZE = (1280, 800)  # the video's frame: pictures are scaled to fit it, not stretched


@dataclass(frozen=True)
class Shot:
    name: str  # the picture, in the log folder
    seconds: float  # how long it shows


@dataclass(frozen=True)
class Marker:
    seconds: float  # where the step begins in the video
    step: int  # its session step
    label: str


@dataclass(frozen=True)
class VideoPlan:
    shots: tuple[Shot, ...]
    markers: tuple[Marker, ...]

    @property
    def seconds(self) -> float:
        return sum(shot.seconds for shot in self.shots)


def step_picture(step: StepRecord, files: frozenset[str]) -> str | None:
    """The step's screenshot (the plain one, not the numbered controls)."""
    for name in step.screenshots:
        if name in files and not name.endswith("_annotated.png"):
            return name
    return None


def plan_video(steps: Sequence[StepRecord], files: frozenset[str]) -> VideoPlan:
    """Which pictures show for how long, and where each step begins (pure)."""
    timed = [s for s in steps if s.started is not None and step_picture(s, files)]
    timed.sort(key=lambda s: (s.started or 0.0, s.session_step))
    shots: list[Shot] = []
    markers: list[Marker] = []
    at = 0.0
    for number, step in enumerate(timed):
        assert step.started is not None
        following = timed[number + 1].started if number + 1 < len(timed) else None
        own = (step.model_ms + step.action_ms) / 1000
        seconds = (following - step.started) if following is not None else max(own, LAST_SHOWN)
        seconds = max(seconds, 0.1)
        picture = step_picture(step, files)
        assert picture is not None
        shots.append(Shot(picture, round(seconds, 3)))
        markers.append(Marker(round(at, 3), step.session_step, marker_label(step)))
        at += seconds
    return VideoPlan(tuple(shots), tuple(markers))


def recorded_markers(steps: Sequence[StepRecord], began: float) -> tuple[Marker, ...]:
    """The steps' places in a recording that began at `began` (time.time())."""
    return tuple(
        Marker(round(max(0.0, step.started - began), 3), step.session_step, marker_label(step))
        for step in steps
        if step.started is not None
    )


def marker_label(step: StepRecord) -> str:
    actions = ", ".join(action.function for action in step.actions)
    status = step.status.value if step.status else "cut short"
    return f"step {step.session_step}: {actions or status}"


def ffmpeg() -> str | None:
    return shutil.which("ffmpeg")


def concat_list(plan: VideoPlan) -> str:
    """ffmpeg's concat list: each picture and how long it shows (the last named twice, as
    the concat demuxer needs for its duration to count)."""
    lines = ["ffconcat version 1.0"]
    for shot in plan.shots:
        lines += [f"file '{_quoted(shot.name)}'", f"duration {shot.seconds:.3f}"]
    if plan.shots:
        lines.append(f"file '{_quoted(plan.shots[-1].name)}'")
    return "\n".join(lines) + "\n"


def _quoted(name: str) -> str:
    return name.replace("'", "'\\''")


def make_video(folder: Path, plan: VideoPlan, name: str = VIDEO_NAME) -> str | None:
    """Encode the plan's pictures as `name` in the folder; its name, or None (no pictures,
    no ffmpeg, or ffmpeg failed: logged). Kept when newer than every picture."""
    binary = ffmpeg()
    if not plan.shots or binary is None:
        return None
    target = folder / name
    newest = max((folder / shot.name).stat().st_mtime for shot in plan.shots)
    if target.is_file() and target.stat().st_mtime >= newest:
        return name
    listing = folder / ".video-frames.ffconcat"
    listing.write_text(concat_list(plan), encoding="utf-8")
    temporary = folder / f".{name}.tmp.webm"
    width, height = SIZE
    fit = (
        f"scale={width}:{height}:force_original_aspect_ratio=decrease,"
        f"pad={width}:{height}:(ow-iw)/2:(oh-ih)/2,format=yuv420p"
    )
    command = [
        binary, "-nostdin", "-hide_banner", "-loglevel", "error", "-y",
        "-f", "concat", "-safe", "0", "-i", listing.name,
        "-vf", fit, "-fps_mode", "vfr",
        "-c:v", "libvpx", "-deadline", "realtime", "-cpu-used", "8", "-b:v", "1M",
        temporary.name,
    ]  # fmt: skip
    try:
        done = subprocess.run(
            command, cwd=folder, capture_output=True, text=True, timeout=FFMPEG_TIMEOUT
        )
    except subprocess.TimeoutExpired:
        log.warning("the video of %s took ffmpeg over %g s: left out", folder, FFMPEG_TIMEOUT)
        temporary.unlink(missing_ok=True)
        return None
    finally:
        listing.unlink(missing_ok=True)
    if done.returncode != 0:
        log.warning("ffmpeg could not make the video of %s: %s", folder, done.stderr.strip())
        temporary.unlink(missing_ok=True)
        return None
    temporary.replace(target)
    return name


@dataclass(frozen=True)
class SessionVideo:
    """What report.html embeds: the video's file, where each step begins, how it was made."""

    name: str
    markers: tuple[Marker, ...]
    recorded: bool  # the screen recorded during the run, not the step screenshots


def session_video(
    folder: Path, steps: Sequence[StepRecord], files: frozenset[str]
) -> SessionVideo | None:
    """The session's video: the recording where the run made one, else one made now from
    the step screenshots (None: no pictures, or no ffmpeg)."""
    if RECORDED_NAME in files and MARKERS_NAME in files:
        began = _recording_began(folder / MARKERS_NAME)
        if began is not None:
            return SessionVideo(RECORDED_NAME, recorded_markers(steps, began), recorded=True)
    plan = plan_video(steps, files)
    made = make_video(folder, plan)
    return SessionVideo(made, plan.markers, recorded=False) if made else None


def _recording_began(path: Path) -> float | None:
    try:
        began = json.loads(path.read_text(encoding="utf-8"))["began"]
    except (OSError, ValueError, KeyError, TypeError) as error:
        log.warning("%s cannot be read (%s): the recording is left out", path, error)
        return None
    return float(began) if isinstance(began, int | float) else None
