"""GNOME's monitors, through Mutter's DisplayConfig (what GNOME's display settings use, open
to any client of the session bus): read, and on a virtual desktop arranged as a person's
two monitors are, the second at scale 1.5.

Mutter scales a monitor by a fraction only with its experimental feature
scale-monitor-framebuffer (org.gnome.mutter experimental-features): the stage is then laid
out in logical pixels, a monitor's logical size its pixels divided by its scale. Without
it (the layout in physical pixels) a scale only makes applications draw bigger; the
desktop's pixels are the monitors' own.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass

from roundhouse.devices.contract import Rect
from roundhouse.devices.linux.display.base import Monitor, numbered
from roundhouse.devices.linux.display.wayland.dbus import SyncBus

DISPLAY_CONFIG = (
    "org.gnome.Mutter.DisplayConfig",
    "/org/gnome/Mutter/DisplayConfig",
    "org.gnome.Mutter.DisplayConfig",
)
SHELL = ("org.gnome.Shell", "/org/gnome/Shell", "org.gnome.Shell")
LOGICAL_LAYOUT = 1  # layout-mode: logical pixels (fractional scales); 2 is physical
TEMPORARY = 1  # ApplyMonitorsConfig's method: applied, not stored, no "keep?" dialog
FRACTIONAL = "scale-monitor-framebuffer"


@dataclass(frozen=True)
class Mode:
    """A monitor's current mode: its id, its pixels and the scales Mutter offers it."""

    connector: str
    mode_id: str
    width: int
    height: int
    scales: tuple[float, ...]


@dataclass(frozen=True)
class State:
    """What GetCurrentState says, as far as monitors go."""

    serial: int
    logical_layout: bool
    modes: dict[str, Mode]
    # Each logical monitor: its first monitor's connector, place and scale.
    placed: list[tuple[str, int, int, float]]

    def monitors(self) -> list[Monitor]:
        found = []
        for connector, x, y, scale in self.placed:
            mode = self.modes[connector]
            if self.logical_layout:
                width, height = round(mode.width / scale), round(mode.height / scale)
            else:  # physical: the desktop's pixels are the monitor's, whatever the scale
                width, height, scale = mode.width, mode.height, 1.0
            found.append((connector, Rect(x, y, x + width, y + height), scale))
        return numbered(found)


def read_state(bus: SyncBus) -> State:
    serial, monitors, logical, properties = bus.call(*DISPLAY_CONFIG, "GetCurrentState")
    modes = {}
    for (connector, *_), listed, _props in monitors:
        for mode_id, width, height, _rate, _preferred, scales, flags in listed:
            current = flags.get("is-current")
            if current is not None and current.value:
                modes[connector] = Mode(connector, mode_id, width, height, tuple(scales))
    placed = [
        (members[0][0], x, y, scale)
        for x, y, scale, _transform, _primary, members, _props in logical
        if members and members[0][0] in modes
    ]
    layout = properties.get("layout-mode")
    return State(serial, layout is not None and layout.value == LOGICAL_LAYOUT, modes, placed)


def read_monitors(bus: SyncBus) -> list[Monitor]:
    """The monitors, numbered left to right, in the desktop's pixels."""
    return read_state(bus).monitors()


def arrange(bus: SyncBus, scales: list[float], deadline: float) -> list[Monitor]:
    """Put the monitors side by side in the order Mutter numbers their connectors (Meta-0,
    Meta-1: `--virtual-monitor`'s order), the first primary, each at its scale in `scales`
    (fractional ones switch Mutter's experimental feature on first, through the Shell's
    Eval); the monitors once Mutter has them so. RuntimeError where it will not."""
    if any(scale != round(scale) for scale in scales):
        _allow_fractions(bus, deadline)
    state = _until(bus, lambda s: s.logical_layout or all(x == 1 for x in scales), deadline)
    connectors = sorted(state.modes)
    if len(connectors) != len(scales):
        raise RuntimeError(f"Mutter has monitors {connectors}, not {len(scales)}")
    logical: list[tuple[int, int, float, int, bool, list[tuple[str, str, dict[str, object]]]]] = []
    places, left = [], 0
    for number, (connector, wanted) in enumerate(zip(connectors, scales, strict=True)):
        mode = state.modes[connector]
        scale = min(mode.scales, key=lambda offered: abs(offered - wanted))
        if abs(scale - wanted) > 0.01:
            raise RuntimeError(f"Mutter offers {connector} scales {mode.scales}, not {wanted}")
        member: list[tuple[str, str, dict[str, object]]] = [(connector, mode.mode_id, {})]
        logical.append((left, 0, scale, 0, number == 0, member))
        places.append((connector, left, 0, scale))
        left += round(mode.width / scale) if state.logical_layout else mode.width
    bus.call(
        *DISPLAY_CONFIG,
        "ApplyMonitorsConfig",
        "uua(iiduba(ssa{sv}))a{sv}",
        [state.serial, TEMPORARY, logical, {}],
    )
    return _until(bus, lambda now: sorted(now.placed) == sorted(places), deadline).monitors()


def _allow_fractions(bus: SyncBus, deadline: float) -> None:
    script = (
        "const { Gio } = imports.gi;"
        "const s = new Gio.Settings({ schema_id: 'org.gnome.mutter' });"
        "const on = s.get_strv('experimental-features');"
        f"if (!on.includes({json.dumps(FRACTIONAL)}))"
        f"  s.set_strv('experimental-features', [...on, {json.dumps(FRACTIONAL)}]);"
        "'ok'"
    )
    timeout = max(deadline - time.monotonic(), 1.0)
    ok, result = bus.call(*SHELL, "Eval", "s", [script], timeout=timeout)
    if not ok:
        raise RuntimeError(f"GNOME Shell did not allow fractional scales: {result or 'refused'}")


def _until(bus: SyncBus, wanted: Callable[[State], bool], deadline: float) -> State:
    while True:
        state = read_state(bus)
        if wanted(state):
            return state
        if time.monotonic() >= deadline:
            raise RuntimeError(f"Mutter's monitors stayed {state.placed}")
        time.sleep(0.05)
