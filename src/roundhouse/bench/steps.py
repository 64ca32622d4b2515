"""`roundhouse bench steps`: what answers of several actions save, measured in one run on
this machine: the shipped suite (tasks/basic) with the offline planner, once with one
action per model call (max_actions 1) and once with several (max_actions N), each task on
its own virtual desktop as `roundhouse batch` runs it.

Per task and mode: the model calls (every request its steps made, refused answers
included), the steps (one per answer), the actions run, the wall time of its `roundhouse
run` and whether it passed. The modes take turns, a round of tasks each, who goes first
alternating, so that load from other processes falls on both alike. The mode reaches each
run as the ROUNDHOUSE_MAX_ACTIONS its environment carries (config.py's environment layer).
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from roundhouse.bench.app import bench_app
from roundhouse.bench.batch import in_turns
from roundhouse.bench.tree import SOURCE_TREE
from roundhouse.config import ConfigError, Settings
from roundhouse.logs.store import LogStore
from roundhouse.suite.batch import BatchOptions, run_batch
from roundhouse.suite.family import SuiteItem
from roundhouse.suite.family import load as load_suite
from roundhouse.suite.results import NOT_RUNNABLE, TaskResult

SUITE = SOURCE_TREE / "tasks" / "basic"
ROUND = 6  # tasks each mode runs before the other takes its turn
ENV = "ROUNDHOUSE_MAX_ACTIONS"


@dataclass(frozen=True)
class Run:
    """One task in one mode."""

    task: str
    passed: bool
    status: str
    calls: int  # model requests
    steps: int  # answers
    actions: int  # actions that ran
    seconds: float  # its `roundhouse run`


@dataclass(frozen=True)
class Mode:
    name: str  # "one" or "several"
    max_actions: int
    runs: list[Run]

    @property
    def counted(self) -> list[Run]:
        return [run for run in self.runs if run.status != NOT_RUNNABLE]

    def mean(self, field: str) -> float:
        values = [float(getattr(run, field)) for run in self.counted]
        return statistics.fmean(values) if values else 0.0

    @property
    def passed(self) -> list[str]:
        return sorted(run.task for run in self.runs if run.passed)


def run_of(row: TaskResult) -> Run:
    """A task's row, with what its log folder says of its calls, steps and actions."""
    steps = []
    if row.log_dir and (Path(row.log_dir) / "response.log").exists():
        steps = LogStore(Path(row.log_dir)).read_steps()
    return Run(
        task=row.task,
        passed=row.passed,
        status=row.status,
        calls=sum(step.usage.requests for step in steps),
        steps=len(steps),
        actions=sum(len(step.ran) for step in steps),
        seconds=row.run_seconds,
    )


def fewer(one: float, several: float) -> float | None:
    """How much fewer `several` is than `one`, as a share of it (0.35: 35% fewer)."""
    return round(1 - several / one, 3) if one else None


def compared(one: float, several: float) -> dict[str, float | None]:
    return {"one": round(one, 2), "several": round(several, 2), "fewer": fewer(one, several)}


def summary(one: Mode, several: Mode) -> dict[str, Any]:
    """Pure: the figures of both modes, per task and on average, and whether the same
    tasks passed."""
    means = {
        field: compared(one.mean(field), several.mean(field))
        for field in ("calls", "steps", "actions", "seconds")
    }
    # Where there is something to put together: the tasks that take more than one action.
    acting = {run.task for run in one.counted if run.actions > 1}
    of_acting = [
        statistics.fmean(run.calls for run in mode.counted if run.task in acting) if acting else 0.0
        for mode in (one, several)
    ]
    return {
        "max_actions": {"one": one.max_actions, "several": several.max_actions},
        "tasks": len(one.counted),
        "per_task_mean": means,
        "acting_tasks": len(acting),
        "acting_calls_mean": compared(*of_acting),
        "passed": {"one": len(one.passed), "several": len(several.passed)},
        "same_tasks_pass": one.passed == several.passed,
        "pass_only_with_one": sorted(set(one.passed) - set(several.passed)),
        "pass_only_with_several": sorted(set(several.passed) - set(one.passed)),
        "runs": {
            run.task: {"one": asdict(run), "several": asdict(other)}
            for run, other in zip(one.runs, several.runs, strict=True)
        },
    }


