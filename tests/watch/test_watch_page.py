"""`roundhouse watch` in headless Chromium: the page loads only with its token, shows the
desktop, and its frames change when a window opens (X11 and sway)."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

from roundhouse.devices.linux.desktops.desktop import Desktop
from tests.desktop.conftest import gedit_argv, kill_session
from tests.watch.conftest import Watching

# What the page shows of its picture: the frames it was sent, the image's size, and a
# coarse signature of its pixels (the picture drawn 32x20 on a canvas), to compare.
PICTURE = """
const img = document.getElementById('screen');
if (!img || !img.complete || !img.naturalWidth) return null;
const canvas = document.createElement('canvas'); canvas.width = 32; canvas.height = 20;
const context = canvas.getContext('2d'); context.drawImage(img, 0, 0, 32, 20);
const data = context.getImageData(0, 0, 32, 20).data;
const cells = [];
for (let i = 0; i < data.length; i += 4) cells.push(data[i] + data[i + 1] + data[i + 2]);
return {frames: Number(img.dataset.frames), width: img.naturalWidth,
        height: img.naturalHeight, cells: cells};
"""


def picture(browser: WebDriver) -> dict[str, Any] | None:
    found: dict[str, Any] | None = browser.execute_script(PICTURE)
    return found


def until(check: Callable[[], Any], timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")


def without_token(url: str, token: str | None = None) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(query=f"t={token}" if token else ""))


@pytest.fixture
def gedit(desk: Desktop) -> Iterator[Callable[[], subprocess.Popen[bytes]]]:
    started: list[subprocess.Popen[bytes]] = []

    def start() -> subprocess.Popen[bytes]:
        process = subprocess.Popen(
            desk.app_command(gedit_argv()),
            env=desk.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        started.append(process)
        return process

    yield start
    for process in started:
        kill_session(process)


def test_the_page_loads_only_with_its_token(
    browser: WebDriver, watching: Watching, desk: Desktop
) -> None:
    for refused in (without_token(watching.url), without_token(watching.url, "not-the-token")):
        browser.get(refused)
        assert "this page needs its token" in browser.find_element(By.TAG_NAME, "body").text
        assert not browser.find_elements(By.ID, "screen")
    browser.get(watching.url)
    shown = until(lambda: picture(browser), 20, "the desktop's first frame")
    assert (shown["width"], shown["height"]) == (desk.width, desk.height)
    # The page's own WebSocket opens with the token, and not without it.
    opened = browser.execute_async_script(
        """
        const done = arguments[arguments.length - 1];
        const socket = new WebSocket(`ws://${location.host}/frames` + arguments[0]);
        socket.onmessage = () => { socket.close(); done('frame'); };
        socket.onclose = () => done('closed');
        """,
        "",
    )
    assert opened == "closed"
    token = urlsplit(watching.url).query
    opened = browser.execute_async_script(
        """
        const done = arguments[arguments.length - 1];
        const socket = new WebSocket(`ws://${location.host}/frames?` + arguments[0]);
        socket.onmessage = () => { socket.close(); done('frame'); };
        socket.onclose = () => done('closed');
        """,
        token,
    )
    assert opened == "frame"


def test_frames_change_when_a_window_opens(
    browser: WebDriver,
    watching: Watching,
    gedit: Callable[[], subprocess.Popen[bytes]],
) -> None:
    browser.get(watching.url)
    before = until(lambda: picture(browser), 20, "the desktop's first frame")
    gedit()

    def changed() -> dict[str, Any] | None:
        now = picture(browser)
        if now is None or now["frames"] <= before["frames"]:
            return None
        moved = sum(abs(a - b) for a, b in zip(now["cells"], before["cells"], strict=True))
        return now if moved > 32 * 20 * 30 else None  # a window, not a cursor's blink

    after = until(changed, 30, "a frame with gedit's window on it")
    assert after["frames"] > before["frames"]
