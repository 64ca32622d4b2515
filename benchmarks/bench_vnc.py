"""The other route issue 47 names, measured as bench_watch.py measures the watch page
(page_measure.py, the same loop): x11vnc on the X11 desktop, websockify, and noVNC in
headless Chromium (Debian's x11vnc 0.9.16, websockify 0.10, novnc 1.3; not installed by
`make`: apt-get install x11vnc websockify novnc).

    .venv/bin/python benchmarks/bench_vnc.py [--seconds 10] [--flips 15]

The page is noVNC's RFB client with its display's flip() (one per framebuffer update)
counted and timed; the CPU is x11vnc's and websockify's. X11 only: wayvnc (0.5 in Debian
12, wlroots only) was not tried.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from page_measure import chromium, cpu_seconds, measure, stop
from selenium import webdriver

from roundhouse.config import DesktopSettings
from roundhouse.devices.linux.desktops.virtual import VirtualDesktop

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

        def cpu() -> float:
            return cpu_seconds(vnc.pid) + cpu_seconds(proxy.pid)

        try:
            with chromium() as driver:
                driver.get(f"http://127.0.0.1:{web_port}/bench.html")
                time.sleep(3)
                row.update(measure(desk, lambda: frames(driver), cpu, args.seconds, args.flips))
        finally:
            stop(proxy)
            stop(vnc)
            web.cleanup()
    print(row)


if __name__ == "__main__":
    main()
