"""Task files, checks against the real system, and batch scoring."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from roundhouse.config import ConfigError
from roundhouse.suite.batch import BatchOptions, run_batch
from roundhouse.suite.checks import CheckContext, evaluate
from roundhouse.suite.family import SUITE
from roundhouse.suite.tasks import Check, Task, load_suite
from tests.helpers import UNREADABLE_YAML, shell_answer, write_replay

REPO = Path(__file__).parents[1]


def test_a_check_has_exactly_one_kind() -> None:
    assert Check.model_validate({"file_exists": "a"}).kind == "file_exists"
    with pytest.raises(ValueError, match="exactly one"):
        Check.model_validate({"file_exists": "a", "answer_contains": "b"})
    with pytest.raises(ValueError, match="exactly one"):
        Check.model_validate({})
    with pytest.raises(ValueError):
        Check.model_validate({"file_exits": "typo"})


def test_a_feasible_task_needs_checks_and_a_safe_id() -> None:
    with pytest.raises(ValueError, match="needs checks"):
        Task.model_validate({"id": "t", "request": "x"})
    Task.model_validate({"id": "t", "request": "x", "infeasible": True})
    with pytest.raises(ValueError):
        Task.model_validate({"id": "../etc", "request": "x", "infeasible": True})


@pytest.mark.parametrize(("raw", "why"), UNREADABLE_YAML)
def test_a_task_file_that_cannot_be_built_is_a_config_error(
    tmp_path: Path, raw: bytes, why: str
) -> None:
    task = tmp_path / "t.yaml"
    task.write_bytes(raw.replace(b"max_step", b"id"))
    with pytest.raises(ConfigError, match=rf"task file .*t\.yaml: cannot read it: .*{why}"):
        load_suite(task)


def test_a_pattern_that_does_not_compile_is_refused_when_the_task_loads() -> None:
    # It loaded, and then re.error ended the batch when the check ran.
    with pytest.raises(ValueError, match="'\\(' is not a regular expression"):
        Check.model_validate({"file_matches": {"path": "a", "pattern": "("}})


def test_placeholders_are_filled_everywhere(tmp_path: Path) -> None:
    task = Task.model_validate(
        {
            "id": "t",
            "request": "save it as {workdir}/a.txt",
            "setup": [{"run": "{python} -V"}],
            "checks": {"file_exists": "{workdir}/a.txt"},
        }
    ).resolved(tmp_path, tmp_path / "suite")
    assert task.request == f"save it as {tmp_path}/a.txt"
    assert task.setup[0].run == f"{sys.executable} -V"
    assert task.checks is not None and task.checks.file_exists == f"{tmp_path}/a.txt"


def test_a_suite_refuses_bad_files_and_duplicate_ids(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("id: same\nrequest: x\ninfeasible: true\n")
    (tmp_path / "b.yaml").write_text("id: same\nrequest: y\ninfeasible: true\n")
    with pytest.raises(ConfigError, match="'same' is in"):
        load_suite(tmp_path)
    (tmp_path / "b.yaml").write_text("id: other\nrequest: [unclosed\n")
    with pytest.raises(ConfigError, match="b.yaml"):
        load_suite(tmp_path)
    with pytest.raises(ConfigError, match="does not exist"):
        load_suite(tmp_path / "missing")


async def test_checks_read_the_real_system(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("alpha\nbeta 42\n")
    context = CheckContext(workdir=tmp_path, answer=f"The kernel is {os.uname().release}.")

    async def check(spec: dict[str, object]) -> bool:
        return (await evaluate(Check.model_validate(spec), context)).passed

    assert await check({"file_exists": "notes.txt"})
    assert not await check({"file_exists": "other.txt"})
    assert await check({"file_absent": "other.txt"})
    assert await check({"file_contains": {"path": "notes.txt", "text": "beta"}})
    assert await check({"file_matches": {"path": "notes.txt", "pattern": r"^beta \d+$"}})
    assert not await check({"file_contains": {"path": "missing.txt", "text": "x"}})
    assert await check({"command": {"run": "grep -c beta notes.txt", "output_contains": "1"}})
    assert not await check({"command": {"run": "false"}})
    # a check command can judge the answer itself, through RH_ANSWER
    assert await check(
        {"command": {"run": 'case "$RH_ANSWER" in *kernel*) true;; *) false;; esac'}}
    )
    assert await check({"answer_contains_output_of": "uname -r"})
    assert not await check({"answer_contains_output_of": "true"})  # no output proves nothing
    assert not await check({"window_title": "x"})  # no desktop: cannot check, so not passed
    combined = await evaluate(
        Check.model_validate(
            {
                "all": [
                    {"file_exists": "notes.txt"},
                    {"any": [{"file_exists": "nope"}, {"answer_contains": "KERNEL"}]},
                ]
            }
        ),
        context,
    )
    assert combined.passed and (combined.leaves_passed, combined.leaves_total) == (2, 3)


async def test_a_check_of_the_system_waits_for_it_to_catch_up_and_no_longer(
    tmp_path: Path,
) -> None:
    """A file the application writes a moment after the round ended (LibreOffice after its
    Save dialog closed) passes; what never comes fails once the settle time is over, and
    the answer is judged at once."""
    check = Check.model_validate({"file_contains": {"path": "late.txt", "text": "saved"}})

    async def write_late() -> None:
        await asyncio.sleep(1.0)
        (tmp_path / "late.txt").write_text("saved")

    at_once = await evaluate(check, CheckContext(workdir=tmp_path, answer=""))
    assert not at_once.passed
    writer = asyncio.create_task(write_late())
    settled = await evaluate(check, CheckContext(workdir=tmp_path, answer="", settle=5.0))
    await writer
    assert settled.passed
    never = Check.model_validate({"file_exists": "never.txt"})
    started = time.monotonic()
    waited = await evaluate(never, CheckContext(workdir=tmp_path, answer="", settle=1.0))
    assert not waited.passed and 1.0 <= time.monotonic() - started < 5.0
    answer = Check.model_validate({"answer_contains": "yes"})
    started = time.monotonic()
    judged = await evaluate(answer, CheckContext(workdir=tmp_path, answer="no", settle=30.0))
    assert not judged.passed and time.monotonic() - started < 5.0


def _suite(folder: Path, tasks: dict[str, tuple[str, list[object]]]) -> Path:
    folder.mkdir()
    for name, (spec, answers) in tasks.items():
        (folder / f"{name}.yaml").write_text(spec)
        write_replay(folder / f"{name}.answers.json", answers)
    return folder


async def test_scoring_rewards_only_what_the_system_shows(tmp_path: Path) -> None:
    always_fails = [shell_answer("FAIL", result="I give up")]
    suite = _suite(
        tmp_path / "suite",
        {
            "made": (
                "id: made\nrequest: make a file\n"
                "checks: {file_contains: {path: out.txt, text: hi}}\n",
                [
                    shell_answer("CONTINUE", "echo hi > out.txt"),
                    shell_answer("FINISH", result="made"),
                ],
            ),
            "claims": (  # says FINISH but made nothing: the checks decide
                "id: claims\nrequest: make a file\nchecks: {file_exists: out.txt}\n",
                [shell_answer("FINISH", result="made it, trust me")],
            ),
            "gives-up": (  # an agent that always fails scores nothing on a feasible task
                "id: gives-up\nrequest: make a file\nchecks: {file_absent: out.txt}\n",
                always_fails,
            ),
            "impossible": (
                "id: impossible\nrequest: book a flight\ninfeasible: true\n",
                always_fails,
            ),
            "impossible-done": (
                "id: impossible-done\nrequest: book a flight\ninfeasible: true\n",
                [shell_answer("FINISH", result="booked!")],
            ),
        },
    )
    results = await run_batch(
        SUITE.load(suite), BatchOptions(out=tmp_path / "out", model="replay", workers=2)
    )
    passed = {r.task: r.passed for r in results}
    assert passed == {
        "made": True,
        "claims": False,
        "gives-up": False,
        "impossible": True,
        "impossible-done": False,
    }
    rows = json.loads((tmp_path / "out" / "results.json").read_text())
    assert {row["task"] for row in rows} == set(passed)
    made = next(row for row in rows if row["task"] == "made")
    assert (made["checks_passed"], made["checks_total"], made["steps"]) == (1, 1, 2)
    reasons = {row["task"]: row["reason"] for row in rows}
    assert reasons["gives-up"] == "ended FAIL: I give up"  # the round's own word on why
    assert reasons["claims"].startswith("ended FINISH; FAIL file_exists")
    assert (tmp_path / "out" / "work" / "made" / "out.txt").read_text() == "hi\n"
    assert "task,passed,status" in (tmp_path / "out" / "results.csv").read_text()


def test_the_batch_command_exits_1_when_a_task_fails(tmp_path: Path) -> None:
    suite = _suite(
        tmp_path / "suite",
        {
            "ok": (
                "id: ok\nrequest: x\ninfeasible: true\n",
                [shell_answer("FAIL", result="cannot")],
            ),
            "bad": (
                "id: bad\nrequest: x\nchecks: {file_exists: nothing}\n",
                [shell_answer("FINISH", result="ok")],
            ),
        },
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("ROUNDHOUSE_")}
    done = subprocess.run(
        [sys.executable, "-m", "roundhouse", "batch", str(suite), "--out", str(tmp_path / "R")],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=tmp_path,
    )
    assert done.returncode == 1
    assert "[2/2]" in done.stderr
    assert "1 passed, 1 failed" in done.stdout


async def test_batch_record_refuses_answers_quoting_the_users_home(tmp_path: Path) -> None:
    """Paths in a suite's answers are held by placeholders; the user's own home folder
    left in one would be this machine's fact on every other."""
    home = str(Path.home())
    leaking = [shell_answer("FINISH", result=f"Saved it in {home}/private.")]
    suite = _suite(
        tmp_path / "suite",
        {"leak": ("id: leak\nrequest: x\ninfeasible: true\n", leaking)},
    )
    before = (suite / "leak.answers.json").read_text()
    options = BatchOptions(out=tmp_path / "out", model="replay", workers=1, record=True)
    [row] = await run_batch(SUITE.load(suite), options)
    assert (row.passed, row.status) == (False, "ERROR")
    assert "quote the home folder" in row.reason and "was not written" in row.reason
    assert (suite / "leak.answers.json").read_text() == before


