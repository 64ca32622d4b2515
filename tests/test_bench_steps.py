"""`roundhouse bench steps`: the suite with one action per model call and with several, in
one run. Shell tasks of the shipped suite need no desktop: the bench's own run of them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from roundhouse.bench.steps import Mode, Run, fewer, render, summary

SUITE = Path(__file__).parents[1] / "tasks" / "basic"


def run(task: str, calls: int, passed: bool = True) -> Run:
    return Run(task, passed, "FINISH" if passed else "FAIL", calls, calls, 2, 1.5)


def test_the_summary_compares_the_modes_per_task_and_on_average() -> None:
    one = Mode("one", 1, [run("a", 4), run("b", 2), run("c", 3, passed=False)])
    several = Mode("several", 8, [run("a", 2), run("b", 2), run("c", 3)])
    report = summary(one, several)
    assert report["per_task_mean"]["calls"] == {"one": 3.0, "several": 2.33, "fewer": 0.222}
    assert report["passed"] == {"one": 2, "several": 3}
    assert not report["same_tasks_pass"] and report["pass_only_with_several"] == ["c"]
    assert report["acting_tasks"] == 3 and report["acting_calls_mean"]["fewer"] == 0.222
    shown = render(report)
    assert "model calls 3 -> 2.33 (22% fewer)" in shown
    assert "NOT the same tasks" in shown and "pass only with several: c" in shown
    assert fewer(0, 0) is None


def test_the_bench_runs_both_modes_and_says_what_each_cost(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            *(sys.executable, "-m", "roundhouse", "bench", "steps", "--json"),
            *("--suite", str(SUITE), "--task", "shell-create-file", "--task", "shell-hostname"),
            *("--out", str(tmp_path)),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["same_tasks_pass"] and report["passed"] == {"one": 2, "several": 2}
    created = report["runs"]["shell-create-file"]
    # Writing the file and reading it back: two calls' commands in one, then the answer.
    assert (created["one"]["calls"], created["several"]["calls"]) == (3, 2)
    assert created["one"]["actions"] == created["several"]["actions"] == 2
    assert report["runs"]["shell-hostname"]["several"]["calls"] == 2  # nothing to put together
    assert (tmp_path / "one" / "round-0" / "results.json").exists()
