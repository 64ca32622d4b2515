"""The typer application the command modules register on."""

from __future__ import annotations

import inspect

import typer
from typer.core import TyperGroup

# The order `roundhouse --help` lists its commands in: what a newcomer needs first (do
# something, serve the tools, check the desktop, start one), the benchmarks last.
COMMAND_ORDER = (
    "run",
    "chat",
    "serve",
    "doctor",
    "desktop",
    "watch",
    "setup",
    "resume",
    "batch",
    "report",
    "screenshot",
    "tree",
    "windows",
    "osworld",
    "bench",
)


class InHelpOrder(TyperGroup):
    """Lists its commands and groups in COMMAND_ORDER (typer lists commands as registered,
    groups after them, and the command modules register as their imports are sorted); a
    name not in it goes last."""

    # The base takes typer's vendored click Context, which typer exports only as this subclass.
    def list_commands(self, ctx: typer.Context) -> list[str]:  # type: ignore[override]
        names = super().list_commands(ctx)
        last = len(COMMAND_ORDER)
        return sorted(names, key=lambda n: COMMAND_ORDER.index(n) if n in COMMAND_ORDER else last)


app = typer.Typer(
    name="roundhouse",
    cls=InHelpOrder,
    help="A desktop-automation agent for Linux: say what you want done, it observes and acts.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def one_line_summaries(group: typer.Typer) -> None:
    """Each command's line in a command list is its docstring's first paragraph, as one
    line: typer keeps the docstring's line breaks there, which cut sentences in the middle
    ("...and check the" / "results against..."). Commands that give a short help keep it."""
    for command in group.registered_commands:
        doc = inspect.getdoc(command.callback) if command.callback else None
        if command.short_help is None and doc:
            command.short_help = " ".join(doc.split("\n\n")[0].split())
    for sub in group.registered_groups:
        if sub.typer_instance is not None:
            one_line_summaries(sub.typer_instance)
