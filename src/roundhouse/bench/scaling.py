"""The scaling row of `roundhouse bench tree`: the same Chromium page with a table of 50,
500 and 2,500 rows (1×, 10×, 50×), one page at a time in the same run. What shows on screen
is the same top of the page each time, so the controls read should cost the same: the goal
(issue 10 §4) is that at 50× it takes at most twice as long as at 1×. Besides the medians,
each size says how many D-Bus calls one read made, how long a read took right after one
with nothing changed (a warm read: atspi_kept), how long `roundhouse tree --controls` took
as a whole command, a new process's first read (the goal, issue 37: at 50× at most 200 ms
above 1×), and how many nodes the full tree read (get_ui_tree) took in: up to
TreeLimits.max_nodes, and only what is in view of a table too long to list
(atspi_node.MAX_CHILDREN)."""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from roundhouse.bench import setup as bench_setup
from roundhouse.devices.contract import ControlList, WindowInfo
from roundhouse.devices.linux.atspi.client import AtspiClient
from roundhouse.devices.linux.desktops.desktop import Desktop

BASE_ROWS = 50
FACTORS = (1, 10, 50)
GOAL_RATIO = 2.0
GOAL_COMMAND_GROWTH = 200.0  # ms: the whole command at 50× over 1× (issue 37)
COMMAND_TIMEOUT = 120.0  # seconds


async def measure(desktop: Desktop, client: AtspiClient, work: Path, runs: int) -> dict[str, Any]:
    sizes: dict[str, Any] = {}
    for factor in FACTORS:
        rows = BASE_ROWS * factor
        title = f"Roundhouse table of {rows} rows"
        page = bench_setup.table_page(work / f"table-{rows}.html", title, rows)
        argv = bench_setup.chromium_argv(page, work / f"chromium-table-{rows}")
        ready = bench_setup.has_control("link", "open 1")
        async with bench_setup.opened(desktop, client, argv, ready, title=title) as opened:
            sizes[f"{factor}x"] = await _size(client, opened.window, rows, runs)
            sizes[f"{factor}x"]["command_ms_median"] = await _command(desktop, title, runs)
    first, last = sizes[f"{FACTORS[0]}x"], sizes[f"{FACTORS[-1]}x"]
    return {
        "sizes": sizes,
        "ratio": round(last["controls_ms_median"] / first["controls_ms_median"], 2),
        "goal_ratio": GOAL_RATIO,
        "command_growth_ms": round(last["command_ms_median"] - first["command_ms_median"], 1),
        "goal_command_growth_ms": GOAL_COMMAND_GROWTH,
    }


async def _command(desktop: Desktop, title: str, runs: int) -> float:
    """`roundhouse tree --controls` on the page's window, as a whole command (a new process:
    its imports, connections and first read), the median of `runs`."""
    command = [sys.executable, "-m", "roundhouse", "tree", "--controls", "--desktop", "current"]
    took = []
    for _ in range(runs):
        started = time.perf_counter()
        done = await asyncio.to_thread(
            subprocess.run,
            [*command, "--window", title],
            env=desktop.env,
            capture_output=True,
            timeout=COMMAND_TIMEOUT,
            check=False,
        )
        took.append((time.perf_counter() - started) * 1000)
        if done.returncode != 0:
            raise RuntimeError(f"roundhouse tree failed: {done.stderr.decode()[-500:]}")
    return round(statistics.median(took), 1)


async def _size(client: AtspiClient, window: WindowInfo, rows: int, runs: int) -> dict[str, Any]:
    times, calls, warm = [], [], []
    served = client.kept.served
    listed: ControlList | None = None
    for run in range(runs + 1):  # run 0 warms up
        before, start = client.bus.calls, time.perf_counter()
        listed = await client.controls(window, fresh=True)
        elapsed = (time.perf_counter() - start) * 1000
        start = time.perf_counter()
        await client.controls(window)  # nothing changed: kept (atspi_kept)
        warm_ms = (time.perf_counter() - start) * 1000
        if run:
            times.append(elapsed)
            calls.append(client.bus.calls - before)
            warm.append(warm_ms)
    assert listed is not None
    snapshot = await client.ui_tree(window)
    return {
        "table_rows": rows,
        "controls": len(listed.controls),
        "controls_ms_median": round(statistics.median(times), 1),
        "controls_warm_ms_median": round(statistics.median(warm), 1),
        "warm_served": client.kept.served - served,
        "calls_per_read": statistics.median(calls),
        "tree_nodes": snapshot.node_count,
        "tree_truncated": snapshot.truncated,
    }
