"""Random kills: a session SIGKILLed at a random moment, then resumed, always completes,
with every step logged once and its cost equal to the sum of its steps.

`make test` runs 10 seeds; `make faults` runs 30 (RH_RANDOM_KILLS). Each seed fixes the
moment of the kill, so a failure names the seed that reproduces it.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import processes_running, read_jsonl, shell_answer, write_replay

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
    assert rounds[max(rounds)]["state"] == "finished", f"seed {seed}"
    assert all(r["state"] in ("finished", "cancelled") for r in rounds.values()), f"seed {seed}"
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
