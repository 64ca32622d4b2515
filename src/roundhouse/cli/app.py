"""The typer application the command modules register on."""

from __future__ import annotations

import typer

app = typer.Typer(
    name="roundhouse",
    help="A desktop-automation agent for Linux: say what you want done, it observes and acts.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
