"""`roundhouse bench batch`: the cost of running tasks through each executor, measured in one
run on this machine — the same generated suite (N shell tasks and a few GUI tasks, under
replay) through the local executor, then through a Ray instance started here.

Per task, `seconds` is the attempt's wall time on the machine that ran it and `run_seconds`
the part its `roundhouse run` process took (the round itself, with the interpreter's
start); the difference is the executor's overhead: the desktop, setup and checks, and on
Ray the scheduling, the suite and the logs shipped as bytes. Throughput is tasks per
minute of the whole batch (Ray's own start is reported apart). The executors take turns,
a round of 20 tasks each, so that load from other processes falls on both alike.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Annotated, Any

import typer
import yaml

from roundhouse.bench.app import bench_app
from roundhouse.bench.tree import SOURCE_TREE
from roundhouse.config import read_yaml
from roundhouse.suite.batch import BatchOptions, Executor, run_batch
from roundhouse.suite.family import SuiteItem
from roundhouse.suite.family import load as load_suite
from roundhouse.suite.results import TaskResult

GUI_TEMPLATE = "gedit-type-save"  # a GUI task of tasks/basic, with its recorded answers
ROUND = 20  # tasks each executor runs before the other takes its turn


@dataclass(frozen=True)
class ExecutorRun:
    executor: str
    tasks: int
    passed: int
    wall_seconds: float
    start_seconds: float  # bringing the executor up (Ray's start), not in the wall time
    tasks_per_minute: float
    shell_seconds_median: float | None
    shell_overhead_median: float | None  # seconds minus run_seconds
    gui_seconds_median: float | None
    gui_overhead_median: float | None
    failed: list[str]  # "task: reason" of the first few that did not pass


async def in_turns(
    items: Sequence[SuiteItem],
    size: int,
    sides: tuple[str, str],
    root: Path,
    run: Callable[[str, Sequence[SuiteItem], Path], Awaitable[list[TaskResult]]],
    so_far: Callable[[], str] = lambda: "done",
) -> dict[str, list[TaskResult]]:
    """Each side's rows of `items`, run in rounds of `size`, both sides a round, who goes
    first alternating: the load other processes put on the machine drifts, and must fall on
    both alike. `run(side, round, out)` runs one side's round with its results in `out`
    (root/side/round-N); a line on stderr after each round says `so_far()`."""
    rows: dict[str, list[TaskResult]] = {side: [] for side in sides}
    rounds = [items[n : n + size] for n in range(0, len(items), size)]
    for number, chunk in enumerate(rounds):
        for side in sides if number % 2 == 0 else sides[::-1]:
            rows[side] += await run(side, chunk, root / side / f"round-{number}")
        typer.echo(f"round {number + 1}/{len(rounds)}: {so_far()}", err=True)
    return rows


def summarise(
    executor: str, rows: list[TaskResult], gui: set[str], wall: float, start: float
) -> ExecutorRun:
    """Pure: the figures of one executor's run."""

    def median(values: list[float]) -> float | None:
        return round(statistics.median(values), 2) if values else None

    shell_rows = [r for r in rows if r.task not in gui]
    gui_rows = [r for r in rows if r.task in gui]
    return ExecutorRun(
        executor=executor,
        tasks=len(rows),
        passed=sum(r.passed for r in rows),
        wall_seconds=round(wall, 1),
        start_seconds=round(start, 1),
        tasks_per_minute=round(60 * len(rows) / wall, 1) if wall > 0 else 0.0,
        shell_seconds_median=median([r.seconds for r in shell_rows]),
        shell_overhead_median=median([r.seconds - r.run_seconds for r in shell_rows]),
        gui_seconds_median=median([r.seconds for r in gui_rows]),
        gui_overhead_median=median([r.seconds - r.run_seconds for r in gui_rows]),
        failed=[f"{r.task}: {r.status}, {r.reason[:200]}" for r in rows if not r.passed][:5],
    )


def ratio(ray: float | None, local: float | None) -> float | None:
    return round(ray / local, 2) if ray is not None and local else None


def difference(ray: float | None, local: float | None) -> float | None:
    return round(ray - local, 2) if ray is not None and local is not None else None


def write_suite(folder: Path, shell: int, gui: int) -> set[str]:
    """N shell tasks (write a file, answer from it) and `gui` copies of the GUI template;
    the GUI tasks' ids."""
    folder.mkdir(parents=True)
    for n in range(shell):
        task = f"shell-{n:05d}"
        (folder / f"{task}.yaml").write_text(
            f"id: {task}\nrequest: write {n} to n.txt and say it\n"
            f"checks: {{all: [{{file_contains: {{path: n.txt, text: '{n}'}}}}, "
            f"{{answer_contains: 'wrote {n}'}}]}}\n"
        )
        answers = [
            _linux_answer("CONTINUE", f"echo {n} > n.txt && cat n.txt"),
            _linux_answer("FINISH", result="I wrote {{step 1 line 1}} to n.txt."),
        ]
        (folder / f"{task}.answers.json").write_text(json.dumps(answers))
    template = SOURCE_TREE / "tasks" / "basic"
    spec = read_yaml(template / f"{GUI_TEMPLATE}.yaml", "the shipped suite's GUI task")
    ids = set()
    for n in range(gui):
        task = f"gui-{n:03d}"
        (folder / f"{task}.yaml").write_text(yaml.safe_dump({**spec, "id": task}))
        shutil.copy(template / f"{GUI_TEMPLATE}.answers.json", folder / f"{task}.answers.json")
        ids.add(task)
    return ids


