"""`roundhouse report LOGDIR`: the session's HTML trajectory report."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from roundhouse.cli.app import app
from roundhouse.report import REPORT_NAME, NotALogFolder, write_report

EXIT_USAGE = 2


@app.command("report")
def report(
    log_dir: Annotated[Path, typer.Argument(metavar="LOGDIR", help="A session's log folder")],
    out: Annotated[
        Path | None,
        typer.Option(
            "--out", metavar="FILE", help=f"Where to write it [default: LOGDIR/{REPORT_NAME}]"
        ),
    ] = None,
) -> None:
    """Write the HTML report of a session (rounds, steps, screenshots, cost) and print its path."""
    try:
        path = write_report(log_dir, out)
    except NotALogFolder as error:
        typer.echo(f"roundhouse: {error}", err=True)
        raise typer.Exit(EXIT_USAGE) from None
    typer.echo(str(path))
