"""The offline planner against the real shell, its answers checked against the system."""

from __future__ import annotations

import os
import platform
import re
import shutil
import socket
from pathlib import Path

import pytest

from roundhouse.core.states import RoundState
from roundhouse.models.offline.intents import understand
from tests.helpers import SessionFactory


async def ask(make_session: SessionFactory, request: str) -> str:
    session = await make_session(model="offline")
    outcome = await session.run_round(request)
    assert outcome.state is RoundState.FINISH, outcome.result
    assert outcome.result is not None
    return outcome.result


def size(text: str, pattern: str) -> tuple[float, float]:
    """The size SIZE in `pattern` as df -h and free -h print it ("78G", "7.8G", "23Gi"), in
    bytes, and how much its rounding may hide (one unit of its last digit)."""
    number = r"(\d+(?:\.(\d))?)([KMGT])i?"
    match = re.search(pattern.replace("SIZE", number), text)
    assert match, text
    unit = 1024 ** ("KMGT".index(match.group(3)) + 1)
    return float(match.group(1)) * unit, unit / 10 if match.group(2) else unit


def minutes_up(text: str) -> int:
    """uptime -p's words ("up 2 weeks, 1 day, 3 hours, 4 minutes") in minutes."""
    scale = {"week": 7 * 24 * 60, "day": 24 * 60, "hour": 60, "minute": 1}
    found = re.findall(r"(\d+) (week|day|hour|minute)s?", text)
    assert found, text
    return sum(int(count) * scale[unit] for count, unit in found)


async def test_list_files_names_real_files(make_session: SessionFactory, tmp_path: Path) -> None:
    for name in ("alpha.txt", "beta.log", ".hidden"):
        (tmp_path / name).write_text("x")
    answer = await ask(make_session, f"list the files in {tmp_path}")
    for name in ("alpha.txt", "beta.log", ".hidden"):
        assert name in answer
    answer = await ask(make_session, "list the files in /etc")
    real = set(os.listdir("/etc"))
    assert answer.startswith(f"{len(real)} entries in /etc: ")
    listed = answer.split(": ", 1)[1].rstrip(".").split(", ")
    assert set(listed) == real


async def test_disk_free_matches_the_file_system(make_session: SessionFactory) -> None:
    answer = await ask(make_session, "how much disk space is free?")
    usage = shutil.disk_usage("/")
    free, rounding = size(answer, "SIZE free")
    assert free == pytest.approx(usage.free, rel=0.02, abs=rounding)
    total, rounding = size(answer, "SIZE on /")
    assert total == pytest.approx(usage.total, rel=0.02, abs=rounding)


async def test_memory_free_matches_proc_meminfo(make_session: SessionFactory) -> None:
    answer = await ask(make_session, "how much memory is free")
    total_kb = int(re.search(r"MemTotal:\s+(\d+)", Path("/proc/meminfo").read_text()).group(1))  # type: ignore[union-attr]
    total, rounding = size(answer, r"out of SIZE \(")
    assert total == pytest.approx(total_kb * 1024, abs=rounding)


async def test_kernel_version(make_session: SessionFactory) -> None:
    assert platform.release() in await ask(make_session, "What is the kernel version?")


async def test_operating_system(make_session: SessionFactory) -> None:
    assert platform.freedesktop_os_release()["PRETTY_NAME"] in await ask(
        make_session, "which operating system is this"
    )


async def test_hostname_user_and_cpus(make_session: SessionFactory) -> None:
    assert socket.gethostname() in await ask(make_session, "what is the hostname")
    import getpass

    assert getpass.getuser() in await ask(make_session, "who am i")
    assert f"There are {os.cpu_count()} CPUs" in await ask(make_session, "how many CPUs are there")


async def test_create_a_file(make_session: SessionFactory, tmp_path: Path) -> None:
    answer = await ask(make_session, "create a file notes.txt containing hello")
    assert (tmp_path / "notes.txt").read_text() == "hello\n"
    assert "notes.txt" in answer and "hello" in answer


