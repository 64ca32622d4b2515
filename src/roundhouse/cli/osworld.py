"""`roundhouse osworld check|fetch-files`: OSWorld's task files on this machine.

roundhouse osworld check evaluation_examples [--files DIR] [--list]
roundhouse osworld fetch-files evaluation_examples DIR    # on a machine with the network
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from roundhouse.cli.app import app
from roundhouse.config import ConfigError

osworld_app = typer.Typer(help="OSWorld's task files: which run here, and their files.")
app.add_typer(osworld_app, name="osworld")

EXIT_USAGE = 2
EXIT_FAILED = 1

Examples = Annotated[
    Path,
    typer.Argument(
        metavar="EXAMPLES",
        help="OSWorld's evaluation_examples (or its examples/, one domain, one task file, "
        "or a meta file like test_all.json)",
    ),
]


def _fail(message: str, code: int = EXIT_USAGE) -> typer.Exit:
    typer.echo(f"roundhouse: {message}", err=True)
    return typer.Exit(code)


@osworld_app.command("check")
def check(
    examples: Examples,
    files: Annotated[
        Path | None, typer.Option(metavar="DIR", help="The dataset's files (fetch-files fills it)")
    ] = None,
    listing: Annotated[
        bool, typer.Option("--list", help="Print every task's class and why, then the table")
    ] = False,
) -> None:
    """Put every task in one class (runnable here, files missing, live web, application not
    installed, not implemented) and print the counts per domain."""
    from roundhouse.osworld.check import CLASSES, Machine, classify, table
    from roundhouse.osworld.files import FileCache
    from roundhouse.osworld.tasks import load_examples

    try:
        items = load_examples(examples)
    except ConfigError as error:
        raise _fail(str(error)) from None
    if files is not None and not files.is_dir():
        raise _fail(f"--files {files} is no folder")
    machine = Machine.here()
    cache = FileCache(files) if files is not None else None
    verdicts = [(item, classify(item, machine, cache)) for item in items]
    if listing:
        for item, verdict in verdicts:
            why = f": {verdict.reason}" if verdict.reason else ""
            typer.echo(f"{item.domain}/{item.task.id}  {CLASSES[verdict.klass]}{why}")
        typer.echo("")
    typer.echo(table(verdicts))


@osworld_app.command("fetch-files")
def fetch_files_command(
    examples: Examples,
    folder: Annotated[Path, typer.Argument(metavar="DIR", help="Where to keep the files")],
) -> None:
    """Fetch every file the tasks download into DIR, keyed by its URL's path: partial files
    are resumed, whole ones kept, each checked by sha256 (DIR/manifest.json)."""
    from roundhouse.osworld.files import Fetched, fetch_files, task_urls
    from roundhouse.osworld.tasks import load_examples

    try:
        items = load_examples(examples)
    except ConfigError as error:
        raise _fail(str(error)) from None
    urls = [url for item in items for url in task_urls(item)]

    def progress(done: Fetched, index: int, total: int) -> None:
        typer.echo(f"[{index}/{total}] {done.how} {done.url}", err=True)

    results = fetch_files(urls, folder, progress=progress)
    failed = [r for r in results if r.how.startswith("failed")]
    kept = sum(r.how == "kept" for r in results)
    typer.echo(
        f"{len(results) - len(failed)} of {len(results)} files in {folder} "
        f"({kept} already there); {len(failed)} failed"
    )
    if failed:
        for result in failed:
            typer.echo(f"  {result.url}: {result.how}", err=True)
        sys.exit(EXIT_FAILED)
