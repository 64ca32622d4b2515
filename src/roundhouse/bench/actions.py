"""The action kinds `bench sessions` measures in each application: a key, a click through
the control's accessibility action, a pointer click at its centre, click_control as an
agent issues it (by the route it picks: acting.py, pointing.py), and 20 characters typed;
each as the tool call an agent makes (its look before, the input, the settle, the look
after), the way the code now settles ("after": by what the session tells, reads kept
while nothing changes, a clicked control's own feedback not waited out), the way it did
before (pixels still for 120 ms, every read fresh), and for the clicks "waited": as now,
but with that feedback waited out; taking turns in one process so that load falls on all
alike.

Each application is opened on a document of its own, and each kind acts on something that
changes at every turn: gedit's Save button after a key has modified the document (gedit
then animates its header bar for ~200 ms from the second save on, which the settle waits
out), the digit 7 on GNOME Calculator's keypad, the Qt test app's "Press me" button, whose
label counts the presses. Keys go to gedit's document and the Qt app's line edit, clicked
first (not measured). Before each click the pointer is moved off the window's controls and
its hover left to fade (not measured), so that every click's pointer arrives from
elsewhere, as an agent's does, and the button's hover transition is in every turn.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from roundhouse.bench.tree import QT_APP, available
from roundhouse.core.polling import until_async
from roundhouse.devices.linux.tools import DesktopTools

KINDS = ("key", "click by action", "click by pointer", "click as issued", "type 20 characters")
MODES = ("before", "waited", "after")
# "waited": as "after", but what a clicked control draws on itself is waited out, as the
# settle did before it spared that feedback; measured for the clicks only.
CLICKS = ("click by action", "click by pointer", "click as issued")
TYPED = "abcdefghijklmnopqrst"  # 20 characters
READY_TIMEOUT = 60.0
AWAY_WAIT = 0.35  # seconds a hover left is given to fade (GTK's transitions take 200 ms)
AWAY_INSET = 12  # pixels from the screen's edge where the pointer waits between clicks


@dataclass(frozen=True)
class Script:
    """How each kind is done in one application."""

    name: str
    command: str  # for launch_application
    button: str  # the control the clicks act on
    key: str  # a key that changes what shows
    typed: str = TYPED
    field: tuple[str, str] | None = None  # (role, name) focused before keys, not measured
    reset: str | None = None  # keys pressed between turns (not measured)


@dataclass(frozen=True)
class KindFigures:
    app: str
    kind: str
    before_ms: float  # the tool call, median
    after_ms: float
    before_settle_ms: float
    after_settle_ms: float
    after_not_seen: int  # turns whose effect was "not seen" (the late watch then ran)
    waited_ms: float | None = None  # the clicks: their feedback waited out
    waited_settle_ms: float | None = None


def scripts(folder: Path) -> tuple[list[Script], list[str]]:
    """The applications measured, those installed; notes on those that are not."""
    document = folder / "notes.txt"
    document.write_text("".join(f"line {n} of the notes\n" for n in range(20)))
    wanted = [
        Script(
            "gedit",
            f"gedit --standalone {document}",
            button="Save",
            key="x",
            field=("text", ""),  # the document
        ),
        Script(
            "calculator",
            "gnome-calculator",
            button="7",
            key="7",
            typed="12345678901234567890",
            reset="Escape",
        ),
        Script(
            "qt",
            f"{sys.executable} {QT_APP}",
            button="Press me",
            key="x",
            field=("text", "Your name"),
        ),
    ]
    return available(wanted, lambda script: script.command.split())


async def measure(tools: DesktopTools, script: Script, runs: int) -> list[KindFigures]:
    """Every kind in `script`'s application, `runs` turns of each mode (the first dropped)."""
    launched = await tools.launch_application(script.command)
    await _ready(tools, script.button)
    totals: dict[tuple[str, str], list[float]] = {}
    settles: dict[tuple[str, str], list[float]] = {}
    not_seen: dict[str, int] = dict.fromkeys(KINDS, 0)
    try:
        for turn in range(runs + 1):
            for kind in KINDS:
                for mode in MODES:
                    if mode == "waited" and kind not in CLICKS:
                        continue
                    _mode(tools, mode)
                    button = await _prepare(tools, script, kind)
                    started = time.perf_counter()
                    done = await _act(tools, script, kind, button)
                    elapsed = (time.perf_counter() - started) * 1000
                    if turn:
                        totals.setdefault((kind, mode), []).append(elapsed)
                        settles.setdefault((kind, mode), []).append(float(done["settle_ms"]))
                        if mode == "after" and done.get("effect") != "confirmed":
                            not_seen[kind] += 1
    finally:
        _mode(tools, "after")
        await close(tools, launched["xid"])
    return [
        KindFigures(
            app=script.name,
            kind=kind,
            before_ms=_median(totals[(kind, "before")]),
            after_ms=_median(totals[(kind, "after")]),
            before_settle_ms=_median(settles[(kind, "before")]),
            after_settle_ms=_median(settles[(kind, "after")]),
            after_not_seen=not_seen[kind],
            waited_ms=_median(totals[(kind, "waited")]) if kind in CLICKS else None,
            waited_settle_ms=_median(settles[(kind, "waited")]) if kind in CLICKS else None,
        )
        for kind in KINDS
    ]


