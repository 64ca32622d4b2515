"""`roundhouse windows` and `roundhouse screenshot`: look at a desktop from the shell."""

from __future__ import annotations

import asyncio
import json
import signal
from pathlib import Path
from typing import Annotated

import typer

from roundhouse.cli.app import app
from roundhouse.cli.desktop import DesktopOption, JsonOption, open_cli_desktop
from roundhouse.cli.serve import exit_on_sigterm
from roundhouse.config import ConfigError, Settings, load_settings
from roundhouse.devices.linux.desktops.desktop import Desktop
from roundhouse.devices.linux.display.backends import list_windows
from roundhouse.devices.linux.display.base import WindowError, find_window
from roundhouse.devices.linux.tools import DesktopTools

EXIT_FAILED = 1


def _fail(message: str) -> typer.Exit:
    typer.echo(f"roundhouse: {message}", err=True)
    return typer.Exit(EXIT_FAILED)


@app.command("windows")
def windows(desktop: DesktopOption = None, as_json: JsonOption = False) -> None:
    """List the top-level windows: id, application, pid, rectangle, title (* = active)."""
    signal.signal(signal.SIGTERM, exit_on_sigterm)
    with open_cli_desktop(desktop) as opened:
        try:
            found = list_windows(opened)
        except WindowError as error:
            raise _fail(str(error)) from None
    if as_json:
        typer.echo(json.dumps([window.model_dump(mode="json") for window in found], indent=2))
        return
    for window in found:
        mark = "*" if window.active else " "
        rect = ",".join(str(value) for value in window.rect.as_list())
        pid = window.pid if window.pid is not None else "-"
        typer.echo(
            f"{mark} {window.xid:<10} {window.application:<16} {pid!s:<7} {rect:<20} {window.title}"
        )


@app.command("screenshot")
def screenshot(
    out: Annotated[Path | None, typer.Argument(help="PNG file to write")] = None,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="PNG file to write (or as argument)")
    ] = None,
    window: Annotated[
        str | None, typer.Option("--window", help="Title (or part of it) of one window")
    ] = None,
    annotate: Annotated[
        bool, typer.Option("--annotate", help="Number the controls of the window (set-of-marks)")
    ] = False,
    desktop: DesktopOption = None,
) -> None:
    """Save a PNG of the desktop, or of one window (--annotate numbers its controls)."""
    if (out is None) == (output is None):
        raise _fail("name the PNG file to write once: as the argument, or with --output")
    target = out or output
    assert target is not None
    try:
        settings = load_settings()
    except ConfigError as error:
        raise _fail(str(error)) from None
    signal.signal(signal.SIGTERM, exit_on_sigterm)  # stop a virtual desktop started for us
    with open_cli_desktop(desktop) as opened:
        try:
            summary = asyncio.run(_screenshot(opened, settings, target, window, annotate))
        except (WindowError, OSError, ValueError) as error:
            raise _fail(str(error)) from None
    typer.echo(summary)


async def _screenshot(
    desktop: Desktop, settings: Settings, out: Path, title: str | None, annotate: bool
) -> str:
    async with await DesktopTools.open(desktop, settings) as tools:
        if title is None and not annotate:
            shot = await tools.capture_desktop_screenshot(path=str(out))
        elif title is None:
            shot = await tools.capture_desktop_screenshot(path=str(out), annotate=True)
        else:
            xid = find_window(tools.windows.list_windows(), title).xid
            shot = await tools.capture_window_screenshot(xid, path=str(out), annotate=annotate)
    marks = f", {shot['annotated_controls']} controls numbered" if annotate else ""
    return f"{shot['path']}: {shot['width']}x{shot['height']}{marks}"
