"""`roundhouse doctor`: whether the agent can observe and act on a desktop, and the fixes."""

from __future__ import annotations

import asyncio
import json
import signal

import typer

from roundhouse.cli.app import app
from roundhouse.cli.desktop import (
    EXIT_FAILED,
    DesktopOption,
    JsonOption,
    SessionOption,
    open_cli_desktop,
)
from roundhouse.cli.serve import exit_on_sigterm
from roundhouse.devices.linux.doctor import diagnose


@app.command("doctor")
def doctor(
    desktop: DesktopOption = None, session: SessionOption = None, as_json: JsonOption = False
) -> None:
    """Check the desktop: its session type and compositor, the accessibility bus, the input,
    screenshot and window routes and what they need; a one-line fix for each problem.
    Exits 0 when the agent can observe and act there."""
    signal.signal(signal.SIGTERM, exit_on_sigterm)
    with open_cli_desktop(desktop, session=session) as opened:
        report = asyncio.run(diagnose(opened))
    typer.echo(json.dumps(report.as_dict(), indent=2) if as_json else report.render())
    if not report.ok:
        raise typer.Exit(EXIT_FAILED)
