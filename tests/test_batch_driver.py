"""What the batch driver does the same on every executor (shown on the local one): resume,
retries of a task whose runner died, results written whole after every task, whatever the
task's family (each item runs itself); the families, and what their items read; and the
bundles that carry files and logs between machines."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tarfile
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import pytest

from roundhouse.osworld.family import OSWORLD
from roundhouse.suite import bundle
from roundhouse.suite.attempt import AttemptOptions
from roundhouse.suite.batch import BatchOptions, Family, run_batch
from roundhouse.suite.family import SUITE
from roundhouse.suite.results import TaskResult, read_results
from tests.helpers import shell_answer, write_replay


def _task(folder: Path, task: str, answers: list[object], checks: str = "") -> None:
    folder.mkdir(exist_ok=True)
    body = f"id: {task}\nrequest: x\n" + (checks or "infeasible: true\n")
    (folder / f"{task}.yaml").write_text(body)
    write_replay(folder / f"{task}.answers.json", answers)


def _row(task: str, reason: str) -> TaskResult:
    return TaskResult(task, True, "FINISH", 1, 1, 2, 0.5, 0, 0, 0.0, "", reason, "")


async def test_resume_skips_tasks_with_a_row_and_keeps_them(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    for task in ("a", "b", "c"):
        _task(suite, task, [shell_answer("FAIL", result="cannot")])
    out = tmp_path / "R"
    out.mkdir()
    kept = _row("b", "from the run that was killed")
    (out / "results.json").write_text(json.dumps([asdict(kept)]))
    seen: list[str] = []
    options = BatchOptions(out=out, model="replay", resume=True)
    results = await run_batch(SUITE.load(suite), options, lambda r, d, t: seen.append(r.task))
    assert sorted(seen) == ["a", "c"]  # b was not run again
    assert [r.task for r in results] == ["a", "b", "c"]  # in the suite's order
    assert read_results(out)[1] == kept
    assert all(r.passed for r in results)


async def test_a_run_killed_by_a_signal_is_retried_and_says_why(tmp_path: Path) -> None:
    """The first attempt's `roundhouse run` is SIGKILLed (by its own shell command); the
    second passes, and the row names the first and why."""
    flag = tmp_path / "killed-once"
    suite = tmp_path / "suite"
    kill_once = f"test -e {flag} || {{ touch {flag}; kill -9 $PPID; sleep 5; }}"
    _task(
        suite,
        "flaky",
        [shell_answer("CONTINUE", kill_once), shell_answer("FINISH", result="done")],
        checks="checks: {answer_contains: done}\n",
    )
    _task(suite, "doomed", [shell_answer("CONTINUE", "kill -9 $PPID; sleep 5")])
    options = BatchOptions(out=tmp_path / "R", model="replay", retries=1)
    results = {r.task: r for r in await run_batch(SUITE.load(suite), options)}
    flaky = results["flaky"]
    assert (flaky.passed, flaky.attempts) == (True, 2)
    assert "attempt 1 on " in flaky.retried and "killed by SIGKILL" in flaky.retried
    doomed = results["doomed"]  # lost on every attempt: it says so, and is not run a third time
    assert (doomed.passed, doomed.status, doomed.attempts) == (False, "KILLED", 2)


async def test_results_are_written_whole_after_every_task(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    for task in ("a", "b"):
        _task(suite, task, [shell_answer("FAIL", result="cannot")])
    out = tmp_path / "R"
    written: list[list[str]] = []

    def progress(result: TaskResult, done: int, total: int) -> None:
        written.append([row["task"] for row in json.loads((out / "results.json").read_text())])
        assert f"{result.task}," in (out / "results.csv").read_text()

    await run_batch(SUITE.load(suite), BatchOptions(out=out, model="replay"), progress)
    assert [len(rows) for rows in written] == [1, 2]
    assert not list(out.glob(".*.part"))


def test_the_local_executor_does_not_import_ray(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    _task(suite, "a", [shell_answer("FAIL", result="cannot")])
    script = (
        "import sys\nfrom roundhouse.cli import main\n"
        f"sys.argv = ['roundhouse', 'batch', {str(suite)!r}, '--out', {str(tmp_path / 'R')!r}]\n"
        "try:\n    main()\nexcept SystemExit as end:\n    print('exit', end.code)\n"
        "print('ray imported:', 'ray' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert "exit 0" in done.stdout and "ray imported: False" in done.stdout, done.stderr


def test_bundles_round_trip_and_refuse_to_leave_their_folder(tmp_path: Path) -> None:
    source = tmp_path / "src"
    (source / "checks").mkdir(parents=True)
    (source / "a.yaml").write_text("id: a\n")
    (source / "checks" / "x.py").write_text("print(1)\n")
    os.symlink("/etc/passwd", source / "link")  # links are not followed, nor sent
    files = bundle.folder_files(source)
    assert files == ["a.yaml", "checks/x.py"]
    bundle.unpack(bundle.pack(source), tmp_path / "copy")
    assert bundle.digest(tmp_path / "copy", files) == bundle.digest(source, files)
    assert not (tmp_path / "copy" / "link").exists()

    for name, kind in (("../escape", tarfile.REGTYPE), ("/abs", tarfile.REGTYPE)):
        with pytest.raises(bundle.BundleError, match="outside"):
            bundle.unpack(_tar(name, kind), tmp_path / "bad")
    with pytest.raises(bundle.BundleError, match="not a plain file"):
        bundle.unpack(_tar("dev", tarfile.SYMTYPE), tmp_path / "bad")
    assert not (tmp_path / "bad").exists() and not (tmp_path / "escape").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def _tar(name: str, kind: bytes) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        member = tarfile.TarInfo(name)
        member.type = kind
        member.linkname = "/etc/passwd" if kind == tarfile.SYMTYPE else ""
        tar.addfile(member, io.BytesIO(b""))
    return buffer.getvalue()


async def test_the_benches_run_their_two_sides_in_turns_who_goes_first_alternating(
    tmp_path: Path,
) -> None:
    from roundhouse.bench.batch import in_turns

    ran: list[tuple[str, list[object], str]] = []

    async def run(side: str, chunk: list[object], out: Path) -> list[TaskResult]:
        ran.append((side, list(chunk), out.relative_to(tmp_path).as_posix()))
        return [_row(f"{side}-{item}", "") for item in chunk]

    rows = await in_turns([1, 2, 3, 4, 5], 2, ("local", "ray"), tmp_path, run)
    assert ran == [
        ("local", [1, 2], "local/round-0"),
        ("ray", [1, 2], "ray/round-0"),
        ("ray", [3, 4], "ray/round-1"),
        ("local", [3, 4], "local/round-1"),
        ("local", [5], "local/round-2"),
        ("ray", [5], "ray/round-2"),
    ]
    assert [row.task for row in rows["ray"]] == [f"ray-{n}" for n in range(1, 6)]


async def test_the_batch_bench_suite_passes_and_is_summarised(tmp_path: Path) -> None:
    from roundhouse.bench.batch import summarise, write_suite

    gui = write_suite(tmp_path / "suite", shell=2, gui=0)
    rows = await run_batch(
        SUITE.load(tmp_path / "suite"), BatchOptions(out=tmp_path / "R", model="replay")
    )
    assert gui == set() and [r.passed for r in rows] == [True, True], rows
    run = summarise("local", rows, gui, wall=30.0, start=0.0)
    assert (run.tasks, run.passed, run.tasks_per_minute) == (2, 2, 4.0)
    assert run.shell_overhead_median is not None and run.shell_overhead_median >= 0
    assert run.gui_seconds_median is None and run.failed == []


@dataclass(frozen=True)
class _Named:
    id: str


@dataclass(frozen=True)
class _Counting:
    """A batch item of a family the driver has never heard of: it runs itself."""

    task: _Named
    runs: list[str]
    on_desktop: bool = False

    def reads(self, options: AttemptOptions) -> list[Path]:
        return []

    def moved(self, place: Callable[[Path], Path]) -> _Counting:
        return self

    async def attempt(self, options: AttemptOptions) -> TaskResult:
        self.runs.append(self.task.id)
        return _row(self.task.id, f"ran with model {options.model}")


async def test_the_driver_runs_any_item_that_runs_itself(tmp_path: Path) -> None:
    runs: list[str] = []
    items = [_Counting(_Named(name), runs) for name in ("x", "y")]
    rows = await run_batch(items, BatchOptions(out=tmp_path / "R", model="m"))
    assert sorted(runs) == ["x", "y"]
    assert [(r.task, r.reason) for r in rows] == [(n, "ran with model m") for n in ("x", "y")]


def test_each_family_recognises_its_task_files_and_says_what_they_read(tmp_path: Path) -> None:
    from roundhouse.cli.batch import FAMILIES
    from tests.osworld.conftest import EXAMPLES

    def family(path: Path) -> Family:
        return next(f for f in FAMILIES if f.recognises(path))

    basic = Path(__file__).parents[1] / "tasks" / "basic"
    assert family(EXAMPLES) is OSWORLD and family(EXAMPLES / "test_all.json") is OSWORLD
    assert family(basic) is SUITE and family(basic / "shell-os.yaml") is SUITE
    options = AttemptOptions(out=tmp_path, model="replay", files=EXAMPLES / "files",
                             answers=EXAMPLES / "answers")  # fmt: skip
    items = {item.task.id: item for item in OSWORLD.load(EXAMPLES)}
    compare = items["rh-os-compare"]
    assert compare.on_desktop and items["rh-os-bluetooth"].on_desktop
    read = compare.reads(options)  # its file, its answers, the dataset's file it downloads
    assert compare.found.path.resolve() in read
    assert EXAMPLES / "answers" / "rh-os-compare.answers.json" in read
    assert any(path.name == "original.txt" for path in read)
    moved = compare.moved(lambda path: tmp_path / path.name)
    assert moved.found.path == tmp_path / "rh-os-compare.json" and moved.task == compare.task
    [shell] = SUITE.load(basic / "shell-os.yaml")  # alone: its file and its answers only
    assert not shell.on_desktop
    assert [p.name for p in shell.reads(options)] == ["shell-os.yaml", "shell-os.answers.json"]
    whole = {item.task.id: item for item in SUITE.load(basic)}["gedit-type-save"]
    assert whole.on_desktop and len(whole.reads(options)) == len(bundle.folder_files(basic))
