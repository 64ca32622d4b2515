"""What a change bought, measured against the code before it in the same run: two source
trees, this one and another (`--before SRC`: a tree's `src` folder, e.g. main's made with
`git archive main src | tar -x -C /tmp/before`), run side by side on one fresh virtual
desktop, turn by turn, so that a shared machine's load falls on both alike.

    python benchmarks/before_after.py serve --before /tmp/before/src [--runs 15]
    python benchmarks/before_after.py cold --before /tmp/before/src [--runs 5]

serve: `roundhouse serve --http` from each tree on gedit's and on Calc's window (a 50 × 20
sheet, 584 controls): get_controls and capture_window_screenshot through our MCP client,
against the same tools called in this process; medians and 90th percentiles, ms.

cold: `roundhouse tree --controls` from each tree, a whole command (a new process: its
imports, connections and first read), on Chromium's table of 50 and of 2,500 rows; and the
same command's first contact, on a Chromium started for it that no reader has touched.

Not a test: it asserts nothing about time; it prints the figures for docs/bench.md.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from roundhouse.bench import setup as bench_setup
from roundhouse.config import DesktopSettings, Settings
from roundhouse.core.commands import Command
from roundhouse.devices.linux.atspi.client import AtspiClient
from roundhouse.devices.linux.desktops.desktop import Desktop
from roundhouse.devices.linux.desktops.virtual import VirtualDesktop
from roundhouse.devices.linux.display.backends import list_windows
from roundhouse.devices.linux.tools import DesktopTools, desktop_registry
from roundhouse.devices.mcp.client import MCPDispatcher

ROUNDHOUSE = [sys.executable, "-m", "roundhouse"]
TIMEOUT = 120.0


def environment(desktop: Desktop, source: Path | None) -> dict[str, str]:
    """The desktop's environment, running the tree at `source` (None: this one)."""
    env = dict(desktop.env)
    if source is not None:
        env["PYTHONPATH"] = str(source)  # ahead of this tree's editable install
    return env


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def serve_http(desktop: Desktop, source: Path | None) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    process = subprocess.Popen(
        [*ROUNDHOUSE, "serve", "--http", f"127.0.0.1:{port}", "--desktop", "current"],
        env=environment(desktop, source),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return process, f"http://127.0.0.1:{port}/mcp"
        time.sleep(0.1)
    process.kill()
    raise RuntimeError("roundhouse serve did not listen within 60 s")


def figures(values: list[float]) -> str:
    ordered = sorted(values)
    return f"{statistics.median(ordered):7.1f} (p90 {ordered[int(len(ordered) * 0.9)]:6.1f})"


async def timed(call: Callable[[], Awaitable[Any]]) -> float:
    started = time.perf_counter()
    await call()
    return (time.perf_counter() - started) * 1000


async def serve(before: Path, runs: int) -> None:
    with tempfile.TemporaryDirectory() as folder, VirtualDesktop(DesktopSettings()) as desktop:
        work = Path(folder)
        sheet = bench_setup.sheet(work / "sheet.fods", rows=50, columns=20)
        windows = [
            ("gedit", ["gedit", "--standalone"], {}, bench_setup.has_control("text"), None),
            (
                "calc-1000",
                bench_setup.office_argv("calc", sheet, work / "profile"),
                bench_setup.OFFICE_ENV,
                bench_setup.has_control("table cell"),
                sheet.name,
            ),
        ]
        async with AtspiClient() as client:
            await client.connect(desktop)
            for name, argv, env, ready, title in windows:
                async with bench_setup.opened(
                    desktop, client, argv, ready, title=title, env=env
                ) as opened:
                    await serve_window(desktop, name, opened.window.xid, before, runs)


async def serve_window(desktop: Desktop, name: str, xid: int, before: Path, runs: int) -> None:
    servers = {"before": serve_http(desktop, before), "after": serve_http(desktop, None)}
    try:
        async with (
            await DesktopTools.open(desktop, Settings()) as tools,
            MCPDispatcher.http(servers["before"][1], timeout=TIMEOUT) as old,
            MCPDispatcher.http(servers["after"][1], timeout=TIMEOUT) as new,
        ):
            registry = desktop_registry(tools)
            calls = {
                "controls": Command(tool_name="get_controls", parameters={"window_id": xid}),
                "screenshot": Command(
                    tool_name="capture_window_screenshot", parameters={"window_id": xid}
                ),
            }
            ways: dict[str, Callable[[Command], Awaitable[Any]]] = {
                "in process (after)": lambda command: registry.call(command, TIMEOUT),
                "MCP, before": lambda command: old.execute([command]),
                "MCP, after": lambda command: new.execute([command]),
            }
            taken: dict[tuple[str, str], list[float]] = {}
            for turn in range(runs + 1):  # the first turn warms up, and is dropped
                for what, command in calls.items():
                    for way, call in ways.items():
                        ms = await timed(lambda c=call, m=command: c(m))  # type: ignore[misc]
                        if turn:
                            taken.setdefault((what, way), []).append(ms)
            for (what, way), values in taken.items():
                print(f"{name:10} {what:10} {way:20} {figures(values)}")
    finally:
        for process, _url in servers.values():
            process.send_signal(signal.SIGTERM)
            process.wait(30)


async def cold(before: Path, runs: int) -> None:
    trees = {"before": before, "after": None}
    with tempfile.TemporaryDirectory() as folder, VirtualDesktop(DesktopSettings()) as desktop:
        work = Path(folder)
        async with AtspiClient() as client:
            await client.connect(desktop)
            for rows in (50, 2500):
                title = f"Roundhouse table of {rows} rows"
                page = bench_setup.table_page(work / f"table-{rows}.html", title, rows)
                argv = bench_setup.chromium_argv(page, work / f"chromium-{rows}")
                ready = bench_setup.has_control("link", "open 1")
                async with bench_setup.opened(desktop, client, argv, ready, title=title) as opened:
                    await bench_setup.held_still(client, opened.window)
                    taken: dict[str, list[float]] = {}
                    for _ in range(runs):
                        for which, source in trees.items():
                            ms = await command(desktop, source, title)
                            taken.setdefault(which, []).append(ms)
                    for which, values in taken.items():
                        print(f"{rows:5} rows, a new process, {which:6} {figures(values)}")
            for rows in (50, 2500):
                for turn in range(runs):
                    for which, source in trees.items():
                        ms = await first_contact(desktop, work, rows, source, f"{which}-{turn}")
                        print(f"{rows:5} rows, first contact, {which:6} {ms:7.1f}")


async def command(desktop: Desktop, source: Path | None, title: str) -> float:
    argv = [*ROUNDHOUSE, "tree", "--controls", "--desktop", "current", "--window", title]
    started = time.perf_counter()
    done = await asyncio.to_thread(
        subprocess.run,
        argv,
        env=environment(desktop, source),
        capture_output=True,
        timeout=TIMEOUT,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(done.stderr.decode()[-500:])
    return (time.perf_counter() - started) * 1000


async def first_contact(
    desktop: Desktop, work: Path, rows: int, source: Path | None, name: str
) -> float:
    """The command on a Chromium that no reader has touched: its window shown, its page
    given a few seconds to load."""
    title = f"Roundhouse table of {rows} rows"
    page = bench_setup.table_page(work / f"table-{rows}.html", title, rows)
    argv = bench_setup.chromium_argv(page, work / f"chromium-{name}")
    process = subprocess.Popen(
        desktop.app_command(argv),
        env=desktop.env,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while not any(title in w.title for w in list_windows(desktop)):
            if time.monotonic() > deadline:
                raise RuntimeError(f"no window {title!r}")
            await asyncio.sleep(0.1)
        await asyncio.sleep(5)
        return await command(desktop, source, title)
    finally:
        bench_setup.end_session(process)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=("serve", "cold"))
    parser.add_argument("--before", type=Path, required=True, help="the other tree's src folder")
    parser.add_argument("--runs", type=int, default=15)
    options = parser.parse_args()
    if not (options.before / "roundhouse").is_dir():
        parser.error(f"{options.before} holds no roundhouse package")
    if options.what == "serve":
        asyncio.run(serve(options.before.resolve(), options.runs))
    else:
        asyncio.run(cold(options.before.resolve(), options.runs))


if __name__ == "__main__":
    os.environ.pop("PYTHONPATH", None)  # this process runs this tree
    main()