async def close(tools: DesktopTools, xid: int) -> None:
    """Close the window, its edits discarded where it asks first (gedit): a question left
    open took the focus on sway, and the next application's window was not the active one."""
    await tools.close_window(xid)
    for window in await tools.list_windows():
        if window["active"] and window["xid"] != xid:
            listed = await tools.get_controls(window["xid"])
            discard = [c for c in listed["controls"] if c["name"] == "Close without Saving"]
            if discard:
                await tools.click_control(label=discard[0]["label"], window_id=window["xid"])


def _mode(tools: DesktopTools, mode: str) -> None:
    """ "before": the settle compares pixels and every read is fresh, as before the
    witnesses; "waited": the witnesses, but a clicked control's own feedback waited out;
    "after": as the code runs."""
    tools.witnessed = mode != "before"
    tools.spare_feedback = mode == "after"


async def _ready(tools: DesktopTools, name: str) -> None:
    async def shown() -> bool:
        listed = await tools.get_controls()
        return any(control["name"] == name for control in listed["controls"])

    await until_async(
        shown, READY_TIMEOUT, f"no control named {name!r}", every=0.2, error=RuntimeError
    )


async def _control(tools: DesktopTools, role: str, name: str) -> dict[str, Any]:
    listed = await tools.get_controls()
    found = next((c for c in listed["controls"] if (c["role"], c["name"]) == (role, name)), None)
    if found is None:
        names = [(c["role"], c["name"]) for c in listed["controls"]]
        raise RuntimeError(f"no {role} named {name!r}: {names}")
    return dict(found)


async def _prepare(tools: DesktopTools, script: Script, kind: str) -> dict[str, Any]:
    """What goes before a turn, not measured: a display cleared, the field focused for
    keys, a document modified so that Save saves, and the controls read, as an agent's
    step reads them before it acts: the button clicked, as listed then."""
    if script.reset:
        await tools.press_keys(script.reset)
    if script.field is not None:
        # Keys go to the field (a click on a button takes the focus), and gedit's document
        # is modified, so that Save has something to do.
        await tools.click_control(label=(await _control(tools, *script.field))["label"])
        if script.name == "gedit" and kind.startswith("click"):
            await tools.press_keys(script.key)
    if kind.startswith("click"):
        await _pointer_away(tools)
    return await _control(tools, "push button", script.button)


async def _pointer_away(tools: DesktopTools) -> None:
    """The pointer moved onto the active window where none of its controls is (inside it:
    sway focuses the window under the pointer), and what it left allowed to fade."""
    listed = await tools.get_controls()
    rects = [control["rect"] for control in listed["controls"]]
    width, height = tools.screen.size
    whole = {"left": 0, "top": 0, "right": width, "bottom": height}
    window = listed["window"]["rect"] if listed.get("window") else whole
    left, right = window["left"] + AWAY_INSET, window["right"] - AWAY_INSET
    top, bottom = window["top"] + AWAY_INSET, window["bottom"] - AWAY_INSET
    middle, centre = (top + bottom) // 2, (left + right) // 2
    spots = [(left, bottom), (centre, bottom), (right, bottom), (left, middle), (right, middle)]
    spots += [(left, top), (centre, top), (right, top)]
    free = [spot for spot in spots if not any(_holds(rect, spot) for rect in rects)]
    await asyncio.to_thread(tools.input.move, *(free or spots)[0])
    await asyncio.sleep(AWAY_WAIT)


def _holds(rect: dict[str, int], spot: tuple[int, int]) -> bool:
    x, y = spot
    return rect["left"] <= x < rect["right"] and rect["top"] <= y < rect["bottom"]


async def _act(
    tools: DesktopTools, script: Script, kind: str, button: dict[str, Any]
) -> dict[str, Any]:
    actions: dict[str, Callable[[], Awaitable[dict[str, Any]]]] = {
        "key": lambda: tools.press_keys(script.key),
        "type 20 characters": lambda: tools.type_text(script.typed),
        "click by action": lambda: _by_action(tools, button),
        "click by pointer": lambda: tools.click_coordinates(*_centre(button["rect"])),
        "click as issued": lambda: tools.click_control(label=button["label"]),
    }
    return await actions[kind]()


async def _by_action(tools: DesktopTools, button: dict[str, Any]) -> dict[str, Any]:
    tools.pointer_clicks = False  # the action route itself, wherever the pointer is faster
    try:
        done = await tools.click_control(label=button["label"])
    finally:
        tools.pointer_clicks = True
    if not str(done.get("route", "")).startswith("action:"):
        raise RuntimeError(f"{button['name']!r} was clicked by {done.get('route')}")
    return done


def _centre(rect: dict[str, int]) -> tuple[int, int]:
    return (rect["left"] + rect["right"]) // 2, (rect["top"] + rect["bottom"]) // 2


def _median(values: list[float]) -> float:
    return round(statistics.median(values), 1)
