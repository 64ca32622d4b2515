"""Settle instead of sleep: after an action, wait until the screen stops changing.

UFO sleeps a fixed second after every action and OSWorld two. Here we watch the screen:
a raw grab costs ~1.5 ms and comparing two is a memcmp (X pixels do not flicker, so
exact equality is the right test; no scaling or thresholds needed). Once the picture has
changed and then held still for `quiet` seconds, the UI has settled. `quiet` outlasts a
Qt button's ~100 ms press animation, which runs before the click takes effect. An action that
changes nothing on screen returns after `grace`. `timeout` caps the wait (an animation
that never stops); `floor` is the configured sleep_time.

Pass a frame taken before the action (`frame()`), so that a change that happened before
we started watching still counts as the action's effect.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

from roundhouse.devices.contract import Rect
from roundhouse.devices.linux.display.base import RouteRefused, Screen


@dataclass(frozen=True)
class Settled:
    elapsed_ms: float
    changed: bool  # the screen changed after the action
    timed_out: bool  # still changing at `timeout`


def frame(screen: Screen, region: Rect | None = None) -> bytes:
    """The screen's (or a region's) pixels now, to compare with later ones; nothing where
    the session refuses its screen (a person's KWin before `roundhouse setup kde`): the
    settle then waits out its grace, and the action itself goes on."""
    try:
        return screen.raw(region)
    except RouteRefused:
        return b""


async def wait_quiet(
    screen: Screen,
    *,
    before: bytes | None = None,
    region: Rect | None = None,
    timeout: float = 2.0,
    floor: float = 0.0,
    quiet: float = 0.12,
    grace: float = 0.15,
    interval: float = 0.015,
) -> Settled:
    """Wait until the screen has been still for `quiet` seconds (see the module docstring)."""
    start = time.monotonic()
    if floor > 0:
        await asyncio.sleep(floor)
    last = before if before is not None else frame(screen, region)
    changed = False
    still_since = time.monotonic()
    while True:
        now = time.monotonic()
        if now - start >= timeout:
            return Settled(_ms(start), changed, timed_out=True)
        # Before any change, give the application `grace` to react; after one, `quiet`.
        if now - still_since >= (quiet if changed else max(grace, quiet)):
            return Settled(_ms(start), changed, timed_out=False)
        await asyncio.sleep(interval)
        current = frame(screen, region)
        if current != last:
            changed = True
            still_since = time.monotonic()
        last = current


def _ms(start: float) -> float:
    return (time.monotonic() - start) * 1000
