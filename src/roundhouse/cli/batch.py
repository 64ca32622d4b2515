"""`roundhouse batch SUITE`: run a suite of tasks, several at once, and score them — on
this machine (--executor local) or over a Ray cluster (--executor ray)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Annotated, Literal, TextIO

import typer

from roundhouse.cli.app import app
from roundhouse.cli.desktop import SessionOption, ShippedOption, session_kind
from roundhouse.config import ConfigError
from roundhouse.models.fakes import protocol_of
from roundhouse.osworld.family import OSWORLD
from roundhouse.suite.batch import (
    BatchItem,
    BatchOptions,
    Executor,
    Family,
    LocalExecutor,
    pending,
    run_batch,
)
from roundhouse.suite.family import SUITE, SuiteItem
from roundhouse.suite.recordings import recording_path
from roundhouse.suite.results import TaskResult, read_results, results_table

EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_CANCELLED = 130
BAR_WIDTH = 30
DEFAULT_OUT = Path("batch-results")
# The task families a batch runs, in the order a path is matched against them (the last
# takes whatever is left).
FAMILIES: tuple[Family, ...] = (OSWORLD, SUITE)


class ProgressBar:
    """A line per finished task, and a bar redrawn under them on a terminal."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.live = out.isatty()

    def __call__(self, result: TaskResult, done: int, total: int) -> None:
        mark = "pass" if result.passed else "FAIL"
        where = f", {result.node}" if result.node else ""
        again = f", attempt {result.attempts}" if result.attempts > 1 else ""
        line = (
            f"[{done}/{total}] {mark} {result.task} "
            f"({result.status}, {result.seconds:.1f} s{where}{again})"
        )
        if not result.passed:
            line += f": {result.reason[:160]}"
        filled = BAR_WIDTH * done // max(total, 1)
        bar = f"[{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {done}/{total}"
        if self.live:
            self.out.write(f"\r\033[K{line}\n{bar}")
        else:
            self.out.write(f"{line}\n")
        self.out.flush()


def _fail(message: str, code: int = EXIT_USAGE) -> typer.Exit:
    typer.echo(f"roundhouse: {message}", err=True)
    return typer.Exit(code)


def _select(tasks: list[BatchItem], wanted: list[str]) -> list[BatchItem]:
    unknown = sorted(set(wanted) - {item.task.id for item in tasks})
    if unknown:
        raise _fail(f"the suite has no task {', '.join(unknown)}")
    return [item for item in tasks if not wanted or item.task.id in wanted]


