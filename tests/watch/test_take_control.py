"""Taking control from the watch page, in headless Chromium, during a real GUI round (the
offline planner on gedit), on X11 and sway: the steps appear as they happen; a click in the
page pauses the run before its next action, and nothing is typed meanwhile; "hand back"
lets it run to FINISH; "stop" leaves a cancelled round that `roundhouse resume` finishes."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

from roundhouse.config import Settings
from roundhouse.core.commands import Command, Result
from roundhouse.core.person import StoppedByPerson
from roundhouse.core.user import NonInteractiveUser
from roundhouse.devices.base import Dispatcher, LocalDispatcher
from roundhouse.devices.describing import ToolSpec
from roundhouse.devices.linux.desktops.desktop import Desktop
from roundhouse.devices.linux.tools import DesktopTools, desktop_registry, person_tools
from roundhouse.devices.shell import ShellTools
from roundhouse.engine.compose import compose_session
from roundhouse.engine.session import Session
from roundhouse.logs.report.render import write_report
from roundhouse.watch.gate import new_token
from roundhouse.watch.run import WatchedRun, page_served, watched_desktop
from roundhouse.watch.server import Watched

HELD_FOR = 60.0  # seconds the test's run waits for the page's click at most


class HeldAfterLaunch:
    """The device, holding the action after gedit's launch until the person's click from
    the page has been sent: the run is then sure to meet the person before its next action
    (a run on the offline planner would otherwise be done before a browser can click)."""

    def __init__(self, device: Dispatcher, sent: Callable[[], bool]) -> None:
        self.device = device
        self.sent = sent
        self.launched = False

    async def tool_specs(self) -> list[ToolSpec]:
        return await self.device.tool_specs()

    async def execute(self, commands: Sequence[Command]) -> list[Result]:
        if self.launched:
            deadline = time.monotonic() + HELD_FOR
            while not self.sent() and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
        results = await self.device.execute(commands)
        self.launched |= any(c.tool_name == "launch_application" for c in commands)
        return results


@dataclass
class Watch:
    session: Session
    control: WatchedRun
    watched: Watched
    tools: DesktopTools


@asynccontextmanager
async def watched_session(desk: Desktop, tmp_path: Path, task: str) -> AsyncIterator[Watch]:
    config = Settings.model_validate(
        {
            "logs": tmp_path / "logs",
            "workdir": tmp_path,
            "task": task,
            "agent": "host",
            "desktop": {"session": desk.kind},
        }
    )
    async with await DesktopTools.open(desk, config) as tools:
        extra = [*person_tools(tools), *ShellTools(config).tools()]
        with watched_desktop(desk, fps=15) as watched:
            person = watched.person
            assert person is not None
            held = HeldAfterLaunch(
                LocalDispatcher(desktop_registry(tools, extra=extra)), lambda: person.sent > 0
            )
            try:
                async with (
                    page_served(watched, new_token()) as control,
                    compose_session(
                        config,
                        user=NonInteractiveUser(assume_yes=True),
                        observers=[watched.feed],
                        dispatcher=held,
                        hand_back=control.hand_back,
                    ) as session,
                ):
                    watched.feed.log_folder = session.store.folder
                    yield Watch(session, control, watched, tools)
            finally:
                tools.launcher.kill_launched()


def until(check: Callable[[], Any], timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")


def until_page_says(browser: WebDriver, wanted: str, timeout: float) -> None:
    """Wait until the page's status line starts with `wanted`; else fail saying what it
    said instead, and how many step cards it showed (once, on sway, a finished round's page
    never said "finished", and the failure told nothing more)."""
    try:
        until(lambda: status(browser).startswith(wanted), timeout, f"the page to say {wanted}")
    except AssertionError as error:
        said = f"it says {status(browser)!r}, with {len(step_cards(browser))} step cards"
        raise AssertionError(f"{error}: {said}") from None


def step_cards(browser: WebDriver) -> list[str]:
    cards: list[str] = browser.execute_script(
        "return Array.from(document.querySelectorAll('#steps .step'))"
        ".map(card => card.textContent);"
    )
    return cards


def card_images(browser: WebDriver) -> list[dict[str, Any]]:
    images: list[dict[str, Any]] = browser.execute_script(
        "return Array.from(document.querySelectorAll('#steps .step .gallery img'))"
        ".map(i => ({src: i.getAttribute('src'), loaded: i.complete && i.naturalWidth > 0}));"
    )
    return images


def status(browser: WebDriver) -> str:
    return str(browser.find_element(By.ID, "status").text)


def click_in_page(browser: WebDriver, desk: Desktop, x: int, y: int) -> None:
    """The person clicks the desktop's point (x, y) where the page shows it."""
    screen = browser.find_element(By.ID, "screen")
    width, height = screen.size["width"], screen.size["height"]
    dx = round((x / desk.width - 0.5) * width)
    dy = round((y / desk.height - 0.5) * height)
    ActionChains(browser).move_to_element_with_offset(screen, dx, dy).click().perform()


