"""`roundhouse batch SUITE`: run a suite of tasks, several at once, and score them."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Annotated, TextIO

import typer

from roundhouse.cli.app import app
from roundhouse.config import ConfigError
from roundhouse.suite.batch import BatchOptions, TaskResult, results_table, run_batch
from roundhouse.suite.tasks import load_suite

EXIT_FAILED = 1
EXIT_USAGE = 2
BAR_WIDTH = 30


class ProgressBar:
    """A line per finished task, and a bar redrawn under them on a terminal."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.live = out.isatty()

    def __call__(self, result: TaskResult, done: int, total: int) -> None:
        mark = "pass" if result.passed else "FAIL"
        line = f"[{done}/{total}] {mark} {result.task} ({result.status}, {result.seconds:.1f} s)"
        if not result.passed:
            line += f": {result.reason[:160]}"
        filled = BAR_WIDTH * done // total
        bar = f"[{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {done}/{total}"
        if self.live:
            self.out.write(f"\r\033[K{line}\n{bar}")
        else:
            self.out.write(f"{line}\n")
        self.out.flush()


@app.command()
def batch(
    suite: Annotated[Path, typer.Argument(help="A folder of task files, or one task file")],
    workers: Annotated[int, typer.Option(min=1, max=16, help="Tasks run at once")] = 2,
    model: Annotated[
        str, typer.Option(help="replay (each task's recorded answers), offline, openai:NAME, …")
    ] = "replay",
    out: Annotated[Path, typer.Option(help="Folder for results, work folders and logs")] = Path(
        "batch-results"
    ),
    record: Annotated[
        bool, typer.Option("--record", help="Save each task's model answers beside it")
    ] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Approve confirmations")] = False,
) -> None:
    """Run every task of a suite, each GUI task on its own virtual desktop, and check the
    results against the real system. Writes OUT/results.json and OUT/results.csv."""
    try:
        tasks = load_suite(suite)
    except ConfigError as error:
        typer.echo(f"roundhouse: {error}", err=True)
        raise typer.Exit(EXIT_USAGE) from None
    options = BatchOptions(out=out, model=model, workers=workers, record=record, assume_yes=yes)
    typer.echo(f"roundhouse: {len(tasks)} tasks, {workers} at once, model {model}", err=True)
    try:
        results = asyncio.run(run_batch(tasks, options, ProgressBar(sys.stderr)))
    except KeyboardInterrupt:
        typer.echo("\nroundhouse: batch cancelled", err=True)
        raise typer.Exit(130) from None
    typer.echo("\n" + results_table(results))
    typer.echo(f"Results: {out / 'results.json'} and {out / 'results.csv'}")
    raise typer.Exit(0 if all(r.passed for r in results) else EXIT_FAILED)