async def test_the_commands_of_one_request_run_from_one_answer(
    make_session: SessionFactory, tmp_path: Path
) -> None:
    """Writing the file and reading it back need no output of each other: one model call
    runs both, where one action per call takes two."""
    calls = {}
    for most in (1, 8):
        session = await make_session(model="offline", max_actions=most, task=f"most-{most}")
        (tmp_path / "notes.txt").unlink(missing_ok=True)
        outcome = await session.run_round("create a file notes.txt containing hello")
        assert outcome.state is RoundState.FINISH, outcome.result
        steps = session.store.read_steps()
        calls[most] = sum(step.usage.requests for step in steps)
        assert [a.function for step in steps for a in step.ran] == ["run_shell", "run_shell"]
    assert calls == {1: 3, 8: 2}


async def test_create_never_overwrites(make_session: SessionFactory, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("keep me\n")
    session = await make_session(model="offline")
    outcome = await session.run_round("create a file notes.txt containing other")
    assert outcome.state is RoundState.FAIL
    assert "cannot overwrite existing file" in (outcome.result or "")
    assert (tmp_path / "notes.txt").read_text() == "keep me\n"
    # The command that failed stopped its list: the one reading the file back never ran.
    [first, _] = session.store.read_steps()
    assert [a.ran for a in first.actions] == [True, False]
    assert "exited with code 1" in (first.actions[1].not_run or "")


async def test_first_lines_contents_and_line_count(
    make_session: SessionFactory, tmp_path: Path
) -> None:
    lines = [f"line {i}" for i in range(1, 26)]
    (tmp_path / "data.txt").write_text("\n".join(lines) + "\n")
    head = await ask(make_session, "show the first lines of /etc/os-release")
    assert Path("/etc/os-release").read_text().splitlines()[0] in head
    three = await ask(make_session, "show the first 3 lines of data.txt")
    assert "line 3" in three and "line 4" not in three
    assert "data.txt has 25 lines" in await ask(make_session, "count the lines of data.txt")
    contents = await ask(make_session, "show the contents of data.txt")
    assert "line 25" in contents


async def test_exists_uptime_and_time(make_session: SessionFactory, tmp_path: Path) -> None:
    assert "Yes" in await ask(make_session, f"does {tmp_path} exist")
    assert "does not exist" in await ask(make_session, f"does {tmp_path}/nothing exist")
    answer = await ask(make_session, "what is the uptime")
    uptime = float(Path("/proc/uptime").read_text().split()[0])
    assert abs(minutes_up(answer) - uptime / 60) <= 2, answer
    assert re.search(r"It is \d{4}-\d\d-\d\d", await ask(make_session, "what time is it"))


async def test_a_failing_command_makes_the_round_fail_with_its_error(
    make_session: SessionFactory,
) -> None:
    session = await make_session(model="offline")
    outcome = await session.run_round("count the lines of /no/such/file")
    assert outcome.state is RoundState.FAIL
    assert "No such file" in (outcome.result or "")


async def test_what_it_does_not_understand_fails_and_says_what_it_does(
    make_session: SessionFactory,
) -> None:
    session = await make_session(model="offline")
    outcome = await session.run_round("book me a flight to Lisbon")
    assert outcome.state is RoundState.FAIL
    assert "list the files in DIR" in (outcome.result or "")
    assert "--model openai:" in (outcome.result or "")
    assert outcome.round_step == 1


def test_quoted_and_home_paths_are_quoted_for_bash() -> None:
    intent = understand("list the files in '~/my docs'")
    assert intent is not None
    assert intent.commands == ("ls -A1 -- \"$HOME\"/'my docs'",)
    intent = understand("list the files in ~/docs")
    assert intent is not None and intent.commands == ('ls -A1 -- "$HOME"/docs',)
    intent = understand("create a file x.txt containing $(reboot)")
    assert intent is not None and "'$(reboot)'" in intent.commands[0]
