"""Every run as a video: report.html embeds a WebM made from the step screenshots, each
shown for its step's time, with a marker per step; ffprobe reads a duration close to the
run's, and headless Chromium plays it."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

from roundhouse.core.states import AgentKind, RoundState, Status
from roundhouse.core.trajectory import StepRecord
from roundhouse.logs.report import write_report
from roundhouse.logs.video import RECORDED_NAME, VIDEO_NAME, concat_list, plan_video
from tests.gui.conftest import GuiSession
from tests.gui.conftest import desktop as desktop  # noqa: F401  (the GUI fixtures, reused)
from tests.gui.conftest import gui_session as gui_session  # noqa: F401


def step(number: int, started: float | None, model_ms: float = 500.0) -> StepRecord:
    return StepRecord(
        session_step=number,
        round_id=0,
        round_step=number,
        agent=AgentKind.HOST,
        agent_name="host",
        status=Status.CONTINUE,
        started=started,
        model_ms=model_ms,
        action_ms=300.0,
        screenshots=[f"action_step{number}.png", f"action_step{number}_annotated.png"],
    )


def test_each_picture_shows_until_the_next_step_began() -> None:
    steps = [step(1, 100.0), step(2, 102.5), step(3, 106.0, model_ms=2000.0), step(4, None)]
    files = frozenset(f"action_step{n}{end}.png" for n in (1, 2, 3) for end in ("", "_annotated"))
    plan = plan_video(steps, files)
    assert [(s.name, s.seconds) for s in plan.shots] == [
        ("action_step1.png", 2.5),
        ("action_step2.png", 3.5),
        ("action_step3.png", 2.3),  # the last: its own model and action time
    ]
    assert [(m.seconds, m.step) for m in plan.markers] == [(0.0, 1), (2.5, 2), (6.0, 3)]
    assert plan.seconds == 8.3
    listed = concat_list(plan).splitlines()
    assert listed[0] == "ffconcat version 1.0" and listed[-1] == "file 'action_step3.png'"


def ffprobe_seconds(path: Path) -> float:
    probed = subprocess.run(
        ["ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "json", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return float(json.loads(probed.stdout)["format"]["duration"])


async def test_the_report_embeds_a_video_as_long_as_the_run(
    gui_session: GuiSession, tmp_path: Path, browser: WebDriver
) -> None:
    target = tmp_path / "out" / "hello.txt"
    async with gui_session(model="offline") as session:
        began = time.monotonic()
        outcome = await session.run_round(f"open gedit, type Hello and save it as {target}")
        ran = time.monotonic() - began
    assert outcome.state is RoundState.FINISH, outcome.result
    folder = session.store.folder
    report = write_report(folder)
    video = folder / VIDEO_NAME
    assert video.is_file()
    seconds = ffprobe_seconds(video)
    # From the first step's start to the last one's end: the run less its start and its
    # last snapshot.
    assert ran * 0.6 < seconds <= ran + 1.0, (seconds, ran)
    browser.get(report.as_uri())
    player = browser.find_element(By.CSS_SELECTOR, "#video video")
    assert player.get_attribute("src").endswith(VIDEO_NAME)
    markers = browser.find_elements(By.CSS_SELECTOR, "#video .marker")
    pictured = [s for s in outcome.steps if s.screenshots]
    assert len(markers) == len(pictured) >= 3
    # Chromium reads it: its duration, and a seek to the last marker lands there.
    played = browser.execute_async_script(
        """
        const done = arguments[arguments.length - 1];
        const video = document.querySelector('#video video');
        const last = document.querySelectorAll('#video .marker');
        const ready = () => { last[last.length - 1].click(); video.pause();
          setTimeout(() => done({duration: video.duration, at: video.currentTime,
                                 error: video.error && video.error.code}), 300); };
        if (video.readyState >= 1) ready(); else video.addEventListener('loadedmetadata', ready);
        setTimeout(() => done({duration: null, error: 'no metadata in 20 s'}), 20000);
        """
    )
    assert played["error"] is None, played
    assert abs(played["duration"] - seconds) < 0.5, played
    last = float(markers[-1].get_attribute("data-t"))
    assert abs(played["at"] - last) < 1.0, (played, last)


def ffprobe_frames(path: Path) -> int:
    probed = subprocess.run(
        ["ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0"]
        + ["-show_entries", "stream=nb_read_frames", "-of", "csv=p=0", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return int(probed.stdout.strip())


def test_record_video_records_the_screen_at_ten_frames_a_second(tmp_path: Path) -> None:
    """`run --watch --record-video` on a virtual desktop: the page is served, screen.webm
    lasts as the run did, at 10 frames a second, and the report embeds it with the steps'
    markers."""
    target = tmp_path / "recorded.txt"
    began = time.monotonic()
    run = subprocess.run(
        [sys.executable, "-m", "roundhouse", "run", f"open gedit, type Hi and save it as {target}"]
        + ["--desktop", "virtual", "--watch", "--record-video", "--logs", str(tmp_path / "logs")]
        + ["--task", "recorded", "--yes"],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=tmp_path,
    )
    ran = time.monotonic() - began
    assert run.returncode == 0, run.stderr[-3000:]
    assert "roundhouse: watch the run at http://127.0.0.1:" in run.stderr  # and it was served
    folder = tmp_path / "logs" / "recorded"
    recorded = folder / RECORDED_NAME
    seconds, frames = ffprobe_seconds(recorded), ffprobe_frames(recorded)
    assert 1.0 < seconds < ran, (seconds, ran)
    assert abs(frames / seconds - 10) < 1, (frames, seconds)
    report = write_report(folder).read_text()
    assert f'src="{RECORDED_NAME}"' in report and "recorded during the run" in report
    assert report.count('class="marker"') >= 3