@app.command()
def batch(
    suite: Annotated[
        Path,
        typer.Argument(
            help="A folder of task files, or one task file; or OSWorld's examples (a folder of "
            "domains, one domain, one task file, or a meta file like test_all.json)"
        ),
    ],
    workers: Annotated[
        int | None,
        typer.Option(
            min=1,
            max=256,
            help="Tasks at once (local, default 2); CPUs of the Ray instance started here "
            "(ray without --ray-address, default: this machine's cores)",
        ),
    ] = None,
    model: Annotated[
        str, typer.Option(help="replay (each task's recorded answers), offline, openai:NAME, …")
    ] = "replay",
    out: Annotated[
        Path | None,
        typer.Option(help="Folder for results, work folders and logs [default: batch-results]"),
    ] = None,
    record: Annotated[
        bool, typer.Option("--record", help="Save each task's model answers beside it")
    ] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Approve confirmations")] = False,
    executor: Annotated[
        Literal["local", "ray"],
        typer.Option(help="Where tasks run: this machine, or a Ray cluster"),
    ] = "local",
    ray_address: Annotated[
        str | None,
        typer.Option(
            help="Join this Ray cluster (auto, HOST:PORT, ray://HOST:PORT); "
            "without it --executor ray starts Ray on this machine"
        ),
    ] = None,
    desktops: Annotated[
        int | None,
        typer.Option(
            min=0, help="Desktops the Ray instance started here offers (default: cores / 2)"
        ),
    ] = None,
    retries: Annotated[
        int, typer.Option(min=0, help="Runs again of a task whose worker died under it")
    ] = 1,
    resume: Annotated[
        Path | None,
        typer.Option(metavar="OUT", help="Carry on the batch in OUT: skip tasks with a row there"),
    ] = None,
    task: Annotated[
        list[str] | None, typer.Option("--task", help="Run only this task (repeatable)")
    ] = None,
    files: Annotated[
        Path | None,
        typer.Option(metavar="DIR", help="OSWorld's tasks: the dataset's files (fetch-files)"),
    ] = None,
    answers: Annotated[
        Path | None,
        typer.Option(
            metavar="DIR",
            help="OSWorld's tasks: their recorded answers (<id>.answers.json; default: beside "
            "each task file)",
        ),
    ] = None,
    agent: Annotated[
        Literal["host", "computer"] | None,
        typer.Option(help="The agent of every GUI task (default: each task's own, host)"),
    ] = None,
    recordings: Annotated[
        bool,
        typer.Option(
            "--recordings",
            help="Play each task's recorded conversation for --model's protocol "
            "(SUITE/recordings/PROTOCOL/TASK.yaml) through that protocol's fake; only the "
            "tasks that have one run",
        ),
    ] = False,
    session: SessionOption = None,
    shipped: ShippedOption = False,
    watch: Annotated[
        bool,
        typer.Option(
            "--watch",
            help="Show the batch's task table live on a loopback web page (its URL on stderr)",
        ),
    ] = False,
    linger: Annotated[
        float,
        typer.Option(
            min=0, help="With --watch: keep the page up this many seconds after the batch ends"
        ),
    ] = 0.0,
) -> None:
    """Run every task of a suite, each GUI task on its own virtual desktop, and check the
    results against the real system. Writes OUT/results.json and OUT/results.csv after
    every finished task."""
    family = next(family for family in FAMILIES if family.recognises(suite))
    try:
        tasks = _select([*family.load(suite)], task or [])
    except ConfigError as error:
        raise _fail(str(error)) from None
    if not family.dataset and (files is not None or answers is not None):
        readers = " and ".join(f"{f.name}'s" for f in FAMILIES if f.dataset)
        raise _fail(f"--files and --answers are for {readers} task files")
    if recordings:
        tasks = _recorded(family, tasks, model)
    if record and (recordings or agent == "computer"):
        # TASK.answers.json are the host agent's answers, which replay reads: not these.
        raise _fail("--record keeps the tasks' own agents' answers: not with --agent computer")
    if files is not None and not files.is_dir():
        raise _fail(f"--files {files} is no folder")
    if resume is not None and out is not None and out.resolve() != resume.resolve():
        raise _fail("--resume OUT carries on the batch in OUT: give --out the same or not at all")
    folder = resume or out or DEFAULT_OUT
    if executor == "local" and (ray_address or desktops is not None):
        raise _fail("--ray-address and --desktops go with --executor ray")
    if executor == "ray" and record:
        raise _fail("--record writes answers beside the suite: use --executor local for it")
    if executor == "ray" and ray_address and workers is not None:
        raise _fail("--workers sizes the Ray instance started here; a cluster has its own")
    options = BatchOptions(
        out=folder,
        model=model,
        workers=workers or 2,
        record=record,
        assume_yes=yes,
        retries=retries,
        resume=resume is not None,
        files=files.resolve() if files is not None else None,
        answers=answers.resolve() if answers is not None else None,
        session=session_kind(session) if session is not None else None,
        shipped=shipped,
        agent=agent,
        recordings=recordings,
    )
    if resume is not None:
        try:
            kept = read_results(folder)
        except (OSError, ValueError, TypeError) as error:
            raise _fail(f"cannot resume from {folder}: {error}") from None
        typer.echo(
            f"roundhouse: resuming {folder}: {len(tasks) - len(pending(tasks, kept))} tasks "
            f"have a row, {len(pending(tasks, kept))} to run",
            err=True,
        )
    if executor == "ray":
        results = _run_on_ray(tasks, options, ray_address, workers, desktops, watch)
    else:
        typer.echo(
            f"roundhouse: {len(tasks)} tasks, {options.workers} at once, model {model}", err=True
        )
        results = _run(tasks, options, None, watch, linger)
    typer.echo("\n" + results_table(results))
    typer.echo(f"Results: {folder / 'results.json'} and {folder / 'results.csv'}")
    raise typer.Exit(0 if all(r.passed for r in results) else EXIT_FAILED)