def _linux_answer(status: str, command: str | None = None, result: str = "") -> dict[str, Any]:
    return {
        "observation": "seen",
        "thought": "next",
        "action": {
            "function": "run_shell" if command else None,
            "arguments": {"command": command} if command else {},
            "status": status,
        },
        "plan": [],
        "result": result,
    }


@bench_app.command("batch")
def batch(
    tasks: Annotated[int, typer.Option("--tasks", min=1, help="Shell tasks")] = 200,
    gui: Annotated[int, typer.Option("--gui", min=0, help="GUI tasks (gedit)")] = 3,
    workers: Annotated[
        int | None, typer.Option(min=1, help="Tasks at once; Ray's CPUs (default: cores)")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object")] = False,
) -> None:
    """Throughput and per-task overhead of the local and the Ray executor, in one run."""
    if gui and not (SOURCE_TREE / "tasks" / "basic" / f"{GUI_TEMPLATE}.yaml").is_file():
        raise typer.BadParameter("GUI tasks are copied from tasks/basic: run from the source tree")
    cpus = workers or os.cpu_count() or 1
    with tempfile.TemporaryDirectory(prefix="rh-bench-batch-") as scratch:
        root = Path(scratch)
        gui_ids = write_suite(root / "suite", tasks, gui)
        suite = load_suite(root / "suite")
        typer.echo(f"{len(suite)} tasks ({tasks} shell, {gui} GUI), {cpus} at once", err=True)
        local, ray = _measure_both(suite, root, cpus, gui_ids)
    report = {
        "local": asdict(local),
        "ray": asdict(ray),
        "ray_over_local": {
            "tasks_per_minute": ratio(ray.tasks_per_minute, local.tasks_per_minute),
            "shell_overhead_median": ratio(ray.shell_overhead_median, local.shell_overhead_median),
            "gui_overhead_median": ratio(ray.gui_overhead_median, local.gui_overhead_median),
        },
        # A ratio says little when the local overhead is near nothing: the seconds Ray adds.
        "ray_minus_local": {
            "shell_overhead_median": difference(
                ray.shell_overhead_median, local.shell_overhead_median
            ),
            "gui_overhead_median": difference(ray.gui_overhead_median, local.gui_overhead_median),
        },
        "cpus": cpus,
    }
    typer.echo(json.dumps(report, indent=2) if as_json else render(report))


def _measure_both(
    suite: list[SuiteItem], root: Path, cpus: int, gui_ids: set[str]
) -> tuple[ExecutorRun, ExecutorRun]:
    from roundhouse.suite.ray_executor import RayExecutor, RaySettings  # ray only here

    options = BatchOptions(out=root / "ray", model="replay", workers=cpus)
    ray = RayExecutor(options, RaySettings(cpus=cpus), suite)
    began = time.monotonic()
    offered = ray.start()
    start = time.monotonic() - began
    typer.echo(f"ray: {offered} (up in {start:.1f} s)", err=True)
    try:
        return asyncio.run(_interleaved(suite, root, cpus, ray, gui_ids, start))
    finally:
        ray.close()


async def _interleaved(
    suite: list[SuiteItem],
    root: Path,
    cpus: int,
    ray: Executor,
    gui_ids: set[str],
    start: float,
) -> tuple[ExecutorRun, ExecutorRun]:
    """The suite in rounds, each run by both executors (in_turns)."""
    executors: dict[str, Executor | None] = {"local": None, "ray": ray}
    walls = dict.fromkeys(executors, 0.0)

    async def run(name: str, chunk: Sequence[SuiteItem], out: Path) -> list[TaskResult]:
        options = BatchOptions(out=out, model="replay", workers=cpus)
        began = time.monotonic()
        done = await run_batch(chunk, options, None, executors[name])
        walls[name] += time.monotonic() - began
        return done

    def so_far() -> str:
        return ", ".join(f"{name} {seconds:.1f} s" for name, seconds in walls.items())

    rows = await in_turns(suite, ROUND, ("local", "ray"), root, run, so_far)
    return (
        summarise("local", rows["local"], gui_ids, walls["local"], 0.0),
        summarise("ray", rows["ray"], gui_ids, walls["ray"], start),
    )


def render(report: dict[str, Any]) -> str:
    lines = [
        f"{'':6} {'tasks':>5} {'passed':>6} {'wall s':>7} {'tasks/min':>9} "
        f"{'shell s':>7} {'overhead':>8} {'gui s':>6} {'overhead':>8} {'start s':>7}"
    ]
    for name in ("local", "ray"):
        r = report[name]
        lines.append(
            f"{name:6} {r['tasks']:>5} {r['passed']:>6} {r['wall_seconds']:>7} "
            f"{r['tasks_per_minute']:>9} {_cell(r['shell_seconds_median']):>7} "
            f"{_cell(r['shell_overhead_median']):>8} {_cell(r['gui_seconds_median']):>6} "
            f"{_cell(r['gui_overhead_median']):>8} {r['start_seconds']:>7}"
        )
    for name in ("local", "ray"):
        lines += [f"{name} FAILED {line}" for line in report[name]["failed"]]
    ratios = report["ray_over_local"]
    lines.append(
        f"ray/local: tasks/min {_cell(ratios['tasks_per_minute'])}, shell overhead "
        f"{_cell(ratios['shell_overhead_median'])}, GUI overhead "
        f"{_cell(ratios['gui_overhead_median'])}"
    )
    added = report["ray_minus_local"]
    lines.append(
        f"ray adds per task: shell {_cell(added['shell_overhead_median'])} s, "
        f"GUI {_cell(added['gui_overhead_median'])} s of overhead"
    )
    lines.append(
        "medians per task; overhead = the attempt's wall time minus its `roundhouse run` "
        f"process's; {report['cpus']} tasks at once"
    )
    return "\n".join(lines)


def _cell(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"
