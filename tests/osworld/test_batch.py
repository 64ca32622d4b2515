"""`roundhouse batch` over task files in OSWorld's format (ours, tests/osworld/examples): each
task on a fresh desktop and home, scored by its evaluator; 1.0 with the answers we wrote,
on X11 and on sway alike (their pyautogui commands and Ctrl+Alt+T included), 0.0 when the
agent does nothing; what cannot run here is a row that says why."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.osworld.conftest import EXAMPLES

BATCH_TIMEOUT = 600.0
FEASIBLE = {"rh-os-lock", "rh-os-rename", "rh-os-terminal", "rh-os-photos", "rh-os-notes",
            "rh-os-compare", "rh-gui-gedit"}  # fmt: skip
NOT_RUNNABLE = {
    "rh-gui-web": "needs the live web",
    "rh-gui-tidy": "step 'tidy_desktop'",
    "rh-gui-impress": "LibreOffice Impress",  # not installed, or installed but not scored here
}


def batch(out: Path, answers: Path, *extra: str) -> tuple[subprocess.CompletedProcess[str],
                                                            dict[str, dict[str, Any]]]:  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-m", "roundhouse", "batch", str(EXAMPLES), "--model", "replay",
         "--answers", str(answers), "--files", str(EXAMPLES / "files"), "--out", str(out),
         "--workers", "2", *extra],
        capture_output=True, text=True, timeout=BATCH_TIMEOUT, check=False,
    )  # fmt: skip
    rows = json.loads((out / "results.json").read_text())
    return done, {row["task"]: row for row in rows}


@pytest.mark.parametrize("session", ["x11", "sway"])
def test_each_task_scores_one_with_its_answers(tmp_path: Path, session: str) -> None:
    done, rows = batch(tmp_path / "out", EXAMPLES / "answers", "--session", session)
    assert set(rows) == FEASIBLE | set(NOT_RUNNABLE) | {"rh-os-bluetooth"}
    for task in FEASIBLE:
        assert rows[task]["score"] == 1.0, rows[task]
        assert rows[task]["status"] == "FINISH" and rows[task]["passed"]
    assert rows["rh-os-bluetooth"]["status"] == "FAIL"  # infeasible: it said why and gave up
    assert rows["rh-os-bluetooth"]["score"] == 1.0
    for task, why in NOT_RUNNABLE.items():
        assert rows[task]["status"] == "NOT RUNNABLE" and rows[task]["score"] is None
        assert rows[task]["reason"].startswith("not runnable here: ")
        assert rows[task]["reason"].find(why) > 0 or task == "rh-gui-impress", rows[task]
    assert {row["domain"] for row in rows.values()} == {"os", "gui"}
    with open(tmp_path / "out" / "results.csv", newline="") as handle:
        scores = {row["task"]: row["score"] for row in csv.DictReader(handle)}
    assert scores["rh-os-lock"] == "1.0" and scores["rh-gui-web"] == ""
    table = done.stdout[done.stdout.index("domain ") :]
    gui, os_row, total = (line.split() for line in table.splitlines()[2:5])
    assert gui == ["gui", "4", "1", "1.00", "0.25", "3"]
    assert os_row == ["os", "7", "7", "7.00", "1.00", "0"]
    assert total == ["total", "11", "8", "8.00", "0.73", "3"]
    report = subprocess.run(
        [sys.executable, "-m", "roundhouse", "report", str(tmp_path / "out")],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    html = Path(report.stdout.strip()).read_text()
    assert "Scores per domain" in html
    assert '<tr><td>os</td><td class="n">7</td><td class="n">7</td>' in html
    # Each task had a home of its own: nothing of another task's is in it.
    homes = [tmp_path / "out" / "work" / task / "home" for task in ("rh-os-lock", "rh-os-notes")]
    assert not (homes[0] / "Desktop" / "notes.txt").exists()
    assert (homes[1] / "Desktop" / "notes.txt").read_text() == "buy milk\n"


def test_each_task_scores_zero_when_the_agent_does_nothing(tmp_path: Path) -> None:
    idle = tmp_path / "idle"
    idle.mkdir()
    finish = {"observation": "x", "thought": "Nothing to do.", "plan": [], "comment": "",
              "action": {"function": None, "arguments": {}, "status": "FINISH"},
              "result": "done"}  # fmt: skip
    for task in [*FEASIBLE, "rh-os-bluetooth"]:
        answer = [{"answer": json.dumps(finish), "usage": {"input_tokens": 0, "output_tokens": 0},
                   "model": "offline"}]  # fmt: skip
        (idle / f"{task}.answers.json").write_text(json.dumps(answer))
    done, rows = batch(tmp_path / "out", idle, "--task", "rh-os-lock", "--task", "rh-os-photos",
                       "--task", "rh-os-terminal", "--task", "rh-gui-gedit", "--task",
                       "rh-os-notes", "--task", "rh-os-bluetooth")  # fmt: skip
    assert done.returncode == 1
    for task, row in rows.items():
        assert row["score"] == 0.0 and not row["passed"], row  # the infeasible one: no FAIL
        if task == "rh-os-photos":
            # No ~/Desktop/jpgs: OSWorld's getter gives None and its metric raises on it, as
            # ours does: the row says so.
            assert row["status"] == "ERROR"
            assert "check_moved_jpgs raised TypeError" in row["reason"]
        else:
            assert row["status"] == "FINISH", row