# Another machine, as the suite's commands see it: shims early on PATH print its facts
# for the arguments the planner and the checks use; anything else goes to the real command.
ELSEWHERE = {
    "uname": {"-r": "5.4.0-999-elsewhere"},
    "hostname": {"": "elsewhere-7"},
    "id": {"-un": "someone"},
    "nproc": {"": "13"},
    "uptime": {"-p": "up 3 weeks, 2 days, 4 hours, 7 minutes"},
    "free": {
        "-h": "               total        used        free      shared  buff/cache   available\n"
        "Mem:            61Gi       9.5Gi        40Gi       1.0Mi        12Gi        51Gi\n"
        "Swap:             0B          0B          0B",
    },
    "df": {
        "-hP -- /": "Filesystem      Size  Used Avail Capacity Mounted on\n"
        "/dev/vdb1       1.9T  1.2T  689G      64% /",
        "-B1 --output=avail /": "Avail\n739802005504",  # 689 GiB
    },
}


def another_machine(folder: Path) -> str:
    """A PATH on which this machine looks like another one."""
    folder.mkdir()
    for name, answers in ELSEWHERE.items():
        real = shutil.which(name)
        assert real is not None, f"{name} is not installed"
        cases = "".join(
            f"  {shlex.quote(arguments)}) printf '%s\\n' {shlex.quote(prints)} ;;\n"
            for arguments, prints in answers.items()
        )
        script = folder / name
        script.write_text(f'#!/bin/sh\ncase "$*" in\n{cases}  *) exec {real} "$@" ;;\nesac\n')
        script.chmod(0o755)
    return f"{folder}:{os.environ['PATH']}"


