"""The other route issue 47 names, measured as bench_watch.py measures the watch page: x11vnc
on the X11 desktop, websockify, and noVNC in headless Chromium (Debian's x11vnc 0.9.16,
websockify 0.10, novnc 1.3; not installed by `make`: apt-get install x11vnc websockify novnc).

    .venv/bin/python benchmarks/bench_vnc.py [--seconds 10] [--flips 15]

The page is noVNC's RFB client with its display's flip() (one per framebuffer update)
counted and timed; the CPU is x11vnc's and websockify's. X11 only: wayvnc (0.5 in Debian
12, wlroots only) was not tried.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_watch import CHROMIUM_FLAGS, cpu_seconds, start_app, stop
from selenium import webdriver
from selenium.webdriver.chrome.service import Service

from roundhouse.config import DesktopSettings
from roundhouse.devices.linux.desktops.virtual import VirtualDesktop
from roundhouse.devices.linux.display.backends import open_display

PAGE = """<!DOCTYPE html><html><body><div id="screen"></div>
<script type="module">
import RFB from './core/rfb.js';
window.frames_seen = 0; window.frame_at = 0;
const rfb = new RFB(document.getElementById('screen'), `ws://${location.host}/websockify`);
const display = rfb._display, flip = display.flip.bind(display);
display.flip = (fromQueue) => {
  flip(fromQueue); window.frames_seen++; window.frame_at = Date.now();
};
</script></body></html>"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def frames(driver: webdriver.Chrome) -> tuple[int, int]:
    got = driver.execute_script("return [window.frames_seen || 0, window.frame_at || 0];")
    return int(got[0]), int(got[1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--flips", type=int, default=15)
    args = parser.parse_args()
    row: dict[str, Any] = {"session": "x11 (x11vnc + noVNC)"}
    web = tempfile.TemporaryDirectory(prefix="rh-novnc-")
    for part in ("core", "vendor"):
        os.symlink(f"/usr/share/novnc/{part}", Path(web.name) / part)
    (Path(web.name) / "bench.html").write_text(PAGE)
    with VirtualDesktop(DesktopSettings(session="x11")) as desk:
        vnc_port, web_port = free_port(), free_port()
        vnc = subprocess.Popen(
            ["x11vnc", "-display", desk.display, "-nopw", "-forever", "-shared", "-localhost"]
            + ["-rfbport", str(vnc_port), "-quiet"],
            env=desk.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        proxy = subprocess.Popen(
            ["websockify", "--web", web.name, f"127.0.0.1:{web_port}", f"127.0.0.1:{vnc_port}"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(2)
        options = webdriver.ChromeOptions()
        options.binary_location = "/usr/bin/chromium"
        profile = tempfile.TemporaryDirectory(prefix="rh-bench-chromium-")
        for flag in (*CHROMIUM_FLAGS, f"--user-data-dir={profile.name}"):
            options.add_argument(flag)
        driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
        app = None

        def cpu() -> float:
            return cpu_seconds(vnc.pid) + cpu_seconds(proxy.pid)

        try:
            driver.get(f"http://127.0.0.1:{web_port}/bench.html")
            time.sleep(3)
            began_cpu, began = cpu(), time.monotonic()
            time.sleep(5)
            row["idle_cpu_%"] = round(100 * (cpu() - began_cpu) / (time.monotonic() - began), 1)
            app = start_app(desk, "animate")
            time.sleep(4)
            frames0, _ = frames(driver)
            began_cpu, began = cpu(), time.monotonic()
            time.sleep(args.seconds)
            frames1, _ = frames(driver)
            spent = time.monotonic() - began
            row["fps"] = round((frames1 - frames0) / spent, 1)
            row["busy_cpu_%"] = round(100 * (cpu() - began_cpu) / spent, 1)
            stop(app)
            app = start_app(desk, "flip")
            time.sleep(4)
            latencies = []
            with open_display(desk) as display:
                display.input.click(640, 400)  # the flip window has the keyboard
                display.input.press_keys("space")  # and is as it was after two flips
                for _ in range(args.flips):
                    time.sleep(0.6)
                    before, _ = frames(driver)
                    sent = time.time() * 1000
                    display.input.press_keys("space")
                    deadline = time.monotonic() + 5
                    while time.monotonic() < deadline:
                        now, at = frames(driver)
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
            stop(proxy)
            stop(vnc)
            web.cleanup()
    print(row)


if __name__ == "__main__":
    main()
