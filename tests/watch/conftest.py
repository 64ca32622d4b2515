"""Fixtures for the watch page (issue 47): virtual desktops of X11 and sway, headless
Chromium (Debian's, through Selenium and chromedriver, as the report tests drive it), and
`roundhouse watch` serving a desktop."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.remote.webdriver import WebDriver

from roundhouse.config import DesktopSettings
from roundhouse.devices.linux.desktops.desktop import Desktop
from roundhouse.devices.linux.desktops.virtual import VirtualDesktop
from tests.report.test_report import CHROMEDRIVER, CHROMIUM, CHROMIUM_FLAGS

# The session kinds the page is tested on: X11 and one Wayland compositor.
KINDS = ("x11", "sway")
URL_TIMEOUT = 30.0  # seconds `roundhouse watch` has to print its URL


@pytest.fixture(scope="module", params=KINDS)
def desk(request: pytest.FixtureRequest) -> Iterator[Desktop]:
    with VirtualDesktop(DesktopSettings(session=request.param)) as started:
        yield started


@pytest.fixture(scope="module")
def browser() -> Iterator[WebDriver]:
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    with tempfile.TemporaryDirectory(prefix="rh-chromium-") as profile:
        for flag in (*CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--window-size=1400,1000"):
            options.add_argument(flag)
        driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
        driver.set_page_load_timeout(30)
        try:
            yield driver
        finally:
            driver.quit()


class Watching:
    """`roundhouse watch current` on a desktop, as a person starts it: its URL, and the
    process (ended when the test's module ends)."""

    def __init__(self, desk: Desktop, *args: str) -> None:
        env = {**os.environ, **desk.env}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "roundhouse", "watch", "current", "--timeout", "600", *args],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        line = self._first_line()
        assert line.startswith("http://127.0.0.1:"), (line, self._stderr())
        self.url = line

    def _first_line(self) -> str:
        import selectors

        assert self.process.stdout is not None
        with selectors.DefaultSelector() as selector:
            selector.register(self.process.stdout, selectors.EVENT_READ)
            if not selector.select(URL_TIMEOUT):
                return ""
        return self.process.stdout.readline().strip()

    def _stderr(self) -> str:
        if self.process.poll() is None:
            return ""
        assert self.process.stderr is not None
        return self.process.stderr.read()

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        for pipe in (self.process.stdout, self.process.stderr):
            if pipe is not None:
                pipe.close()


@pytest.fixture(scope="module")
def watching(desk: Desktop) -> Iterator[Watching]:
    started = Watching(desk)
    try:
        yield started
    finally:
        started.stop()
