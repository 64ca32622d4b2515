"""The benches run as a user runs them, once each, on a virtual desktop of their own: the
table has its shape and the measures were taken. No timing is asserted anywhere (the figures
are the bench's to report, as ratios measured in the same run)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROUNDHOUSE = [sys.executable, "-m", "roundhouse"]


def bench(*args: str, cwd: Path, timeout: float = 300) -> tuple[dict[str, Any], str]:
    """The report (stdout, JSON) and the progress shown meanwhile (stderr)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ROUNDHOUSE_")}
    done = subprocess.run(
        [*ROUNDHOUSE, "bench", *args, "--json"],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return report, done.stderr


@pytest.mark.skipif(
    not all(shutil.which(app) for app in ("gedit", "chromium", "thunar")),
    reason="gedit, chromium and thunar are installed by `make system-deps`",
)
def test_the_observation_bench_measures_every_window(tmp_path: Path) -> None:
    report, _ = bench("observation", "--runs", "1", cwd=tmp_path)
    assert report["notes"] == []
    assert list(report["windows"]) == ["gedit", "qt", "chromium", "thunar"]
    for name, window in report["windows"].items():
        assert window["ours_tokens"] > 0 and window["osworld_tokens"] > 0, name
        assert window["ratio"] == round(window["ours_tokens"] / window["osworld_tokens"], 2)
        # Recall was computed against the hand-written list: every wanted control is
        # either found or named as missing.
        assert window["recall_wanted"] > 0
        assert window["recall_found"] + len(window["recall_missing"]) == window["recall_wanted"]
        assert window["stateful"] > 0, name  # each window has an entry, a check box or both
        assert window["states_shown"] is None or 0 <= window["states_shown"] <= window["stateful"]


@pytest.mark.skipif(
    not all(shutil.which(app) for app in ("chromium", "thunar")),
    reason="chromium and thunar are installed by `make system-deps`",
)
def test_the_tree_bench_measures_thunar_and_the_scaling_row(tmp_path: Path) -> None:
    report, progress = bench(
        "tree", "--runs", "1", "--only", "thunar-500", "--only", "scaling", cwd=tmp_path
    )
    assert "[1/2] thunar-500" in progress and "[2/2] scaling" in progress
    thunar = report["apps"]["thunar-500"]
    assert list(report["apps"]) == ["thunar-500"]
    assert thunar["controls"] > 0 and thunar["controls_ms_median"] > 0
    assert thunar["controls_ratio"] == round(
        thunar["controls_naive_ms_median"] / thunar["controls_ms_median"], 1
    )
    # A read right after one, nothing changed, is served what was read (atspi_kept).
    assert thunar["controls_warm_ms_median"] > 0 and thunar["warm_served"] >= 1
    scaling = report["scaling"]
    assert list(scaling["sizes"]) == ["1x", "10x", "50x"]
    rows = [size["table_rows"] for size in scaling["sizes"].values()]
    assert rows == [50, 500, 2500]
    # The same top of the page shows at every size: the same controls are listed.
    assert len({size["controls"] for size in scaling["sizes"].values()}) == 1
    assert all(size["warm_served"] >= 1 for size in scaling["sizes"].values())
    # A new process's first read, as a whole command, at each size.
    assert all(size["command_ms_median"] > 0 for size in scaling["sizes"].values())
    first, last = scaling["sizes"]["1x"], scaling["sizes"]["50x"]
    assert scaling["ratio"] == round(last["controls_ms_median"] / first["controls_ms_median"], 2)
