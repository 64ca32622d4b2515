"""`roundhouse watch [DESKTOP]`: a desktop, live, on a local web page (roundhouse/watch/).

It prints the page's URL (loopback, with a random token in it) and serves until Ctrl-C or
--timeout. Clicks and keys in the page go to the desktop as the person's input: a run on
that desktop pauses before its next action, as it does for a person at their own desktop,
until it is handed back (Enter on the run's terminal, or `roundhouse resume LOGDIR`). With
`run --watch` the page shows the run's steps too, and hands back or stops it itself.
"""

from __future__ import annotations

import asyncio
import os
import signal
from typing import Annotated

import typer

from roundhouse.cli.app import app
from roundhouse.cli.desktop import SessionOption, open_cli_desktop
from roundhouse.cli.serve import exit_on_sigterm
from roundhouse.endpoints import MCP_TOKEN_ENV, is_loopback_host, token_problem
from roundhouse.watch.frames import FPS
from roundhouse.watch.gate import new_token
from roundhouse.watch.run import watched_desktop
from roundhouse.watch.server import Watched, serve_watch

EXIT_FAILED = 1

HostOption = Annotated[
    str,
    typer.Option(
        help=f"The address to bind; off loopback {MCP_TOKEN_ENV} must hold a bearer token, "
        "which the browser is asked for (HTTP Basic, as the password)"
    ),
]
PortOption = Annotated[int, typer.Option(help="The port (0: any free one)")]
FpsOption = Annotated[float, typer.Option(min=1, max=30, help="Frames a second, at most")]


@app.command("watch")
def watch(
    desktop: Annotated[
        str | None,
        typer.Argument(help="current, virtual, or a started desktop (:3, sway-1)"),
    ] = None,
    session: SessionOption = None,
    host: HostOption = "127.0.0.1",
    port: PortOption = 0,
    fps: FpsOption = FPS,
    view_only: Annotated[
        bool, typer.Option("--view-only", help="Show the desktop; send no input from the page")
    ] = False,
    timeout: Annotated[
        float | None, typer.Option(help="Stop serving after this many seconds (default: Ctrl-C)")
    ] = None,
) -> None:
    """Show a desktop live on a local web page; clicks and keys there take control."""
    bearer = page_bearer(host)
    signal.signal(signal.SIGTERM, exit_on_sigterm)
    with (
        open_cli_desktop(desktop, session=session) as opened,
        watched_desktop(opened, fps, control=not view_only) as watched,
    ):
        try:
            asyncio.run(_serve(watched, host, port, bearer, timeout))
        except KeyboardInterrupt:
            typer.echo("\nroundhouse: stopped watching", err=True)


def page_bearer(host: str) -> str | None:
    """The bearer token off loopback (None on it); a usage error without one."""
    if is_loopback_host(host):
        return None
    bearer = os.environ.get(MCP_TOKEN_ENV) or None
    problem = token_problem(host, bearer)
    if problem is not None:
        typer.echo(f"roundhouse: {problem}", err=True)
        raise typer.Exit(EXIT_FAILED)
    return bearer


async def _serve(
    watched: Watched, host: str, port: int, bearer: str | None, timeout: float | None
) -> None:
    serving = serve_watch(watched, new_token(), host=host, port=port, bearer=bearer, ready=announce)
    try:
        await asyncio.wait_for(serving, timeout)
    except TimeoutError:
        typer.echo(f"roundhouse: stopped watching after {timeout:g} s", err=True)


def announce(url: str) -> None:
    """The page's URL on stdout (what a script reads), and what to do with it on stderr."""
    typer.echo(url)
    typer.echo("roundhouse: open that URL to watch the desktop (Ctrl-C stops)", err=True)
