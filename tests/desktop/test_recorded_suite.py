"""Issue 45's recorded conversations: for each protocol, the shipped suite's GUI tasks (gedit
save, Calculator 739, the Chromium form, a Calc cell) run through `roundhouse batch
tasks/basic --agent computer --model SPEC --recordings`, each task on a fresh virtual desktop
of X11 and of sway, its recording played by the protocol's fake (which refuses what the
vendor refuses), and the suite's own checks pass.

What runs where, for time: all four tasks of every protocol on X11, and on sway the two
keyboard-only editors' tasks, gedit and Calculator (each protocol's four pass on sway too:
`roundhouse batch tasks/basic --agent computer --model SPEC --recordings --session sway`
runs them by hand). Measured on 2 shared cores (two runs): a batch of four on X11 took 15-27 s
(the form's page-load wait is much of it), two on sway 7-11 s, Gemini's 3-6 s; the file
100-112 s of one worker (load average ~3.5 on 2 cores).
One task at a time (--workers 1): the machine's cores are shared."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
SUITE = ROOT / "tasks" / "basic"
GUI_TASKS = {"gedit-type-save", "calculator-739", "browser-form-submit", "calc-read-ods"}
ON_SESSION = {"x11": GUI_TASKS, "sway": {"gedit-type-save", "calculator-739"}}
# What each protocol has recordings of. Gemini's functions type only at a point (a click
# first), so it has the two tasks that need no typing: keys pressed, and a cell read.
RECORDED = {
    "anthropic:claude-sonnet-4-5": GUI_TASKS,
    "openai-computer:computer-use-preview": GUI_TASKS,
    "uitars:ui-tars-1.5-7b": GUI_TASKS,
    "qwen-vl:qwen2.5-vl-7b-instruct": GUI_TASKS,
    "gemini:gemini-2.5-computer-use-preview-10-2025": {"calculator-739", "calc-read-ods"},
}


@pytest.mark.parametrize("session", ["x11", "sway"])
@pytest.mark.parametrize("spec", list(RECORDED))
def test_a_protocols_recordings_pass_the_suites_checks(
    spec: str, session: str, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    argv = [
        sys.executable, "-m", "roundhouse", "batch", str(SUITE),
        "--agent", "computer", "--model", spec, "--recordings",
        "--session", session, "--workers", "1", "--out", str(out),
    ]  # fmt: skip
    expected = RECORDED[spec] & ON_SESSION[session]
    if expected != RECORDED[spec]:
        argv += [arg for task in sorted(expected) for arg in ("--task", task)]
    source = ROOT / "src"  # this checkout's, first
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(source), str(ROOT)])}
    done = subprocess.run(
        argv, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=240, check=False
    )
    said = f"stdout:\n{done.stdout}\nstderr:\n{done.stderr[-3000:]}"
    assert done.returncode == 0, said
    rows = {row["task"]: row for row in json.loads((out / "results.json").read_text())}
    assert set(rows) == expected, said  # a recording per GUI task, none missing
    for row in rows.values():
        assert row["passed"] and row["status"] == "FINISH", row["reason"]
        assert row["checks_total"] >= 1 and row["checks_passed"] == row["checks_total"]
        assert row["steps"] >= 1 and row["input_tokens"] > 0  # the fake's usage came back
