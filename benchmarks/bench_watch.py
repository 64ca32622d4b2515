"""The watch page's frame rate, latency and CPU per session kind (issue 47; docs/bench.md).

    .venv/bin/python benchmarks/bench_watch.py --session x11 --session sway [--seconds 10]

For each kind: a fresh virtual desktop; `roundhouse watch current` on it (a process of its
own, as a person starts it) and the page in headless Chromium (Debian's, Selenium):
- grab / JPEG: the backend's screen grab and the JPEG encoding of 1280x800, in-process, median;
- idle CPU, fps and latency as page_measure.py measures them (the same for noVNC in
  bench_vnc.py), the CPU being the watch process's.
Run with the venv's Python (Selenium is a dev dependency); apps with the system Python.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from typing import Any

from page_measure import chromium, cpu_seconds, measure, stop
from selenium import webdriver

from roundhouse.config import DesktopSettings
from roundhouse.devices.linux.desktops.desktop import Desktop
from roundhouse.devices.linux.desktops.virtual import VirtualDesktop
from roundhouse.devices.linux.display.backends import open_display
from roundhouse.watch.frames import encode_jpeg


def page_frames(driver: webdriver.Chrome) -> tuple[int, int]:
    got = driver.execute_script(
        "const i = document.getElementById('screen');"
        "return [Number(i.dataset.frames || 0), Number(i.dataset.at || 0)];"
    )
    return int(got[0]), int(got[1])


def grab_costs(desk: Desktop, runs: int = 30) -> dict[str, float]:
    grabs, encodes, sizes = [], [], []
    with open_display(desk) as display:
        for _ in range(runs):
            began = time.perf_counter()
            image = display.screen.desktop()
            grabbed = time.perf_counter()
            jpeg = encode_jpeg(image)
            grabs.append((grabbed - began) * 1000)
            encodes.append((time.perf_counter() - grabbed) * 1000)
            sizes.append(len(jpeg))
    return {
        "grab_ms": round(statistics.median(grabs), 1),
        "jpeg_ms": round(statistics.median(encodes), 1),
        "jpeg_kB": round(statistics.median(sizes) / 1000, 1),
    }


def watch_url(process: subprocess.Popen[str]) -> str:
    assert process.stdout is not None
    line = process.stdout.readline().strip()
    if not line.startswith("http"):
        raise RuntimeError(f"roundhouse watch printed {line!r}")
    return line


def bench(kind: str, seconds: float, flips: int, fps: float) -> dict[str, Any]:
    row: dict[str, Any] = {"session": kind, "max_fps": fps}
    with VirtualDesktop(DesktopSettings(session=kind)) as desk:
        row.update(grab_costs(desk))
        watch = subprocess.Popen(
            [sys.executable, "-m", "roundhouse", "watch", "current", "--timeout", "900"]
            + ["--fps", f"{fps:g}"],
            env={**os.environ, **desk.env},
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        try:
            with chromium() as driver:
                driver.get(watch_url(watch))
                time.sleep(2)
                row.update(
                    measure(
                        desk,
                        lambda: page_frames(driver),
                        lambda: cpu_seconds(watch.pid),
                        seconds,
                        flips,
                    )
                )
        finally:
            stop(watch)
            if watch.stdout is not None:
                watch.stdout.close()
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--session", action="append", help="x11, sway, gnome, kde (repeatable)")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--flips", type=int, default=15)
    parser.add_argument("--fps", type=float, default=15.0, help="the watch's --fps")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = [
        bench(kind, args.seconds, args.flips, args.fps) for kind in args.session or ["x11", "sway"]
    ]
    if args.json:
        print(json.dumps(rows, indent=1))
        return
    keys = list(rows[0])
    print("| " + " | ".join(keys) + " |")
    print("|" + "---|" * len(keys))
    for row in rows:
        print("| " + " | ".join(str(row.get(k)) for k in keys) + " |")


if __name__ == "__main__":
    main()
