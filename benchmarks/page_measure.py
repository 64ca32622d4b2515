"""What bench_watch.py (the watch page) and bench_vnc.py (noVNC) measure alike of a page in
headless Chromium that shows a virtual desktop: its frame rate, its latency, and the CPU of
what serves it. Each bench brings how its page counts frames and whose CPU counts; the
measuring is here, once, so that the two routes are measured the same way.

- idle CPU: while the page is open on a still desktop;
- fps: frames the page received per second while a window redraws at 60 Hz
  (watch_app.py animate), and the CPU meanwhile;
- latency: from a key sent to a still window that turns black/white at each key
  (watch_app.py flip) to the page's receiving the changed frame (Date.now() against
  time.time(): one clock), median and 90th percentile over `flips` keys.
"""

from __future__ import annotations

import contextlib
import os
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

from roundhouse.devices.linux.desktops.desktop import Desktop
from roundhouse.devices.linux.display.backends import open_display

APP = Path(__file__).with_name("watch_app.py")
CHROMIUM_FLAGS = (
    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
    "--no-first-run", "--disable-background-networking", "--disable-component-update",
    "--disable-sync", "--window-size=1400,1000",
)  # fmt: skip
TICK = os.sysconf("SC_CLK_TCK")

Frames = Callable[[], tuple[int, int]]  # frames the page received, and when the last came (ms)


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime + stime


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


@contextlib.contextmanager
def chromium() -> Iterator[webdriver.Chrome]:
    """Debian's headless Chromium, driven by Selenium, on a profile of its own."""
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    with tempfile.TemporaryDirectory(prefix="rh-bench-chromium-") as profile:
        for flag in (*CHROMIUM_FLAGS, f"--user-data-dir={profile}"):
            options.add_argument(flag)
        driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
        try:
            yield driver
        finally:
            driver.quit()


def measure(
    desk: Desktop, frames: Frames, cpu: Callable[[], float], seconds: float, flips: int
) -> dict[str, Any]:
    """The page's row (the module's docstring), the page open already: `frames` counts
    what it received, `cpu` is the CPU seconds of what serves it."""
    row: dict[str, Any] = {}
    app: subprocess.Popen[bytes] | None = None
    try:
        began_cpu, began = cpu(), time.monotonic()
        time.sleep(5)
        row["idle_cpu_%"] = round(100 * (cpu() - began_cpu) / (time.monotonic() - began), 1)
        app = start_app(desk, "animate")
        time.sleep(4)
        frames0, _ = frames()
        began_cpu, began = cpu(), time.monotonic()
        time.sleep(seconds)
        frames1, _ = frames()
        spent = time.monotonic() - began
        row["fps"] = round((frames1 - frames0) / spent, 1)
        row["busy_cpu_%"] = round(100 * (cpu() - began_cpu) / spent, 1)
        stop(app)
        app = start_app(desk, "flip")
        time.sleep(4)
        latencies = _latencies(desk, frames, flips)
    finally:
        if app is not None:
            stop(app)
    row["latency_ms_median"] = round(statistics.median(latencies)) if latencies else None
    row["latency_ms_p90"] = round(latencies[int(0.9 * (len(latencies) - 1))]) if latencies else None
    row["latency_n"] = len(latencies)
    return row


def _latencies(desk: Desktop, frames: Frames, flips: int) -> list[float]:
    """Each key's time to the page, sorted (a key whose frame never came in 5 s: none)."""
    latencies = []
    with open_display(desk) as display:
        display.input.click(640, 400)  # the flip window has the keyboard
        display.input.press_keys("space")  # and is as it was after two flips
        for _ in range(flips):
            time.sleep(0.6)  # the screen still again
            before, _ = frames()
            sent = time.time() * 1000
            display.input.press_keys("space")
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline:
                now, at = frames()
                if now > before:
                    latencies.append(at - sent)
                    break
                time.sleep(0.005)
    return sorted(latencies)
