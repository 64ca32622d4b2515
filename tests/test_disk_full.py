"""A disk that fills while a round logs: the round stops with the reason, the log files
stay whole, and resume carries on once there is room again. A real tmpfs of 512 KiB is
the disk (mounting needs root)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from roundhouse.core.trajectory import StepRecord
from roundhouse.logs.store import LogStore, LogWriteError, read_jsonl
from tests.helpers import shell_answer, write_replay


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    mount_point = tmp_path / "disk"
    mount_point.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs as the full disk needs root (CI runs as root)")
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", str(mount_point)],
        capture_output=True,
        text=True,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], check=False)


def fill(folder: Path) -> None:
    with open(folder / "filler", "wb", buffering=0) as filler:
        try:
            while filler.write(b"\0" * 4096):
                pass
        except OSError:
            pass  # full


def roundhouse(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ROUNDHOUSE_")}
    return subprocess.run(
        [sys.executable, "-m", "roundhouse", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_line_that_does_not_fit_is_taken_back_whole(small_disk: Path) -> None:
    store = LogStore(small_disk / "session")
    step = StepRecord(
        session_step=1, round_id=0, round_step=1, agent="linux", agent_name="x", status="CONTINUE"
    )
    store.write_step(step)
    fill(small_disk)
    big = step.model_copy(update={"session_step": 2, "observation": "x" * 200_000})
    with pytest.raises(LogWriteError, match="No space left on device"):
        store.write_step(big)
    with pytest.raises(LogWriteError, match="blackboard.json"):
        store.write_json("blackboard.json", {"text": "y" * 200_000})
    assert not list(store.folder.glob(".*.tmp"))  # no half-written temporary left
    (small_disk / "filler").unlink()
    store.write_step(step.model_copy(update={"session_step": 3}))
    steps, problems = read_jsonl(store.folder / "response.log", StepRecord)
    assert problems == [] and [s.session_step for s in steps] == [1, 3]


def test_a_round_on_a_full_disk_stops_with_the_reason_and_resumes(
    small_disk: Path, tmp_path: Path
) -> None:
    # The first step's own command fills the disk, so the write of its record fails.
    answers = write_replay(
        tmp_path / "answers.json",
        [
            shell_answer("CONTINUE", f"head -c 4M /dev/zero > {small_disk}/filler; echo filled"),
            shell_answer("FINISH", result="never reached"),
        ],
    )
    run = roundhouse(
        ["run", "fill the disk", "--agent", "linux", "--model", f"replay:{answers}"]
        + ["--logs", str(small_disk), "--task", "full", "--shell-policy", "allow"],
        tmp_path,
    )
    output = run.stdout + run.stderr
    assert run.returncode == 1, output
    assert "No space left on device" in output and "Traceback" not in output
    folder = small_disk / "full"
    session = json.loads((folder / "session.json").read_text())  # whole, not half-written
    assert [r["user_query"] for r in session["rounds"]] == ["fill the disk"]
    if (folder / "blackboard.json").exists():
        json.loads((folder / "blackboard.json").read_text())
    steps, problems = read_jsonl(folder / "response.log", StepRecord)
    assert problems == []

    (small_disk / "filler").unlink()
    again = write_replay(
        tmp_path / "again.json", [shell_answer("FINISH", result="there is room again")]
    )
    resumed = roundhouse(["resume", str(folder), "--model", f"replay:{again}"], tmp_path)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "there is room again" in resumed.stdout
    steps, problems = read_jsonl(folder / "response.log", StepRecord)
    assert problems == []
    numbers = [step.session_step for step in steps]
    assert numbers == sorted(set(numbers))  # no step number twice