async def gedit_text(tools: DesktopTools) -> str:
    gedit = next(w for w in await tools.list_windows() if "gedit" in w["title"])
    listed = await tools.get_controls(gedit["xid"])
    texts = [c["text"] or "" for c in listed["controls"] if c["role"] == "text"]
    return texts[0] if texts else "<no document>"


async def take_control(browser: WebDriver, desk: Desktop, watch: Watch) -> int:
    """Open the page, wait for gedit's launch among its steps, click gedit's window there,
    and wait until the page says the run is paused; the step cards shown by then."""
    await asyncio.to_thread(browser.get, watch.control.url)

    def launched() -> bool:
        return any("launch_application" in card for card in step_cards(browser))

    await asyncio.to_thread(until, launched, 60, "the launch step on the page")
    gedit = next(w for w in await watch.tools.list_windows() if "gedit" in w["title"])
    rect = gedit["rect"]
    x, y = (rect["left"] + rect["right"]) // 2, (rect["top"] + rect["bottom"]) // 2
    await asyncio.to_thread(click_in_page, browser, desk, x, y)
    await asyncio.to_thread(until_page_says, browser, "paused", 30)
    return len(step_cards(browser))


@pytest.fixture(autouse=True)
def _no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """The run's hand-back listens to the page and `roundhouse resume`, not a terminal."""
    monkeypatch.setattr(sys.stdin, "isatty", lambda: False)


async def test_a_click_in_the_page_pauses_the_run_until_it_is_handed_back(
    desk: Desktop, browser: WebDriver, tmp_path: Path
) -> None:
    target = tmp_path / "note.txt"
    request = f"open gedit, type Hello from roundhouse and save it as {target}"
    async with watched_session(desk, tmp_path, "watch-hand-back") as watch:
        running = asyncio.ensure_future(watch.control.run(watch.session.run_round(request)))
        shown = await take_control(browser, desk, watch)
        assert watch.control.hand_back.waiting  # paused before its next action
        await asyncio.sleep(1.0)  # the run waits; nothing goes to gedit meanwhile
        assert await gedit_text(watch.tools) == ""
        assert not running.done()
        await asyncio.to_thread(browser.find_element(By.ID, "hand-back").click)
        outcome = await asyncio.wait_for(running, 120)
        await asyncio.to_thread(until_page_says, browser, "finished", 30)
        final = step_cards(browser)
        images = await asyncio.to_thread(card_images, browser)
    assert outcome.finished, (outcome.error, outcome.result)
    assert target.read_text().strip() == "Hello from roundhouse"
    # The steps came as they happened: fewer at the pause than at the end, every one shown.
    assert 1 <= shown < len(final) == len(outcome.steps)
    # They are report.html's cards, their screenshots loaded through the page.
    pictured = [s for s in outcome.steps if s.screenshots]
    assert len(images) >= len(pictured) >= 3
    assert all(image["loaded"] and "t=" in image["src"] for image in images), images
    (pause,) = outcome.pauses
    assert pause.tool == "type_text" and pause.how == "the watch page"
    report = write_report(watch.session.store.folder).read_text()
    assert "the person took over" in report and "handed back (the watch page)" in report


async def test_stop_leaves_a_cancelled_round_that_resume_finishes(
    desk: Desktop, browser: WebDriver, tmp_path: Path
) -> None:
    target = tmp_path / "stopped.txt"
    request = f"open gedit, type Hello from roundhouse and save it as {target}"
    async with watched_session(desk, tmp_path, "watch-stop") as watch:
        running = asyncio.ensure_future(watch.control.run(watch.session.run_round(request)))
        await take_control(browser, desk, watch)
        await asyncio.to_thread(browser.find_element(By.ID, "stop").click)
        with pytest.raises(StoppedByPerson):
            await asyncio.wait_for(running, 60)
        await asyncio.to_thread(until_page_says, browser, "cancelled", 30)
        folder = watch.session.store.folder
    assert not target.exists()
    rounds = [json.loads(line) for line in (folder / "rounds.jsonl").read_text().splitlines()]
    assert rounds[-1]["cancelled"] is True and rounds[-1]["pauses"][0]["handed_back"] is None
    # `roundhouse resume` runs the round again on the same desktop, to FINISH.
    resumed = subprocess.run(
        [sys.executable, "-m", "roundhouse", "resume", str(folder), "--desktop", "current"],
        env={**os.environ, **desk.env},
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert target.read_text().strip() == "Hello from roundhouse"
    session = json.loads((folder / "session.json").read_text())
    assert [r["cancelled"] for r in session["rounds"]] == [True, False]
    assert session["rounds"][-1]["state"] == "FINISH"
