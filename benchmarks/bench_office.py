"""How fast LibreOffice Calc's controls are read, and whether reading grows soffice:
`python benchmarks/bench_office.py [--reads 20] [--rss-reads 100]`.

On a fresh virtual desktop, for an empty sheet and a generated 50 × 20 sheet: the median
time of a controls read (what the agent reads every step) over `--reads` reads, round
trips per read, and soffice's VmRSS before and after `--rss-reads` more reads. Not a test:
it asserts nothing, it reports what this machine did in this run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests' helpers

from tests.desktop.conftest import calc_argv, kill_session  # noqa: E402
from tests.desktop.test_office import write_sheet  # noqa: E402

from roundhouse.config import DesktopSettings  # noqa: E402
from roundhouse.devices.contract import ControlList, WindowInfo  # noqa: E402
from roundhouse.devices.linux.atspi.client import AtspiClient  # noqa: E402
from roundhouse.devices.linux.desktops.desktop import Desktop
from roundhouse.devices.linux.desktops.virtual import VirtualDesktop
from roundhouse.devices.linux.display.x11.windows import list_windows  # noqa: E402


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for {pid}")


async def wait_for(client: AtspiClient, desktop: Desktop, title: str, role: str) -> WindowInfo:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        for window in list_windows(desktop.display):
            if title in window.title:
                listed = await client.controls(window)
                if any(control.role == role for control in listed.controls):
                    return window
        await asyncio.sleep(0.2)
    raise TimeoutError(f"no {role} in a window titled {title!r}")


async def measure(
    client: AtspiClient, desktop: Desktop, title: str, role: str, reads: int, rss_reads: int
) -> dict[str, object]:
    window = await wait_for(client, desktop, title, role)
    assert window.pid is not None
    for _ in range(2):
        await client.controls(window)  # warm: the first read builds the cells in view
    times, calls = [], []
    listed: ControlList | None = None
    # CPU time is what a loaded machine does not inflate: ours, and soffice's.
    office_cpu, own_cpu = cpu_seconds(window.pid), time.process_time()
    for _ in range(reads):
        before, started = client.bus.calls, time.monotonic()
        listed = await client.controls(window)
        times.append((time.monotonic() - started) * 1000)
        calls.append(client.bus.calls - before)
    office_cpu = (cpu_seconds(window.pid) - office_cpu) / reads
    own_cpu = (time.process_time() - own_cpu) / reads
    assert listed is not None
    rss_before = rss_mb(window.pid)
    for _ in range(rss_reads):
        await client.controls(window)
    rss_after = rss_mb(window.pid)
    table = next((c for c in listed.controls if c.role == "table"), None)
    return {
        "controls": len(listed.controls),
        "cells": sum(1 for c in listed.controls if c.role == "table cell"),
        "table_text": table.text if table else None,
        "truncated": listed.truncated_reason,
        "median_ms": round(statistics.median(times), 1),
        "min_ms": round(min(times), 1),
        "max_ms": round(max(times), 1),
        "calls_per_read": statistics.median(calls),
        "soffice_cpu_ms_per_read": round(office_cpu * 1000, 1),
        "own_cpu_ms_per_read": round(own_cpu * 1000, 1),
        "rss_reads": rss_reads,
        "rss_before_mb": round(rss_before, 1),
        "rss_after_mb": round(rss_after, 1),
    }


async def bench(desktop: Desktop, reads: int, rss_reads: int) -> dict[str, object]:
    results: dict[str, object] = {}
    with tempfile.TemporaryDirectory(prefix="bench-office-") as folder:
        work = Path(folder)
        sheet = write_sheet(work / "bench.fods")
        cases = [("empty", [], "Untitled", "table"), ("50x20", [sheet], "bench.fods", "table cell")]
        for name, files, title, role in cases:
            process = subprocess.Popen(
                desktop.app_command(calc_argv(work / f"profile-{name}", *files)),
                env=desktop.env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
            try:
                async with AtspiClient() as client:
                    await client.connect(desktop)
                    results[name] = await measure(client, desktop, title, role, reads, rss_reads)
            finally:
                kill_session(process)
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reads", type=int, default=20)
    parser.add_argument("--rss-reads", type=int, default=100)
    options = parser.parse_args()
    with VirtualDesktop(DesktopSettings(width=1280, height=800)) as desktop:
        results = asyncio.run(bench(desktop, options.reads, options.rss_reads))
    print(json.dumps({"load_average": os.getloadavg(), **results}, indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
