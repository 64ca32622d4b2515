"""The watch page's frame rate, latency and CPU per session kind (issue 47; docs/bench.md).

    .venv/bin/python benchmarks/bench_watch.py --session x11 --session sway [--seconds 10]

For each kind: a fresh virtual desktop; `roundhouse watch current` on it (a process of its
own, as a person starts it) and the page in headless Chromium (Debian's, Selenium):
- grab / JPEG: the backend's screen grab and the JPEG encoding of 1280x800, in-process, median;
- idle CPU: the watch process's CPU while the page is open on a still desktop;
- fps: frames the page received per second while a window redraws at 60 Hz
  (benchmarks/watch_app.py animate), and the watch process's CPU meanwhile;
- latency: from a key sent to a still window that turns black/white at each key
  (watch_app.py flip) to the page's receiving the changed frame (Date.now() against
  time.time(): one clock), median and 90th percentile over --flips keys.
Run with the venv's Python (Selenium is a dev dependency); apps with the system Python.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

from roundhouse.config import DesktopSettings
from roundhouse.devices.linux.desktops.desktop import Desktop
from roundhouse.devices.linux.desktops.virtual import VirtualDesktop
from roundhouse.devices.linux.display.backends import open_display
from roundhouse.watch.frames import encode_jpeg

APP = Path(__file__).with_name("watch_app.py")
CHROMIUM_FLAGS = (
    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
    "--no-first-run", "--disable-background-networking", "--disable-component-update",
    "--disable-sync", "--window-size=1400,1000",
)  # fmt: skip
TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime + stime


def page_frames(driver: webdriver.Chrome) -> tuple[int, int]:
    got = driver.execute_script(
        "const i = document.getElementById('screen');"
        "return [Number(i.dataset.frames || 0), Number(i.dataset.at || 0)];"
    )
    return int(got[0]), int(got[1])


def start_app(desk: Desktop, mode: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        desk.app_command(["/usr/bin/python3", str(APP), mode]),
        env=desk.env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def stop(process: subprocess.Popen[Any]) -> None:
    process.terminate()
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


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
        options = webdriver.ChromeOptions()
        options.binary_location = "/usr/bin/chromium"
        profile = tempfile.TemporaryDirectory(prefix="rh-bench-chromium-")
        for flag in (*CHROMIUM_FLAGS, f"--user-data-dir={profile.name}"):
            options.add_argument(flag)
        driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
        app: subprocess.Popen[bytes] | None = None
        try:
            driver.get(watch_url(watch))
            time.sleep(2)
            began_cpu, began = cpu_seconds(watch.pid), time.monotonic()
            time.sleep(5)
            row["idle_cpu_%"] = round(
                100 * (cpu_seconds(watch.pid) - began_cpu) / (time.monotonic() - began), 1
            )
            app = start_app(desk, "animate")
            time.sleep(4)
            frames0, _ = page_frames(driver)
            began_cpu, began = cpu_seconds(watch.pid), time.monotonic()
            time.sleep(seconds)
            frames1, _ = page_frames(driver)
            spent = time.monotonic() - began
            row["fps"] = round((frames1 - frames0) / spent, 1)
            row["busy_cpu_%"] = round(100 * (cpu_seconds(watch.pid) - began_cpu) / spent, 1)
            stop(app)
            app = start_app(desk, "flip")
            time.sleep(4)
            latencies = []
            with open_display(desk) as display:
                display.input.click(640, 400)  # the flip window has the keyboard
                display.input.press_keys("space")  # and is as it was after two flips
                for _ in range(flips):
                    time.sleep(0.6)  # the screen still again
                    before, _ = page_frames(driver)
                    sent = time.time() * 1000
                    display.input.press_keys("space")
                    deadline = time.monotonic() + 5
                    while time.monotonic() < deadline:
                        now, at = page_frames(driver)
                        if now > before:
                            latencies.append(at - sent)
                            break
                        time.sleep(0.005)
            latencies.sort()
            row["latency_ms_median"] = round(statistics.median(latencies)) if latencies else None
            row["latency_ms_p90"] = (
                round(latencies[int(0.9 * (len(latencies) - 1))]) if latencies else None
            )
            row["latency_n"] = len(latencies)
        finally:
            if app is not None:
                stop(app)
            driver.quit()
            profile.cleanup()
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
