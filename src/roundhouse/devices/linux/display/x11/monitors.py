"""An X screen's monitors, through RandR 1.5: read (a person's two screens) and, on a virtual
desktop, made.

Xvfb has one output. Two monitors are one wide screen split by two RandR monitors
(SetMonitor): the first takes over the output (so its automatic monitor goes), the second
names none. GTK, Qt and openbox read monitors from RandR (openbox through the Xinerama that
RandR answers), so windows maximize and place within one, as on two real screens. X11 has
no scale per monitor: each monitor's pixels are the screen's.

python-xlib's SetMonitor cannot pack its monitor (its rq.Object field fails), so the request
is declared here, field by field as the protocol lays it out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from Xlib.display import Display  # type: ignore[import-untyped, unused-ignore]
from Xlib.ext import randr  # type: ignore[import-untyped, unused-ignore]
from Xlib.protocol import rq  # type: ignore[import-untyped, unused-ignore]

from roundhouse.devices.contract import Rect
from roundhouse.devices.linux.display.base import Monitor, numbered

MONITOR_NAME = "RH-{}"
DPI = 96  # what a monitor's millimetres are worked out at: toolkits read no scale from it


class _SetMonitor(rq.Request):  # type: ignore[misc]
    _request = rq.Struct(
        rq.Card8("opcode"),
        rq.Opcode(43),
        rq.RequestLength(),
        rq.Window("window"),
        rq.Card32("name"),
        rq.Bool("primary"),
        rq.Bool("automatic"),
        rq.LengthOf("outputs", 2),
        rq.Int16("x"),
        rq.Int16("y"),
        rq.Card16("width_in_pixels"),
        rq.Card16("height_in_pixels"),
        rq.Card32("width_in_millimeters"),
        rq.Card32("height_in_millimeters"),
        rq.List("outputs", rq.Card32Obj),
    )


def set_monitors(display: str, rects: Sequence[Rect]) -> None:
    """Split the X screen into monitors at `rects` (the first is the primary one)."""
    connection = Display(display)
    try:
        root = connection.screen().root
        opcode = connection.display.get_extension_major(randr.extname)
        output = root.xrandr_get_screen_resources()._data["outputs"][0]
        for number, rect in enumerate(rects, 1):
            _SetMonitor(
                display=connection.display,
                opcode=opcode,
                window=root,
                name=connection.intern_atom(MONITOR_NAME.format(number)),
                primary=number == 1,
                automatic=False,
                x=rect.left,
                y=rect.top,
                width_in_pixels=rect.width,
                height_in_pixels=rect.height,
                width_in_millimeters=rect.width * 254 // (DPI * 10),
                height_in_millimeters=rect.height * 254 // (DPI * 10),
                outputs=[output] if number == 1 else [],
            )
            connection.sync()
    finally:
        connection.close()


def read_monitors(connection: Any, size: tuple[int, int]) -> list[Monitor]:
    """The screen's active monitors, left to right; one covering it where RandR lists none
    (a server without RandR 1.5)."""
    width, height = size
    whole = [Monitor(1, "screen", Rect(0, 0, width, height))]
    if not connection.has_extension("RANDR"):
        return whole
    version = connection.xrandr_query_version()
    if (version.major_version, version.minor_version) < (1, 5):
        return whole
    listed = connection.screen().root.xrandr_get_monitors(is_active=True)._data["monitors"]
    found = [
        (
            connection.get_atom_name(item["name"]),
            Rect(
                item["x"],
                item["y"],
                item["x"] + item["width_in_pixels"],
                item["y"] + item["height_in_pixels"],
            ),
            1.0,
        )
        for item in listed
    ]
    return numbered(found) or whole