@bench_app.command("steps")
def steps(
    suite: Annotated[Path, typer.Option(help="The suite to run")] = SUITE,
    several: Annotated[
        int | None,
        typer.Option(min=2, help="Actions one answer may hold (default: the settings' own)"),
    ] = None,
    task: Annotated[list[str] | None, typer.Option(help="Only this task (repeatable)")] = None,
    workers: Annotated[int, typer.Option(min=1, help="Tasks at once")] = 2,
    out: Annotated[Path | None, typer.Option(help="Keep the batches' folders here")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object")] = False,
) -> None:
    """Model calls, steps and wall time per task of the suite with the offline planner,
    one action per call against several, in one run."""
    try:
        tasks = load_suite(suite)
    except ConfigError as error:
        raise typer.BadParameter(str(error)) from error
    if task:
        unknown = sorted(set(task) - {item.task.id for item in tasks})
        if unknown:
            raise typer.BadParameter(f"no such task in {suite}: {', '.join(unknown)}")
        tasks = [item for item in tasks if item.task.id in task]
    most = several or Settings().max_actions
    with tempfile.TemporaryDirectory(prefix="rh-bench-steps-") as scratch:
        root = out or Path(scratch)
        one, many = asyncio.run(_both(tasks, root, workers, most))
    report = summary(one, many)
    typer.echo(json.dumps(report, indent=2) if as_json else render(report))


async def _both(
    tasks: Sequence[SuiteItem], root: Path, workers: int, most: int
) -> tuple[Mode, Mode]:
    modes = {"one": 1, "several": most}

    async def run(name: str, chunk: Sequence[SuiteItem], out: Path) -> list[TaskResult]:
        options = BatchOptions(out=out, model="offline", workers=workers)

        def said(row: TaskResult, done: int, total: int) -> None:
            verdict = "pass" if row.passed else "FAIL"
            typer.echo(f"  {name}: {verdict} {row.task} ({row.status})", err=True)

        with _environment(ENV, str(modes[name])):
            return await run_batch(chunk, options, said)

    rows = await in_turns(tasks, ROUND, ("one", "several"), root, run)
    place = {item.task.id: index for index, item in enumerate(tasks)}

    def mode(name: str) -> Mode:
        found = sorted(rows[name], key=lambda row: place[row.task])
        return Mode(name, modes[name], [run_of(row) for row in found])

    return mode("one"), mode("several")


@contextmanager
def _environment(name: str, value: str) -> Iterator[None]:
    """`name` set to `value` for what starts meanwhile: each task's desktop and its run."""
    before = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if before is None:
            del os.environ[name]
        else:
            os.environ[name] = before


def render(report: dict[str, Any]) -> str:
    most = report["max_actions"]
    several = f"several (up to {most['several']})"
    lines = [
        f"{'':28} {'one action per call':>27}   {several:>27}",
        f"{'task':28} {'calls':>5} {'steps':>5} {'acts':>5} {'wall s':>6} {'':>3}   "
        f"{'calls':>5} {'steps':>5} {'acts':>5} {'wall s':>6} {'':>3}",
    ]
    for task, both in report["runs"].items():
        cells = []
        for mode in ("one", "several"):
            run = both[mode]
            verdict = "ok" if run["passed"] else run["status"][:3].lower()
            cells.append(
                f"{run['calls']:>5} {run['steps']:>5} {run['actions']:>5} "
                f"{run['seconds']:>6.1f} {verdict:>3}"
            )
        lines.append(f"{task[:28]:28} {cells[0]}   {cells[1]}")
    means = report["per_task_mean"]
    lines.append(
        "mean per task: "
        + ", ".join(
            f"{name} {m['one']:g} -> {m['several']:g} ({_share(m['fewer'])})"
            for name, m in (
                ("model calls", means["calls"]),
                ("steps", means["steps"]),
                ("actions", means["actions"]),
                ("wall s", means["seconds"]),
            )
        )
    )
    acting = report["acting_calls_mean"]
    lines.append(
        f"the {report['acting_tasks']} tasks of more than one action: model calls "
        f"{acting['one']:g} -> {acting['several']:g} ({_share(acting['fewer'])})"
    )
    passed = report["passed"]
    same = "the same tasks" if report["same_tasks_pass"] else "NOT the same tasks"
    lines.append(
        f"passed: {passed['one']} of {report['tasks']} with one, {passed['several']} with "
        f"several: {same}"
    )
    for mode in ("one", "several"):
        only = report[f"pass_only_with_{mode}"]
        if only:
            lines.append(f"pass only with {mode}: {', '.join(only)}")
    return "\n".join(lines)


def _share(value: float | None) -> str:
    """A share fewer, said as fewer or more."""
    if value is None:
        return "-"
    return f"{value:.0%} fewer" if value >= 0 else f"{-value:.0%} more"
