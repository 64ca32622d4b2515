"""`roundhouse report LOGDIR`: the session's HTML trajectory report."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from roundhouse.cli.app import app
from roundhouse.logs.report import REPORT_NAME, NotALogFolder, write_report
from roundhouse.suite.report import is_batch_folder, write_batch_report

EXIT_FAILED = 1
EXIT_USAGE = 2


@app.command("report")
def report(
    log_dir: Annotated[Path, typer.Argument(metavar="LOGDIR", help="A session's log folder")],
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            metavar="FILE",
            help=f"File or folder to write it to (default: LOGDIR/{REPORT_NAME})",
        ),
    ] = None,
) -> None:
    """Write the HTML report of a session (rounds, steps, screenshots, cost) and print its
    path; of a batch's folder (OUT of `roundhouse batch`), its rows and scores per domain."""
    if is_batch_folder(log_dir) and out is None:
        try:
            typer.echo(str(write_batch_report(log_dir)))
        except (OSError, ValueError) as error:
            typer.echo(f"roundhouse: cannot write the batch report: {error}", err=True)
            raise typer.Exit(EXIT_FAILED) from None
        return
    try:
        path = write_report(log_dir, out)
    except NotALogFolder as error:
        typer.echo(f"roundhouse: {error}", err=True)
        raise typer.Exit(EXIT_USAGE) from None
    except OSError as error:  # an unwritable --out, a full disk: said, not a traceback
        typer.echo(f"roundhouse: cannot write the report: {error}", err=True)
        raise typer.Exit(EXIT_FAILED) from None
    typer.echo(str(path))
