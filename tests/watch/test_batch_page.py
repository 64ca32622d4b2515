"""`batch --watch`: the page's task table fills in as the batch runs (queued, then passed
or failed with the node), and a GUI task's row links its video, which the page serves."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from selenium.webdriver.remote.webdriver import WebDriver

from roundhouse.suite.report import write_batch_report

SUITE = Path(__file__).parents[2] / "tasks" / "basic"
TASKS = ("shell-hostname", "gedit-type-save")

ROWS = """
return Array.from(document.querySelectorAll('#tasks tbody tr')).map(row => ({
  task: row.dataset.task, state: row.dataset.state, node: row.cells[2].textContent,
  video: row.querySelector('a.video') ? row.querySelector('a.video').href : null}));
"""


def test_the_task_table_fills_in_as_the_batch_runs(browser: WebDriver, tmp_path: Path) -> None:
    out = tmp_path / "out"
    batch = subprocess.Popen(
        [sys.executable, "-m", "roundhouse", "batch", str(SUITE), "--model", "replay"]
        + [arg for task in TASKS for arg in ("--task", task)]
        + ["--out", str(out), "--workers", "1", "--watch", "--linger", "120"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )
    try:
        assert batch.stderr is not None
        url = ""
        while not url:
            line = batch.stderr.readline()
            assert line, "the batch ended before it printed its page's URL"
            if "watch the batch at " in line:
                url = line.split("watch the batch at ", 1)[1].strip()
        browser.get(url)
        seen: list[list[dict[str, Any]]] = []
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            rows: list[dict[str, Any]] = browser.execute_script(ROWS)
            if not seen or rows != seen[-1]:
                seen.append(rows)
            if (
                rows
                and all(r["state"] in ("passed", "failed") for r in rows)
                and any(r["video"] for r in rows)
            ):
                break
            time.sleep(0.2)
        else:
            raise AssertionError(f"the table never filled in: {seen[-1:]}")
        # The GUI task's video: linked from its row, served by the page (with its token).
        video = next(r["video"] for r in seen[-1] if r["task"] == "gedit-type-save")
        assert video and "t=" in video
        loaded = browser.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            "fetch(arguments[0]).then(r => r.arrayBuffer()"
            ".then(b => done([r.status, b.byteLength])));",
            video,
        )
    finally:
        batch.terminate()
        batch.wait(30)
        if batch.stderr is not None:
            batch.stderr.close()
    assert loaded[0] == 200 and loaded[1] > 1000
    first, last = next(rows for rows in seen if rows), seen[-1]
    assert sorted(r["task"] for r in first) == sorted(TASKS)
    assert any(r["state"] in ("queued", "running") for r in first)
    assert {r["task"]: r["state"] for r in last} == {t: "passed" for t in TASKS}
    assert all(r["node"] for r in last)
    # The batch's report links each GUI task's video beside its row.
    report = write_batch_report(out).read_text()
    assert report.count('class="video"') == 1 and "video.webm" in report
