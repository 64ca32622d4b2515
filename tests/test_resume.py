"""A session killed with SIGKILL in the middle of a round carries on from its log folder."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from roundhouse.config import ConfigError
from roundhouse.core.events import EventBus, StepTaken
from roundhouse.core.record import RoundRecord, SessionRecord
from roundhouse.core.trajectory import StepRecord
from roundhouse.logs.resume import mark_interrupted, plan_resume
from roundhouse.logs.store import LogStore
from tests.helpers import (
    descendants_running,
    kill_processes,
    read_jsonl,
    shell_answer,
    wait_for,
    write_replay,
)

PRICED = {"usage": {"input_tokens": 1000, "output_tokens": 10}, "model": "gpt-4o-mini"}


def priced(answer: dict[str, Any]) -> dict[str, Any]:
    return {"answer": answer, **PRICED}


def env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("ROUNDHOUSE_")}


def start(args: list[str], cwd: Path, stdin: str | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "roundhouse", *args],
        cwd=cwd,
        env=env(),
        text=True,
        stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def kill_when(process: subprocess.Popen[str], log: Path, lines: int) -> None:
    """SIGKILL once the response log has this many steps and the next step's command
    (`sleep 29.75`) is running."""
    wait_for(
        lambda: log.exists() and len(log.read_text().splitlines()) >= lines,
        f"{lines} steps in {log.name}",
        seen=lambda: log.read_text() if log.exists() else "no log",
    )
    wait_for(lambda: descendants_running(process.pid, "sleep\x0029.75"), "the command to run")
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=10)
    kill_processes("sleep\x0029.75")
    if process.stdin is not None:
        process.stdin.close()


def resume(folder: Path, replay: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "roundhouse", "resume", str(folder), "--model", f"replay:{replay}"],
        cwd=cwd,
        env=env(),
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_sigkilled_round_is_marked_and_run_again_with_cost_restored(tmp_path: Path) -> None:
    first = write_replay(
        tmp_path / "first.json",
        [
            priced(shell_answer("CONTINUE", "echo before")),
            priced(shell_answer("CONTINUE", "sleep 29.75")),
        ],
    )
    process = start(
        [
            "run",
            "do the thing",
            "--agent",
            "linux",
            "--model",
            f"replay:{first}",
            "--logs",
            "L",
            "--task",
            "k",
        ],
        tmp_path,
    )
    folder = tmp_path / "L" / "k"
    kill_when(process, folder / "response.log", 1)
    assert process.returncode == -signal.SIGKILL
    assert read_jsonl(folder / "rounds.jsonl")[-1]["record_state"] == "running"
    # The step in flight was answered before the kill: its answer's cost is on the record.
    [killed] = plan_resume(folder).interrupted
    assert [s.status is None for s in killed.steps] == [False, True]
    assert killed.steps[1].usage.input_tokens == 1000

    second = write_replay(
        tmp_path / "second.json",
        [
            priced(shell_answer("CONTINUE", "echo after")),
            priced(shell_answer("FINISH", result="done at last")),
        ],
    )
    done = resume(folder, second, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "done at last" in done.stdout
    latest = {r["id"]: r for r in read_jsonl(folder / "rounds.jsonl")}
    assert latest[0]["record_state"] == "cancelled"
    assert "run again as round 1" in latest[0]["post_list"][-1]["message"]
    assert latest[1]["record_state"] == "finished" and latest[1]["user_query"] == "do the thing"
    steps = read_jsonl(folder / "response.log")
    # Step 2 was cut short by the kill: resume logged it so, and ran the round again.
    assert [(s["round_id"], s["session_step"]) for s in steps] == [(0, 1), (0, 2), (1, 3), (1, 4)]
    assert steps[1]["status"] is None and steps[1]["error"].startswith("cut short")
    costs = [s["usage"]["cost"] for s in steps]  # the killed step's answer was paid for
    total = f"${sum(costs):.6f}".rstrip("0")
    assert f"Request total cost for this session is {total}" in done.stdout


def test_finished_rounds_are_kept_and_the_blackboard_restored(tmp_path: Path) -> None:
    first = write_replay(
        tmp_path / "first.json",
        [shell_answer("FINISH", result="first done"), shell_answer("CONTINUE", "sleep 29.75")],
    )
    process = start(
        ["chat", "--agent", "linux", "--model", f"replay:{first}", "--logs", "L", "--task", "c"],
        tmp_path,
        stdin="",
    )
    assert process.stdin is not None
    process.stdin.write("first request\nsecond request\n")
    process.stdin.flush()
    folder = tmp_path / "L" / "c"
    kill_when(process, folder / "response.log", 1)

    plan = plan_resume(folder)
    assert [r.id for r in plan.kept] == [0] and [r.id for r in plan.interrupted] == [1]
    assert plan.record.requests == ["first request", "second request"]
    assert plan.kept[0].result == "first done"

    second = write_replay(tmp_path / "second.json", [shell_answer("FINISH", result="second done")])
    done = resume(folder, second, tmp_path)
    assert done.returncode == 0, done.stderr
    latest = {r["id"]: r["record_state"] for r in read_jsonl(folder / "rounds.jsonl")}
    assert latest == {0: "finished", 1: "cancelled", 2: "finished"}
    prompts = read_jsonl(folder / "request.log")
    rerun = next(p for p in prompts if p["round_id"] == 2)
    text = rerun["messages"][1]["text"]
    assert "request_0: first request" in text  # the restored blackboard
    assert "request_1" not in text  # the round run again is not recalled


def test_a_half_written_log_line_does_not_matter_to_resume(tmp_path: Path) -> None:
    """Resume reads the checkpoint alone, which is replaced whole, never half-written."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "roundhouse",
            "run",
            "who am i",
            "--agent",
            "linux",
            "--logs",
            "L",
            "--task",
            "h",
        ],
        cwd=tmp_path,
        env=env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0
    folder = tmp_path / "L" / "h"
    with open(folder / "response.log", "a") as log:
        log.write('{"session_step": 3, "round_id": 0, "rou')  # the kill came mid-write
    plan = plan_resume(folder)
    assert plan.record.session_step == 2
    assert plan.interrupted == []


