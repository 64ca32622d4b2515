"""Where a point on a two-monitor desktop goes: GNOME's stream of the monitor it lies on, in
that monitor's pixels; and a KWin output's scale read from its rounded logical size."""

from __future__ import annotations

from roundhouse.devices.contract import Rect
from roundhouse.devices.linux.display.base import Monitor
from roundhouse.devices.linux.display.gnome.remote import Stream, stream_for
from roundhouse.devices.linux.display.kde.outputs import output_scale
from roundhouse.devices.linux.display.wayland.globals import Output

FIRST = Stream(Monitor(1, "Meta-0", Rect(0, 0, 1280, 800)), "/stream/1")
SECOND = Stream(Monitor(2, "Meta-1", Rect(1280, 0, 2560, 800), 1.5), "/stream/2")


def test_a_point_goes_to_the_stream_of_its_monitor_in_its_pixels() -> None:
    assert stream_for([FIRST, SECOND], 1279, 799) is FIRST
    assert stream_for([FIRST, SECOND], 1280, 0) is SECOND
    assert SECOND.position(1280 + 100, 40) == (150.0, 60.0)
    assert FIRST.position(100, 40) == (100.0, 40.0)


def test_a_point_on_no_monitor_goes_to_the_nearest() -> None:
    short = Stream(Monitor(2, "Virtual-1", Rect(1280, 0, 2133, 533), 1.5), "/stream/2")
    assert stream_for([FIRST, short], 2000, 700) is short
    assert stream_for([FIRST, short], 1290, 700) is FIRST  # 11 pixels right of it


def test_a_kwin_output_scale_is_read_to_the_nearest_120th() -> None:
    scaled = Output(1, width=1280, height=800, logical=Rect(1280, 0, 2133, 533))
    assert output_scale(scaled) == 1.5
    plain = Output(2, width=1280, height=800, logical=Rect(0, 0, 1280, 800))
    assert output_scale(plain) == 1.0
