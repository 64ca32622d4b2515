"""Random kills: a session SIGKILLed at a random moment, then resumed, always completes,
with every step logged once and its cost equal to the sum of its steps.

`make test` runs 10 shell and 2 GUI seeds; `make faults` runs 30 and 5
(RH_RANDOM_KILLS, RH_RANDOM_GUI_KILLS). Each seed fixes the
moment of the kill, so a failure names the seed that reproduces it.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import (
    desktop_tag_of,
    processes_running,
    read_jsonl,
    shell_answer,
    tagged,
    write_replay,
)

PRICED = {"usage": {"input_tokens": 1000, "output_tokens": 10}, "model": "gpt-4o-mini"}
SEEDS = range(int(os.environ.get("RH_RANDOM_KILLS", "10")))


def priced(answer: dict[str, Any]) -> dict[str, Any]:
    return {"answer": answer, **PRICED}


def roundhouse(*args: str) -> list[str]:
    return [sys.executable, "-m", "roundhouse", *args]


def clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("ROUNDHOUSE_")}


@pytest.mark.parametrize("seed", SEEDS)
def test_a_session_killed_at_a_random_moment_resumes_to_the_end(seed: int, tmp_path: Path) -> None:
    moment = random.Random(seed).uniform(0.0, 1.5)  # after the session began
    marker = f"rh-kill-{seed}-{os.getpid()}"  # names this run's commands in the process table
    steps = [
        priced(shell_answer("CONTINUE", f"echo {marker} one; sleep 0.3")),
        priced(shell_answer("CONTINUE", f"echo {marker} two; sleep 0.3")),
        priced(shell_answer("CONTINUE", f"echo {marker} three; sleep 0.3")),
        priced(shell_answer("FINISH", result="first run finished")),
    ]
    first = write_replay(tmp_path / "first.json", steps)
    run = subprocess.Popen(
        roundhouse(
            *["run", "count to three", "--agent", "linux", "--model", f"replay:{first}"],
            *["--logs", "L", "--task", "k", "--shell-policy", "allow"],
        ),
        cwd=tmp_path,
        env=clean_env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    folder = tmp_path / "L" / "k"
    deadline = time.monotonic() + 30
    while not (folder / "session.json").exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(moment)
    run.send_signal(signal.SIGKILL)
    run.wait(timeout=10)

    again = write_replay(
        tmp_path / "again.json",
        [priced(shell_answer("CONTINUE", f"echo {marker} again")), *steps[1:]],
    )
    resumed = subprocess.run(
        roundhouse("resume", str(folder), "--model", f"replay:{again}", "--yes"),
        cwd=tmp_path,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert resumed.returncode == 0, f"seed {seed} ({moment:.2f} s): {resumed.stderr}"

    rounds = {record["id"]: record for record in read_jsonl(folder / "rounds.jsonl")}
    assert rounds[max(rounds)]["record_state"] == "finished", f"seed {seed}"
    assert all(r["record_state"] in ("finished", "cancelled") for r in rounds.values()), (
        f"seed {seed}"
    )
    logged = read_jsonl(folder / "response.log")
    numbers = [step["session_step"] for step in logged]
    assert numbers == list(range(1, len(numbers) + 1)), f"seed {seed}: steps {numbers}"
    costs = [step["usage"]["cost"] for step in logged]
    total = f"${sum(costs):.6f}".rstrip("0")
    assert f"Request total cost for this session is {total}" in resumed.stdout, f"seed {seed}"
    # The killed run's commands ran in process groups of their own; none is left.
    deadline = time.monotonic() + 5
    while processes_running(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not processes_running(marker), f"seed {seed}: commands of the killed run still run"


GUI_SEEDS = range(int(os.environ.get("RH_RANDOM_GUI_KILLS", "2")))


@pytest.mark.parametrize("seed", GUI_SEEDS)
def test_a_gui_session_killed_at_a_random_moment_resumes_and_leaves_no_desktop(
    seed: int, tmp_path: Path
) -> None:
    """`make test` runs 2 seeds; `make faults` 5 (RH_RANDOM_GUI_KILLS)."""
    if shutil.which("Xvfb") is None or shutil.which("gedit") is None:
        pytest.skip("the desktop stack is installed by `make system-deps`")
    moment = random.Random(1000 + seed).uniform(0.0, 3.0)
    target = tmp_path / "out" / "list.txt"
    request = f"Launch the text editor, write 'milk, eggs' and save the document to {target}"
    run = subprocess.Popen(
        roundhouse("run", request, "--desktop", "virtual", "--yes", "--logs", "L", "--task", "g"),
        cwd=tmp_path,
        env=clean_env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    folder = tmp_path / "L" / "g"
    tag = None
    deadline = time.monotonic() + 60
    while not (tag and (folder / "session.json").exists()) and time.monotonic() < deadline:
        tag = tag or desktop_tag_of(run.pid)
        time.sleep(0.01)
    assert tag is not None, f"seed {seed}: the run started no desktop"
    time.sleep(moment)
    run.send_signal(signal.SIGKILL)
    run.wait(timeout=10)
    # The killed run's desktop goes with it (its janitor), before anything resumes.
    deadline = time.monotonic() + 15
    while tagged(tag) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not tagged(tag), f"seed {seed}: processes of the killed run's desktop still run"

    resumed = subprocess.run(
        roundhouse("resume", str(folder), "--desktop", "virtual", "--yes"),
        cwd=tmp_path,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert resumed.returncode == 0, f"seed {seed} ({moment:.2f} s): {resumed.stdout}"
    assert target.read_text().rstrip("\n") == "milk, eggs", f"seed {seed}"
    rounds = {record["id"]: record for record in read_jsonl(folder / "rounds.jsonl")}
    assert rounds[max(rounds)]["record_state"] == "finished", f"seed {seed}"
    numbers = [step["session_step"] for step in read_jsonl(folder / "response.log")]
    assert numbers == list(range(1, len(numbers) + 1)), f"seed {seed}: steps {numbers}"