def test_a_session_folder_of_an_older_roundhouse_is_refused_clearly(tmp_path: Path) -> None:
    (tmp_path / "session.json").write_text('{"agent": "linux", "settings": {}, "requests": []}')
    with pytest.raises(ConfigError, match="older roundhouse"):
        plan_resume(tmp_path)


def test_resuming_a_folder_that_is_no_session_is_a_usage_error(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "roundhouse", "resume", str(tmp_path)],
        cwd=tmp_path,
        env=env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "not a roundhouse session folder" in done.stderr


def test_resume_restores_the_sessions_settings_whole(tmp_path: Path) -> None:
    """Every setting survives a resume, not a hand-picked list: shell_output_limit was not
    among the keys resume once copied."""
    first_home, elsewhere = tmp_path / "first", tmp_path / "elsewhere"
    first_home.mkdir()
    elsewhere.mkdir()
    (first_home / "roundhouse.yaml").write_text("shell_output_limit: 321\nanswer_retries: 1\n")
    done = subprocess.run(
        [sys.executable, "-m", "roundhouse", "run", "who am i", "--agent", "linux"],
        cwd=first_home,
        env=env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    folder = Path(done.stdout.split("Logs: ")[1].strip())
    resumed = subprocess.run(  # from a folder with no roundhouse.yaml
        [sys.executable, "-m", "roundhouse", "resume", str(folder)],
        cwd=elsewhere,
        env=env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert resumed.returncode == 0, resumed.stderr
    settings = plan_resume(folder).record.settings
    assert (settings["shell_output_limit"], settings["answer_retries"]) == (321, 1)


def test_a_round_ended_by_a_lost_device_is_run_again_once(tmp_path: Path) -> None:
    """ERROR because the device was lost (a dead `serve`, a dead display) is not the
    request's failure: resume runs the round again, and a later resume does not again."""
    from roundhouse.core.events import EventBus
    from roundhouse.core.record import RoundRecord, SessionRecord
    from roundhouse.core.states import AgentKind, RoundState
    from roundhouse.logs.resume import mark_interrupted
    from roundhouse.logs.store import LogStore

    def ended(number: int, lost: bool) -> RoundRecord:
        return RoundRecord(
            id=number,
            user_query=f"request {number}",
            state=RoundState.ERROR,
            error="x",
            device_lost=lost,
        )

    session = SessionRecord(agent=AgentKind.HOST, settings={})
    session.rounds += [ended(0, False), ended(1, True)]
    LogStore(tmp_path).write_checkpoint(session)

    plan = plan_resume(tmp_path)
    assert [r.id for r in plan.kept] == [0]  # failed for its own reasons: kept
    assert plan.requests == ["request 1"]
    mark_interrupted(EventBus(), plan)
    (again,) = plan.interrupted
    assert again.state is RoundState.ERROR and not again.cancelled
    assert "run again as round 2" in again.post_list[-1].message
    LogStore(tmp_path).write_checkpoint(plan.record)
    assert plan_resume(tmp_path).interrupted == []  # a second resume runs nothing again


def test_a_step_logged_before_its_checkpoint_is_not_logged_again(tmp_path: Path) -> None:
    """The recorder appends a step to response.log, then replaces session.json: killed in
    between, the checkpoint still holds the step as answered, not ended. Resume takes the
    logged step (what happened) and logs no second 'cut short' one under its number."""
    store = LogStore(tmp_path / "session")
    first = StepRecord(session_step=1, round_id=0, round_step=1, agent="linux",
                       agent_name="linux", status="CONTINUE")  # fmt: skip
    answered = StepRecord(session_step=2, round_id=0, round_step=2, agent="linux",
                          agent_name="linux")  # fmt: skip
    round_ = RoundRecord(id=0, user_query="r", steps=[first, answered])
    store.write_checkpoint(SessionRecord(agent="linux", settings={}, rounds=[round_]))
    store.write_step(first)
    ended = StepRecord.model_validate({**answered.model_dump(), "status": "FINISH"})
    store.write_step(ended)  # then: killed, before the checkpoint

    plan = plan_resume(store.folder)
    taken: list[StepTaken] = []
    events = EventBus()
    events.subscribe(lambda event: taken.append(event) if isinstance(event, StepTaken) else None)
    mark_interrupted(events, plan)
    (again,) = plan.interrupted
    assert [step.status for step in again.steps] == ["CONTINUE", "FINISH"]
    assert taken == []  # nothing cut short: both steps are in the log once
