"""GNOME's screen cast reader (gnome/cast.py) with a real process in GStreamer's place: a
first frame lost (Mutter sends it once, then only on a change) gets one new pipeline, and
a cast that never sends or a pipeline that ends says so."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from roundhouse.devices.linux.display.base import DisplayUnavailable
from roundhouse.devices.linux.display.gnome import cast
from roundhouse.devices.linux.display.gnome.cast import CastScreen

SIZE = (4, 2)
RED = b"\x00\x00\xff\x00"  # BGRx


def frames_from_the_nth_start(tmp_path: Path, nth: int) -> list[str]:
    """A pipeline that stays silent (as one whose first frame was lost) until its nth
    start, which writes one red frame and stays up as gst-launch does."""
    starts = tmp_path / "starts"
    program = f"""
import pathlib, sys, time
starts = pathlib.Path({str(starts)!r})
count = int(starts.read_text()) + 1 if starts.exists() else 1
starts.write_text(str(count))
if count >= {nth}:
    sys.stdout.buffer.write({RED!r} * {SIZE[0] * SIZE[1]})
    sys.stdout.buffer.flush()
time.sleep(60)
"""
    return [sys.executable, "-c", program]


@pytest.fixture
def quick(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cast, "FIRST_FRAME_QUIET", 0.5)
    monkeypatch.setattr(cast, "FIRST_FRAME_TIMEOUT", 1.0)


@pytest.mark.usefixtures("quick")
def test_a_lost_first_frame_gets_a_new_pipeline_whose_frame_is_the_screen(
    tmp_path: Path,
) -> None:
    screen = CastScreen(0, {}, SIZE, argv=frames_from_the_nth_start(tmp_path, 2))
    try:
        assert screen.pipelines == 2
        assert (tmp_path / "starts").read_text() == "2"
        assert screen.desktop().getpixel((3, 1)) == (255, 0, 0)
        assert screen.raw() == b"1"
    finally:
        screen.close()


@pytest.mark.usefixtures("quick")
def test_a_first_frame_at_once_starts_one_pipeline(tmp_path: Path) -> None:
    screen = CastScreen(0, {}, SIZE, argv=frames_from_the_nth_start(tmp_path, 1))
    screen.close()
    assert screen.pipelines == 1


@pytest.mark.usefixtures("quick")
def test_no_frame_from_either_pipeline_fails_naming_both_waits(tmp_path: Path) -> None:
    """A second pipeline, and no third: a start slower than the quiet time has the whole
    timeout in the second, and a cast that sends nothing is said."""
    message = r"no frame within 0.5 s, nor a new pipeline's within 1 s"
    with pytest.raises(TimeoutError, match=message):
        CastScreen(0, {}, SIZE, argv=frames_from_the_nth_start(tmp_path, 3))
    assert (tmp_path / "starts").read_text() == "2"


@pytest.mark.usefixtures("quick")
def test_a_pipeline_that_ends_is_not_started_again() -> None:
    with pytest.raises(DisplayUnavailable, match="pipeline ended"):
        CastScreen(0, {}, SIZE, argv=[sys.executable, "-c", "pass"])
