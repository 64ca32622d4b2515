"""The HTML report of real log folders, opened in real headless Chromium (Selenium).

The folders come from real rounds run in-process: shell rounds with the replay model,
and a GUI round with the offline planner on gedit under Xvfb (screenshots, snapshots).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.remote.webelement import WebElement
from typer.testing import CliRunner

from roundhouse.cli.app import app
from roundhouse.config import Price
from roundhouse.core.states import RoundState
from roundhouse.core.trajectory import StepRecord
from roundhouse.logs.report import REPORT_NAME, NotALogFolder, read_session, write_report
from roundhouse.testing.user import ScriptedUser
from tests.gui.conftest import GuiSession
from tests.gui.conftest import desktop as desktop  # noqa: F401  (the GUI fixtures, reused)
from tests.gui.conftest import gui_session as gui_session  # noqa: F401
from tests.helpers import SessionFactory, read_jsonl, shell_answer, write_replay

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
# What this machine's Chromium needs headless: no sandbox as root, no GPU, and no
# background connections (the closed network refuses them, noisily).
CHROMIUM_FLAGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)

HOSTILE_THOUGHT = (
    '<b id="injected">bold?</b><script>document.title = "pwned"</script>'
    '<img id="injected-img" src="x" onerror="document.title = \'pwned\'">'
)
HOSTILE_OUTPUT = '<h1 id="injected-output">not a heading</h1>'


@pytest.fixture(scope="module")
def browser() -> Iterator[WebDriver]:
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    with tempfile.TemporaryDirectory(prefix="rh-chromium-") as profile:
        for flag in (*CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--window-size=1200,900"):
            options.add_argument(flag)
        driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
        try:
            yield driver
        finally:
            driver.quit()


def open_report(browser: WebDriver, report: Path) -> None:
    browser.get(report.resolve().as_uri())  # returns after the load event: images included


def image_states(browser: WebDriver) -> list[dict[str, Any]]:
    states: list[dict[str, Any]] = browser.execute_script(
        "return Array.from(document.images).map(i => ({src: i.getAttribute('src'),"
        " complete: i.complete, width: i.naturalWidth}));"
    )
    return states


def step_element(browser: WebDriver, step: dict[str, Any]) -> list[WebElement]:
    selector = f'section.step[data-round="{step["round_id"]}"][data-step="{step["session_step"]}"]'
    return list(browser.find_elements(By.CSS_SELECTOR, selector))


def assert_every_step_shown(browser: WebDriver, folder: Path) -> list[dict[str, Any]]:
    steps = read_jsonl(folder / "response.log")
    assert steps
    for step in steps:
        assert len(step_element(browser, step)) == 1, step
    assert len(browser.find_elements(By.CSS_SELECTOR, "section.step")) == len(steps)
    return steps


async def shell_session_folder(tmp_path: Path, make_session: SessionFactory) -> Path:
    """Two real shell rounds: one finishes (a hostile thought, HTML and a long output in
    the shell's stdout), one fails."""
    hostile = shell_answer("CONTINUE", f"echo '{HOSTILE_OUTPUT}'; seq 1 200")
    hostile["thought"] = HOSTILE_THOUGHT
    replay = write_replay(
        tmp_path / "answers.json",
        [
            hostile,
            shell_answer("FINISH", result="printed a heading and 200 numbers"),
            shell_answer("CONTINUE", "test -e /no/such/file"),
            shell_answer("FAIL", result="there is no /no/such/file"),
        ],
    )
    session = await make_session(model=f"replay:{replay}")
    outcomes = await session.run(["print a heading and count to 200", "check /no/such/file"])
    assert [o.state for o in outcomes] == [RoundState.FINISH, RoundState.FAIL]
    return session.store.folder


async def test_a_shell_session_shows_every_step_request_and_answer_in_chromium(
    tmp_path: Path, make_session: SessionFactory, browser: WebDriver
) -> None:
    folder = await shell_session_folder(tmp_path, make_session)
    report = write_report(folder)
    assert report == folder / REPORT_NAME
    open_report(browser, report)
    steps = assert_every_step_shown(browser, folder)
    rounds = browser.find_elements(By.CSS_SELECTOR, "section.round")
    assert [r.find_element(By.CSS_SELECTOR, ".request").text for r in rounds] == [
        "print a heading and count to 200",
        "check /no/such/file",
    ]
    assert rounds[0].find_element(By.CSS_SELECTOR, ".round-answer").text == (
        "printed a heading and 200 numbers"
    )
    assert rounds[1].find_element(By.CSS_SELECTOR, ".round-error").text == (
        "there is no /no/such/file"
    )
    assert browser.find_element(By.ID, "total-steps").text == str(len(steps))
    assert browser.find_element(By.ID, "total-rounds").text == "2"
    # The long stdout is folded, and is all there when unfolded.
    first = step_element(browser, steps[0])[0]
    folded = first.find_element(By.CSS_SELECTOR, "details.output")
    assert folded.get_attribute("open") is None
    folded.find_element(By.TAG_NAME, "summary").click()
    assert "\n200" in folded.find_element(By.TAG_NAME, "pre").text


async def test_a_step_of_several_actions_shows_each_and_what_did_not_run(
    tmp_path: Path, make_session: SessionFactory, browser: WebDriver
) -> None:
    """One model call, three actions: the second fails, so the third never runs."""
    listed = shell_answer("CONTINUE", "echo one")
    listed["action"] = [
        {"function": "run_shell", "arguments": {"command": c}, "status": "CONTINUE"}
        for c in ("echo one", "exit 3", "echo never")
    ]
    replay = write_replay(
        tmp_path / "answers.json", [listed, shell_answer("FAIL", result="exit 3")]
    )
    session = await make_session(model=f"replay:{replay}")
    await session.run_round("run three commands")
    open_report(browser, write_report(session.store.folder))
    first = step_element(browser, read_jsonl(session.store.folder / "response.log")[0])[0]
    assert first.find_element(By.CSS_SELECTOR, ".action-count").text == (
        "3 actions, one model call"
    )
    shown = [a.text for a in first.find_elements(By.CSS_SELECTOR, ".action-item code.arguments")]
    assert [json.loads(text)["command"] for text in shown] == ["echo one", "exit 3", "echo never"]
    statuses = [b.text for b in first.find_elements(By.CSS_SELECTOR, ".result-status")]
    assert statuses == ["success", "success", "not run"]
    assert "it exited with code 3" in first.find_element(By.CSS_SELECTOR, ".not-run-reason").text
    assert "1 model requests · 3 actions" in first.find_element(By.CSS_SELECTOR, ".usage").text
    assert browser.find_element(By.ID, "total-actions").text == "3"


async def test_html_in_a_thought_or_an_output_shows_as_text(
    tmp_path: Path, make_session: SessionFactory, browser: WebDriver
) -> None:
    folder = await shell_session_folder(tmp_path, make_session)
    open_report(browser, write_report(folder))
    for injected in ("injected", "injected-img", "injected-output"):
        assert browser.find_elements(By.ID, injected) == []
    assert browser.find_elements(By.CSS_SELECTOR, "main script") == []
    assert "pwned" not in browser.title
    thought = browser.find_element(By.CSS_SELECTOR, 'section.step[data-step="1"] .thought')
    assert thought.text == HOSTILE_THOUGHT
    stdout = browser.find_element(By.CSS_SELECTOR, 'section.step[data-step="1"] details.output')
    assert HOSTILE_OUTPUT in (
        stdout.find_element(By.TAG_NAME, "pre").get_attribute("textContent") or ""
    )


async def test_a_gui_session_shows_its_screenshots_and_snapshots_and_every_image_loads(
    gui_session: GuiSession, tmp_path: Path, browser: WebDriver
) -> None:
    target = tmp_path / "out" / "hello.txt"
    request = f"open gedit, type Hello and save it as {target}"
    async with gui_session(model="offline", save_ui_tree=True, save_full_screen=True) as session:
        outcome = await session.run_round(request)
    assert outcome.state is RoundState.FINISH, outcome.result
    folder = session.store.folder
    open_report(browser, write_report(folder))
    steps = assert_every_step_shown(browser, folder)

    images = image_states(browser)
    shown = {str(image["src"]) for image in images}
    named = {name for step in steps for name in step["screenshots"]}
    snapshots = {p.name for p in folder.glob("*_round_0*_final.png")}
    assert named and snapshots  # the round took screenshots and snapshots
    assert shown == named | snapshots
    assert all(image["complete"] and int(image["width"]) > 0 for image in images), images
    # The annotated screenshot comes first in a step's card, and opens at full size.
    app_step = next(s for s in steps if s["agent"] == "app")
    card = step_element(browser, app_step)[0]
    links = card.find_elements(By.CSS_SELECTOR, ".gallery a")
    assert [(link.get_attribute("href") or "").rsplit("/", 1)[1] for link in links] == [
        f"action_step{app_step['session_step']}_annotated.png",
        f"action_step{app_step['session_step']}.png",
    ]
    # Snapshots at each subtask end, and the round's final one with its UI tree.
    subtask_ends = browser.find_elements(By.CSS_SELECTOR, ".snapshot:not([data-snapshot=final])")
    assert len(subtask_ends) == 2
    final = browser.find_element(By.CSS_SELECTOR, '.snapshot[data-snapshot="final"]')
    assert "ui_tree_round_0_final.json" in final.text
    assert browser.find_element(By.CSS_SELECTOR, ".round-answer").text == outcome.result

    # Written elsewhere, its images are still found: the links lead back to the folder.
    open_report(browser, write_report(folder, tmp_path / "elsewhere" / "gui.html"))
    images = image_states(browser)
    assert len(images) == len(shown)
    assert all(image["complete"] and image["width"] > 0 for image in images), images


async def test_a_crashed_folder_with_a_half_written_last_line_still_renders_and_says_so(
    tmp_path: Path, make_session: SessionFactory, browser: WebDriver
) -> None:
    folder = await shell_session_folder(tmp_path, make_session)
    # As a SIGKILL during round 1 leaves it: round 1's record never closed, and its last
    # step cut in the middle of its line.
    rounds = (folder / "rounds.jsonl").read_text().splitlines(keepends=True)
    (folder / "rounds.jsonl").write_text("".join(rounds[:-1]))
    log = folder / "response.log"
    lines = log.read_text().splitlines(keepends=True)
    log.write_text("".join(lines[:-1]) + lines[-1][: len(lines[-1]) // 2])
    open_report(browser, write_report(folder))

    kept = [StepRecord.model_validate_json(line) for line in lines[:-1]]
    for step in kept:
        assert len(step_element(browser, step.model_dump())) == 1
    assert len(browser.find_elements(By.CSS_SELECTOR, "section.step")) == len(kept)
    notes = browser.find_element(By.ID, "notes").text
    assert f"response.log: its last line (line {len(lines)}) is half-written" in notes
    interrupted = browser.find_element(By.CSS_SELECTOR, 'section.round[data-round="1"]')
    assert interrupted.find_element(By.CSS_SELECTOR, ".round-state").text == "interrupted"
    assert "interrupted" in interrupted.find_element(By.CSS_SELECTOR, ".round-error").text


async def test_a_question_with_its_reply_and_a_refused_command_with_its_error(
    tmp_path: Path, make_session: SessionFactory, browser: WebDriver
) -> None:
    replay = write_replay(
        tmp_path / "answers.json",
        [
            shell_answer("PENDING", question="Which folder?"),
            shell_answer("CONTINUE", f"rm -r {tmp_path / 'keep'}"),
            shell_answer("FINISH", result="kept it"),
        ],
    )
    user = ScriptedUser(answers=["/tmp <b>now</b>"])
    session = await make_session(model=f"replay:{replay}", user=user, shell_policy="deny")
    await session.run(["tidy a folder"])
    open_report(browser, write_report(session.store.folder))

    asked = browser.find_element(By.CSS_SELECTOR, 'section.step[data-step="1"]')
    assert "Which folder?" in asked.text and "/tmp <b>now</b>" in asked.text
    refused = browser.find_element(By.CSS_SELECTOR, 'section.step[data-step="2"]')
    assert refused.find_element(By.CSS_SELECTOR, ".result-status").text == "skipped"
    assert (
        "refused by the shell policy 'deny'"
        in refused.find_element(By.CSS_SELECTOR, ".result-error").text
    )
    assert "Which folder?" in browser.find_element(By.ID, "session").text


def priced(answer: dict[str, Any], model: str = "m") -> dict[str, Any]:
    return {"answer": answer, "usage": {"input_tokens": 1000, "output_tokens": 100}, "model": model}


async def test_cost_per_step_round_and_session_and_the_evaluations_with_sub_scores(
    tmp_path: Path, make_session: SessionFactory, browser: WebDriver
) -> None:
    replay = write_replay(
        tmp_path / "answers.json",
        [priced(shell_answer("CONTINUE", "true")), priced(shell_answer("FINISH", result="done"))],
    )
    verdict = {
        "reason": "the command ran and its exit code was 0",
        "sub_scores": [{"name": "ran the command", "evaluation": "yes"}],
        "complete": "yes",
    }
    judge = write_replay(
        tmp_path / "judge.json",
        [priced(verdict), priced({**verdict, "complete": "unsure", "reason": "one round only"})],
    )
    session = await make_session(
        model=f"replay:{replay}",
        model_eval=f"replay:{judge}",
        eva_round=True,
        eva_session=True,
        prices={"m": Price(input_per_mtok=100, output_per_mtok=1000)},  # $0.20 a call
    )
    await session.run(["run true"])
    open_report(browser, write_report(session.store.folder))

    costs = [e.text for e in browser.find_elements(By.CSS_SELECTOR, ".step-cost")]
    assert costs == ["$0.20", "$0.20"]
    assert browser.find_element(By.CSS_SELECTOR, ".round-cost").text == "$0.60"  # + its judge
    assert browser.find_element(By.ID, "total-cost").text == session.usage.cost_text == "$0.80"
    round_verdict = browser.find_element(By.CSS_SELECTOR, "section.round .evaluation")
    assert "yes" in round_verdict.find_element(By.CSS_SELECTOR, ".verdict").text
    assert "ran the command" in round_verdict.find_element(By.TAG_NAME, "table").text
    session_verdict = browser.find_element(By.CSS_SELECTOR, "#session .evaluation")
    assert session_verdict.find_element(By.CSS_SELECTOR, ".verdict").text == "unsure"
    assert "one round only" in session_verdict.text


async def test_an_unknown_price_is_unknown_never_zero(
    tmp_path: Path, make_session: SessionFactory, browser: WebDriver
) -> None:
    replay = write_replay(
        tmp_path / "answers.json", [priced(shell_answer("FINISH", result="done"), "mystery")]
    )
    session = await make_session(model=f"replay:{replay}")
    await session.run(["anything"])
    report = write_report(session.store.folder)
    open_report(browser, report)
    assert browser.find_element(By.ID, "total-cost").text == "unknown"
    assert browser.find_element(By.CSS_SELECTOR, ".step-cost").text == "unknown"
    assert "$0.00" not in report.read_text()


def test_a_folder_that_is_no_log_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(NotALogFolder):
        read_session(tmp_path / "missing")
    with pytest.raises(NotALogFolder):
        read_session(tmp_path)


def start_cli(*arguments: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "roundhouse", "report", *arguments],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


async def test_the_report_command_prints_the_path_and_exits_2_on_a_missing_folder(
    tmp_path: Path, make_session: SessionFactory
) -> None:
    folder = await shell_session_folder(tmp_path, make_session)
    # Both at once: each process spends its time importing the CLI.
    good, missing = start_cli(str(folder)), start_cli(str(tmp_path / "no-such-folder"))
    out, err = good.communicate(timeout=120)
    assert good.returncode == 0, err
    assert out.strip() == str(folder / REPORT_NAME)
    assert (folder / REPORT_NAME).is_file()
    out, err = missing.communicate(timeout=120)
    assert missing.returncode == 2
    assert "no-such-folder is not a folder" in err


async def test_the_report_command_writes_elsewhere_with_links_back_and_refuses_other_folders(
    tmp_path: Path, make_session: SessionFactory
) -> None:
    folder = await shell_session_folder(tmp_path, make_session)
    elsewhere = tmp_path / "reports" / "session.html"
    done = CliRunner().invoke(app, ["report", str(folder), "--out", str(elsewhere)])
    assert done.exit_code == 0, done.output
    assert done.stdout.strip() == str(elsewhere)
    assert 'href="../logs/test/response.log"' in elsewhere.read_text()

    into_folder = CliRunner().invoke(app, ["report", str(folder), "--out", str(tmp_path)])
    assert into_folder.exit_code == 0, into_folder.output
    assert into_folder.stdout.strip() == str(tmp_path / REPORT_NAME)
    unwritable = CliRunner().invoke(
        app, ["report", str(folder), "--out", str(elsewhere / "under-a-file.html")]
    )
    assert unwritable.exit_code == 1
    assert "cannot write the report" in unwritable.stderr

    refused = CliRunner().invoke(app, ["report", str(tmp_path / "reports")])
    assert refused.exit_code == 2
    assert "not a roundhouse log folder" in refused.stderr
