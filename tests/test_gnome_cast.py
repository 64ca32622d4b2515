"""GNOME's screen cast reader (gnome/cast.py) with a real process in GStreamer's place: a
first frame lost (Mutter sends it once, then only on a change) gets a new pipeline, and a
pipeline that never sends or that ends says so."""

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
    monkeypatch.setattr(cast, "FIRST_FRAME_TIMEOUT", 3.0)


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
def test_no_frame_from_any_pipeline_fails_naming_the_time_and_how_many(tmp_path: Path) -> None:
    with pytest.raises(TimeoutError, match=r"no frame within 3 s \((\d+) pipelines\)") as failed:
        CastScreen(0, {}, SIZE, argv=frames_from_the_nth_start(tmp_path, 99))
    # One every 0.5 s for 3 s: six, or fewer where starting them took time.
    started = (tmp_path / "starts").read_text()
    assert f"({started} pipelines)" in str(failed.value) and 2 <= int(started) <= 6


@pytest.mark.usefixtures("quick")
def test_a_pipeline_that_ends_is_not_started_again() -> None:
    with pytest.raises(DisplayUnavailable, match="pipeline ended"):
        CastScreen(0, {}, SIZE, argv=[sys.executable, "-c", "pass"])