def steps_taken(log_dir: Path) -> list[str]:
    """A failed task's actions, each with what it was seen to do: the log a CI run loses
    with its temporary folder, kept in the assertion's message."""
    taken = []
    with contextlib.suppress(OSError):
        for line in (log_dir / "response.log").read_text().splitlines():
            step = json.loads(line)
            for action in step["actions"]:
                result = action["result"] or {}
                said = result.get("result") if isinstance(result.get("result"), dict) else {}
                seen = said.get("seen") or said.get("effect") or result.get("error")
                taken.append(f"{step['agent']} {action['function']}: {seen}"[:200])
    return taken


def test_the_shipped_suite_passes_under_replay_on_another_machine(tmp_path: Path) -> None:
    """The acceptance: every task of tasks/basic, GUI ones included, replays its recorded
    answers on a machine whose facts differ from the one they were recorded on."""
    tasks = load_suite(REPO / "tasks" / "basic")
    assert len(tasks) >= 20
    assert {t.task.agent for t in tasks} == {"linux", "host"}
    env = {k: v for k, v in os.environ.items() if not k.startswith("ROUNDHOUSE_")}
    env["PATH"] = another_machine(tmp_path / "elsewhere")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "roundhouse",
            "batch",
            str(REPO / "tasks" / "basic"),
            "--workers",
            "2",
            "--model",
            "replay",
            "--out",
            str(tmp_path / "R"),
        ],
        capture_output=True,
        text=True,
        timeout=900,
        env=env,
        cwd=tmp_path,
    )
    rows = {row["task"]: row for row in json.loads((tmp_path / "R" / "results.json").read_text())}
    failed = [
        (task, row["reason"], steps_taken(Path(row["log_dir"])))
        for task, row in rows.items()
        if not row["passed"]
    ]
    assert failed == [] and done.returncode == 0, (failed, done.stderr[-2000:])
    said = {task: row["answer"] for task, row in rows.items()}
    assert said["shell-kernel"] == "The kernel version is 5.4.0-999-elsewhere."
    assert said["shell-hostname"] == "The hostname is elsewhere-7."
    assert said["shell-whoami"] == "You are someone."
    assert said["shell-cpus"] == "There are 13 CPUs."
    assert said["shell-disk-free"] == "689G free of 1.9T on / (1.2T used, 64%)."
    assert said["shell-memory"] == "51Gi of memory available out of 61Gi (40Gi completely unused)."
    assert said["shell-uptime"] == "The machine has been up 3 weeks, 2 days, 4 hours, 7 minutes."


def test_an_x11_only_task_is_not_run_on_a_wayland_session_and_its_row_says_why(
    tmp_path: Path,
) -> None:
    """xterm is an X11 program: on a sway session its task is not started (no desktop, no
    steps), its row is NOT RUNNABLE with the task's reason, and the summary counts it apart
    from the failures."""
    suite = _suite(
        tmp_path / "suite",
        {
            "xterm": (
                "id: xterm\nagent: host\nrequest: open xterm\nx11_only: an X11 program\n"
                "checks: {file_exists: made}\n",
                [shell_answer("FINISH", result="ok")],
            ),
        },
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("ROUNDHOUSE_")}
    done = subprocess.run(
        [sys.executable, "-m", "roundhouse", "batch", str(suite), "--session", "sway"]
        + ["--out", str(tmp_path / "R")],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=tmp_path,
    )
    (row,) = json.loads((tmp_path / "R" / "results.json").read_text())
    assert row["status"] == "NOT RUNNABLE" and row["steps"] == 0 and not row["passed"]
    assert row["reason"] == "not runnable on sway: X11 only (an X11 program)"
    assert "0 passed, 0 failed, 1 not runnable here" in done.stdout
    assert done.returncode == 1  # not passed: the batch says so
