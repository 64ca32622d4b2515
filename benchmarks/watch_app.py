"""The bench's window (benchmarks/bench_watch.py): a GTK 3 window filling most of the screen,
run with the system Python (python3-gi). `animate`: it redraws a moving bar and a counter
at 60 Hz, so the screen changes all the time (the frame rate's load); `flip`: it stays still
and turns from black to white at each key press (the latency's change)."""

from __future__ import annotations

import sys
import time

import gi

gi.require_version("Gtk", "3.0")
from gi.repository import GLib, Gtk  # noqa: E402

MODE = sys.argv[1] if len(sys.argv) > 1 else "animate"
state = {"n": 0, "white": False}


def draw(_area: Gtk.DrawingArea, cr: object) -> None:
    width, height = _area.get_allocated_width(), _area.get_allocated_height()
    if MODE == "flip":
        shade = 1.0 if state["white"] else 0.0
        cr.set_source_rgb(shade, shade, shade)  # type: ignore[attr-defined]
        cr.paint()  # type: ignore[attr-defined]
        return
    cr.set_source_rgb(0.1, 0.2, 0.3)  # type: ignore[attr-defined]
    cr.paint()  # type: ignore[attr-defined]
    x = (state["n"] * 7) % max(width, 1)
    cr.set_source_rgb(0.9, 0.6, 0.1)  # type: ignore[attr-defined]
    cr.rectangle(x, 0, 40, height)  # type: ignore[attr-defined]
    cr.fill()  # type: ignore[attr-defined]
    cr.set_source_rgb(1, 1, 1)  # type: ignore[attr-defined]
    cr.set_font_size(48)  # type: ignore[attr-defined]
    cr.move_to(40, 80)  # type: ignore[attr-defined]
    cr.show_text(f"{state['n']} {time.monotonic():.3f}")  # type: ignore[attr-defined]


def tick(area: Gtk.DrawingArea) -> bool:
    state["n"] += 1
    area.queue_draw()
    return True


def key(_window: Gtk.Window, _event: object, area: Gtk.DrawingArea) -> bool:
    state["white"] = not state["white"]
    area.queue_draw()
    return True


window = Gtk.Window(title=f"roundhouse watch bench ({MODE})")
window.set_default_size(1000, 650)
area = Gtk.DrawingArea()
area.connect("draw", draw)
window.add(area)
window.connect("destroy", Gtk.main_quit)
window.connect("key-press-event", key, area)
if MODE == "animate":
    GLib.timeout_add(16, tick, area)
window.show_all()
Gtk.main()