def _recorded(family: Family, tasks: list[BatchItem], model: str) -> list[BatchItem]:
    """The tasks that have a recording for the model's protocol (suite/recordings.py)."""
    protocol = protocol_of(model)
    if protocol is None:
        raise _fail(f"--recordings plays a computer-use protocol's fake: not --model {model}")
    if family is not SUITE:
        raise _fail(f"--recordings is for {SUITE.name}'s task files")
    kept: list[BatchItem] = [
        item
        for item in tasks
        if isinstance(item, SuiteItem) and recording_path(item.found, protocol).is_file()
    ]
    if not kept:
        raise _fail(f"no task here has a recording of {protocol.family}")
    return kept


def _run_on_ray(
    tasks: list[BatchItem],
    options: BatchOptions,
    address: str | None,
    cpus: int | None,
    desktops: int | None,
    watch: bool = False,
) -> list[TaskResult]:
    # Imported here: a local batch never imports ray.
    try:
        from roundhouse.suite.ray_executor import ClusterError, RayExecutor, RaySettings
    except ImportError as error:
        raise _fail(f"--executor ray needs Ray: pip install 'roundhouse[ray]' ({error})") from None
    runner = RayExecutor(options, RaySettings(address, cpus, desktops), tasks)
    try:
        try:
            offered = runner.start()
        except (ClusterError, ConnectionError, RuntimeError) as error:
            raise _fail(f"cannot run on Ray: {error}") from None
        typer.echo(f"roundhouse: {len(tasks)} tasks, model {options.model}; {offered}", err=True)
        return _run(tasks, options, runner, watch)  # no linger: the cluster is let go
    finally:
        runner.close()


async def _watched(
    tasks: list[BatchItem],
    options: BatchOptions,
    runner: Executor | None,
    bar: ProgressBar,
    linger: float = 0.0,
) -> list[TaskResult]:
    """The batch with its task table on the watch page (roundhouse/watch/batch.py)."""
    from roundhouse.watch.batch import batch_page  # the web stack: only for --watch

    def ready(url: str) -> None:
        typer.echo(f"roundhouse: watch the batch at {url}", err=True)

    ids = [
        item.task.id for item in pending(tasks, read_results(options.out) if options.resume else [])
    ]
    async with batch_page(ids, f"batch {options.out}", ready) as table:
        executor = runner or LocalExecutor(options, started=table.started)
        rows = await run_batch(tasks, options, table.progress(bar), executor)
        await table.videos_made()
        if linger:
            typer.echo(f"roundhouse: the page stays up {linger:g} s (Ctrl-C ends it)", err=True)
            await asyncio.sleep(linger)
        return rows


def _run(
    tasks: list[BatchItem],
    options: BatchOptions,
    runner: Executor | None,
    watch: bool = False,
    linger: float = 0.0,
) -> list[TaskResult]:
    bar = ProgressBar(sys.stderr)
    work = (
        _watched(tasks, options, runner, bar, linger)
        if watch
        else run_batch(tasks, options, bar, runner)
    )
    try:
        return asyncio.run(work)
    except KeyboardInterrupt:
        # Running tasks were cancelled (their desktops stop); finished rows are written.
        typer.echo(f"\nroundhouse: batch cancelled; results so far in {options.out}", err=True)
        raise typer.Exit(EXIT_CANCELLED) from None
