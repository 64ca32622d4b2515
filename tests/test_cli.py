"""The command as a user runs it: a real process, real exit codes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from tests.helpers import (
    descendants_running,
    processes_running,
    read_jsonl,
    shell_answer,
    wait_for,
    write_replay,
)

ROUNDHOUSE = [sys.executable, "-m", "roundhouse"]


def roundhouse(
    *args: str, cwd: Path, stdin: str = "", timeout: float = 60, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`env`: variables set beside the inherited ones (ROUNDHOUSE_* are left out)."""
    inherited = {k: v for k, v in os.environ.items() if not k.startswith("ROUNDHOUSE_")}
    return subprocess.run(
        [*ROUNDHOUSE, *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**inherited, **(env or {})},
    )


def test_acceptance_list_etc(tmp_path: Path) -> None:
    done = roundhouse(
        "run",
        "list the files in /etc",
        "--model",
        "offline",
        "--logs",
        "L",
        "--task",
        "t",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert "FINISH" in done.stdout
    listed = done.stdout.split(" entries in /etc: ", 1)[1].split("\n", 1)[0].rstrip(".").split(", ")
    # An entry, not its target: a symlink may dangle (Debian 13's /etc/vconsole.conf points
    # at default/keyboard, which a machine without keyboard-configuration lacks).
    assert listed and all(os.path.lexists(Path("/etc") / name) for name in listed)
    lines = (tmp_path / "L" / "t" / "response.log").read_text().splitlines()
    assert len(lines) == 2 and all(json.loads(line)["round_id"] == 0 for line in lines)
    assert "Request total cost for current round is $0.00" in done.stdout
    assert f"Logs: {tmp_path / 'L' / 't'}" in done.stdout
    # the live display shows each step
    assert "step 1 [linux] CONTINUE run_shell" in done.stderr


def test_a_failed_round_exits_1(tmp_path: Path) -> None:
    done = roundhouse("run", "paint the house", "--logs", "L", cwd=tmp_path)
    assert done.returncode == 1
    assert "FAIL" in done.stdout and "offline model understands" in done.stdout


def test_an_errored_round_exits_1(tmp_path: Path) -> None:
    replay = write_replay(tmp_path / "a.json", ["garbage"] * 4)
    done = roundhouse("run", "x", "--model", f"replay:{replay}", "--logs", "L", cwd=tmp_path)
    assert done.returncode == 1
    assert "ERROR" in done.stdout and "no valid answer" in done.stdout
    assert "invalid answer from linux (try 4)" in done.stderr


def test_usage_errors_exit_2_with_a_clear_message(tmp_path: Path) -> None:
    unknown_flag = roundhouse("run", "x", "--colour", "red", cwd=tmp_path)
    assert unknown_flag.returncode == 2
    missing_replay = roundhouse(
        "run", "x", "--model", "replay:nope.yaml", "--logs", "L", cwd=tmp_path
    )
    assert missing_replay.returncode == 2
    assert "replay file nope.yaml does not exist" in missing_replay.stderr
    (tmp_path / "latin1.yaml").write_bytes(b"- caf\xe9\n")  # a replay file that is not UTF-8
    not_text = roundhouse("run", "x", "--model", "replay:latin1.yaml", "--logs", "L", cwd=tmp_path)
    assert not_text.returncode == 2
    assert "replay file latin1.yaml: cannot read it: it is not UTF-8 text" in not_text.stderr
    unknown_model = roundhouse("run", "x", "--model", "gpt5", "--logs", "L", cwd=tmp_path)
    assert unknown_model.returncode == 2 and "unknown model 'gpt5'" in unknown_model.stderr
    (tmp_path / "roundhouse.yaml").write_text("max_stepz: 3\n")
    bad_config = roundhouse("run", "x", cwd=tmp_path)
    assert bad_config.returncode == 2
    assert "roundhouse.yaml: unknown key 'max_stepz'" in bad_config.stderr


def test_non_interactive_refuses_destructive_and_yes_allows(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.mkdir()
    answers = [shell_answer("CONTINUE", f"rm -rf {victim}"), shell_answer("FINISH", result="done")]
    refused = roundhouse(
        "run",
        "delete",
        "--model",
        f"replay:{write_replay(tmp_path / 'a.json', answers)}",
        "--logs",
        "L",
        cwd=tmp_path,
    )
    assert victim.exists()
    assert "not interactive" in refused.stderr
    allowed = roundhouse(
        "run",
        "delete",
        "--yes",
        "--model",
        f"replay:{write_replay(tmp_path / 'b.json', answers)}",
        "--logs",
        "L",
        cwd=tmp_path,
    )
    assert allowed.returncode == 0
    assert not victim.exists()


def test_chat_runs_a_round_per_line_until_end_of_input(tmp_path: Path) -> None:
    done = roundhouse(
        "chat",
        "--logs",
        "L",
        "--task",
        "c",
        cwd=tmp_path,
        stdin="what is the kernel version\n\nwho am i\n",
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("FINISH") == 2
    assert os.uname().release in done.stdout
    rounds = read_jsonl(tmp_path / "L" / "c" / "rounds.jsonl")
    assert {r["id"] for r in rounds} == {0, 1}
    assert "this session is $0.00" in done.stdout


def test_help_lists_the_commands(tmp_path: Path) -> None:
    """In the order a newcomer needs them: run, chat, serve, doctor and desktop first (the
    desktop group among them, not after every command), the benchmarks last."""
    done = roundhouse("--help", cwd=tmp_path)
    assert done.returncode == 0
    listed = [
        line.strip("│ ").split()[0]
        for line in done.stdout.splitlines()
        if line.startswith("│ ") and line[2:3].isalpha()
    ]
    assert listed[:5] == ["run", "chat", "serve", "doctor", "desktop"], listed
    assert listed[-1] == "bench"
    assert {"resume", "batch", "report", "tree", "windows", "screenshot", "osworld"} <= set(listed)
    run_help = roundhouse("run", "--help", cwd=tmp_path)
    assert "--model" in run_help.stdout and "--max-step" in run_help.stdout
    assert "--max-cost" in run_help.stdout


def test_the_limits_are_flags_of_run_chat_and_resume(tmp_path: Path) -> None:
    for command in ("run", "chat", "resume"):
        shown = roundhouse(command, "--help", cwd=tmp_path, env={"COLUMNS": "200"}).stdout
        for flag in ("--max-cost", "--max-requests", "--max-tokens"):
            assert flag in shown, f"{command} has no {flag}"
    paid = {"usage": {"input_tokens": 100, "output_tokens": 50}}
    answers = [{"answer": shell_answer("CONTINUE", "true"), **paid}] * 3
    replay = write_replay(tmp_path / "a.json", answers)
    model = f"replay:{replay}"
    done = roundhouse(
        "run", "loop", "--model", model, "--agent", "linux", "--max-tokens", "200", cwd=tmp_path
    )
    assert done.returncode == 1
    assert "FAIL: max_tokens reached: 300 tokens of 200" in done.stdout
    done = roundhouse(
        "run", "loop", "--model", model, "--agent", "linux", "--max-requests", "1", cwd=tmp_path
    )
    assert "FAIL: max_requests reached: 1 request of 1" in done.stdout


def test_each_command_of_the_list_reads_as_written(tmp_path: Path) -> None:
    """A docstring's line breaks do not cut a command's summary in the middle of a
    sentence: on a wide terminal each summary is one line."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ROUNDHOUSE_")}
    done = subprocess.run(
        [*ROUNDHOUSE, "--help"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        env={**env, "COLUMNS": "400"},
    )
    lines = [" ".join(line.strip("│ ").split()) for line in done.stdout.splitlines()]
    batch = next(line for line in lines if line.startswith("batch "))
    said = "and check the results against the real system. Writes OUT/results.json and "
    assert batch.endswith(said + "OUT/results.csv after every finished task.")
    resume = next(line for line in lines if line.startswith("resume "))
    assert resume.endswith("blackboard and cost are restored.")


def test_ctrl_c_marks_the_round_cancelled_and_keeps_the_logs(tmp_path: Path) -> None:
    answers = [shell_answer("CONTINUE", "echo started"), shell_answer("CONTINUE", "sleep 61.25")]
    replay = write_replay(tmp_path / "a.json", answers)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ROUNDHOUSE_")}
    args = [*ROUNDHOUSE, "run", "wait", "--model", f"replay:{replay}", "--logs", "L", "--task", "k"]
    process = subprocess.Popen(
        args,
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    log = tmp_path / "L" / "k" / "response.log"
    wait_for(lambda: log.exists() and log.read_text().strip(), "the first step in the log")
    wait_for(lambda: descendants_running(process.pid, "sleep\x0061.25"), "the second command")
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=30)
    assert process.returncode == 130, stderr
    assert "cancelled" in stderr
    rounds = read_jsonl(tmp_path / "L" / "k" / "rounds.jsonl")
    assert rounds[-1]["record_state"] == "cancelled"
    steps = read_jsonl(log)  # the finished step, and the one Ctrl-C cut short, saying so
    assert [(s["status"], s["error"]) for s in steps] == [
        ("CONTINUE", None),
        (None, "cancelled by the user"),
    ]
    assert not processes_running("sleep\x0061.25"), "the cancelled command outlived the round"
