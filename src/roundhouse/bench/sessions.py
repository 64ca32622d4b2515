"""`roundhouse bench sessions`: what an agent's step costs on each kind of desktop, measured
in one run on this machine — X11 (Xvfb) and the headless Wayland sessions (sway, GNOME,
KDE), each started fresh with gedit on a document of 200 lines.

Per session kind, the median over `--runs` rounds of:
- grab: the screen's pixels (display.base.Screen.desktop), the part the display server does;
- screenshot: the tool capture_desktop_screenshot, the grab and its PNG;
- controls: the tool get_controls on gedit's window (its controls counted), read fresh, and
  warm: read again at once, nothing changed (atspi_kept);
- action: the tool type_text of one letter into gedit: the input, the settle and the two
  looks that tell what it did; `settle` is the settle's part;
- then per application (gedit, GNOME Calculator, the Qt test app) and action kind (a key, a
  click by action, a click by pointer, 20 characters typed: bench/actions.py), the tool call
  as the code settles now and as it did before (pixels still for 120 ms, reads fresh),
  taking turns in the same process.
The operations take turns within a round, so load from other processes falls on all alike.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Annotated, Any

import typer

from roundhouse.bench import actions as bench_actions
from roundhouse.bench.actions import KindFigures
from roundhouse.bench.app import bench_app
from roundhouse.config import DesktopSettings, Settings
from roundhouse.devices.linux.desktops.desktop import DesktopUnavailable
from roundhouse.devices.linux.desktops.virtual import VirtualDesktop
from roundhouse.devices.linux.display.backends import SESSION_KINDS
from roundhouse.devices.linux.tools import DesktopTools

DOCUMENT_LINES = 200


@dataclass(frozen=True)
class SessionFigures:
    session: str
    routes: dict[str, str]
    grab_ms: float
    screenshot_ms: float
    controls_ms: float
    controls_warm_ms: float
    controls: int
    action_ms: float
    settle_ms: float
    start_s: float  # the desktop, up
    runs: int
    kinds: list[KindFigures] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _median(values: list[float]) -> float:
    return round(statistics.median(values), 1)


async def _timed(call: Callable[[], Awaitable[Any]]) -> tuple[float, Any]:
    started = time.perf_counter()
    result = await call()
    return (time.perf_counter() - started) * 1000, result


async def measure(kind: str, runs: int, folder: Path) -> SessionFigures:
    document = folder / f"{kind}.txt"
    document.write_text("".join(f"line {n} of the document\n" for n in range(DOCUMENT_LINES)))
    started = time.perf_counter()
    virtual = VirtualDesktop(DesktopSettings(session=kind))
    desktop = await asyncio.to_thread(virtual.start)
    start_s = time.perf_counter() - started
    try:
        async with await DesktopTools.open(desktop, Settings()) as tools:
            figures = await _rounds(kind, tools, document, runs, start_s)
            applications, notes = bench_actions.scripts(folder)
            for script in applications:
                typer.echo(f"roundhouse: {kind}: {script.name}", err=True)
                figures.kinds.extend(await bench_actions.measure(tools, script, runs))
            figures.notes.extend(notes)
            return figures
    finally:
        await asyncio.to_thread(virtual.stop)  # the applications with it


async def _rounds(
    kind: str, tools: DesktopTools, document: Path, runs: int, start_s: float
) -> SessionFigures:
    launched = await tools.launch_application(f"gedit --standalone {document}")
    grab, shot, read, warm, act, settle = [], [], [], [], [], []
    count = 0
    for _ in range(runs + 1):  # the first round warms the caches up, and is dropped
        ms_grab, _ = await _timed(lambda: asyncio.to_thread(tools.screen.desktop))
        ms_shot, _ = await _timed(tools.capture_desktop_screenshot)
        tools.witnessed = False  # read fresh
        ms_read, listed = await _timed(tools.get_controls)
        tools.witnessed = True
        ms_warm, _ = await _timed(tools.get_controls)
        ms_act, done = await _timed(lambda: tools.type_text("x"))
        grab.append(ms_grab)
        shot.append(ms_shot)
        read.append(ms_read)
        warm.append(ms_warm)
        act.append(ms_act)
        settle.append(float(done.get("settle_ms", 0.0)))
        count = len(listed["controls"])
    await bench_actions.close(tools, launched["xid"])
    return SessionFigures(
        session=kind,
        routes=dict(tools.display.routes),
        grab_ms=_median(grab[1:]),
        screenshot_ms=_median(shot[1:]),
        controls_ms=_median(read[1:]),
        controls_warm_ms=_median(warm[1:]),
        controls=count,
        action_ms=_median(act[1:]),
        settle_ms=_median(settle[1:]),
        start_s=round(start_s, 2),
        runs=runs,
    )


def table(rows: list[SessionFigures]) -> str:
    head = (
        "| session | desktop up, s | grab, ms | screenshot (grab + PNG), ms | controls read, ms "
        "(controls) | warm, ms | action + settle, ms (settle) |"
    )
    lines = [head, "|---|---|---|---|---|---|---|"]
    for row in rows:
        lines.append(
            f"| {row.session} | {row.start_s} | {row.grab_ms} | {row.screenshot_ms} | "
            f"{row.controls_ms} ({row.controls}) | {row.controls_warm_ms} | "
            f"{row.action_ms} ({row.settle_ms}) |"
        )
    lines += [
        "",
        "Action + settle per kind, ms: before -> after (settle before -> after); the clicks "
        "before -> feedback waited out -> after",
        "",
    ]
    lines.append("| session | application | " + " | ".join(bench_actions.KINDS) + " |")
    lines.append("|---|---|" + "---|" * len(bench_actions.KINDS))
    for row in rows:
        for app in dict.fromkeys(figures.app for figures in row.kinds):
            cells = []
            for kind in bench_actions.KINDS:
                figure = next(f for f in row.kinds if f.app == app and f.kind == kind)
                late = f", {figure.after_not_seen} not seen" if figure.after_not_seen else ""
                waited = waited_settle = ""
                if figure.waited_ms is not None:
                    waited = f" -> {figure.waited_ms}"
                    waited_settle = f" -> {figure.waited_settle_ms}"
                cells.append(
                    f"{figure.before_ms}{waited} -> {figure.after_ms} "
                    f"({figure.before_settle_ms}{waited_settle} -> "
                    f"{figure.after_settle_ms}{late})"
                )
            lines.append(f"| {row.session} | {app} | " + " | ".join(cells) + " |")
    lines.append("")
    for row in rows:
        routes = "; ".join(f"{part}: {route}" for part, route in row.routes.items())
        lines.append(f"- {row.session}: {routes}")
        lines += [f"- {row.session}: {note}" for note in row.notes]
    return "\n".join(lines)


@bench_app.command("sessions")
def sessions(
    session: Annotated[
        list[str] | None,
        typer.Option(
            "--session",
            help="A session kind to measure (repeatable; default: every kind, those that "
            "cannot start here skipped, saying why)",
        ),
    ] = None,
    runs: Annotated[int, typer.Option(min=1, help="Rounds per session kind")] = 20,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON")] = False,
) -> None:
    """Screenshot, controls read and action + settle on gedit, per kind of desktop."""
    kinds = session or list(SESSION_KINDS)
    unknown = [kind for kind in kinds if kind not in SESSION_KINDS]
    if unknown:
        typer.echo(f"roundhouse: unknown session {unknown[0]!r}: {', '.join(SESSION_KINDS)}")
        raise typer.Exit(2)
    rows = []
    with tempfile.TemporaryDirectory(prefix="roundhouse-bench-") as folder:
        for kind in kinds:
            typer.echo(f"roundhouse: measuring {kind} ({runs} rounds)", err=True)
            try:
                row = asyncio.run(measure(kind, runs, Path(folder)))
            except DesktopUnavailable as error:  # labwc on Debian 12: the others go on
                typer.echo(f"roundhouse: {kind} skipped: {error}", err=True)
                continue
            rows.append(row)
            # Each kind's figures as they come: a long run stopped later keeps them.
            typer.echo(table([row]), err=True)
    if not rows:
        typer.echo("roundhouse: no session kind could start here: nothing measured", err=True)
        raise typer.Exit(1)
    if as_json:
        typer.echo(json.dumps([asdict(row) for row in rows], indent=2))
    else:
        typer.echo(table(rows))
