"""`roundhouse serve`: the desktop's tools as an MCP server (stdio or streamable HTTP)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
from pathlib import Path
from types import FrameType
from typing import Annotated

import typer

from roundhouse.agents.user import TerminalUser
from roundhouse.cli.app import app
from roundhouse.cli.desktop import DesktopOption, SessionOption, open_cli_desktop
from roundhouse.config import ConfigError, Settings, load_settings
from roundhouse.core.user import NonInteractiveUser, UserChannel
from roundhouse.devices.base import Tool
from roundhouse.devices.linux.desktops.desktop import Desktop
from roundhouse.devices.linux.doctor import doctor_tool
from roundhouse.devices.linux.tools import open_registry
from roundhouse.devices.shell import ShellTools
from roundhouse.endpoints import MCP_TOKEN_ENV as TOKEN_ENV
from roundhouse.endpoints import token_problem

EXIT_FAILED = 1


def _fail(message: str) -> typer.Exit:
    typer.echo(f"roundhouse: {message}", err=True)
    return typer.Exit(EXIT_FAILED)


def parse_address(value: str) -> tuple[str, int]:
    """'127.0.0.1:8765', '[::1]:8765' or ':8765' (loopback) -> (host, port)."""
    host, separator, port = value.rpartition(":")
    if not separator or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"--http {value!r}: expected HOST:PORT, e.g. 127.0.0.1:8765")
    return host.strip("[]") or "127.0.0.1", int(port)


def engine_tools(
    settings: Settings, user: UserChannel | None = None, desktop: Desktop | None = None
) -> list[Tool]:
    """The engine's tools served next to the desktop's: the shell, under this server's
    policy (devices/shell.py): a destructive command a client sends is asked about on the
    server's terminal, or, with none (stdio is the protocol), refused unless --yes; and
    `doctor` for the desktop served."""
    doctor = [doctor_tool(desktop)] if desktop is not None else []
    return [*ShellTools(settings, user).tools(), *doctor]


@app.command("serve")
def serve(
    stdio: Annotated[
        bool, typer.Option("--stdio", help="Serve on stdin/stdout (the default)")
    ] = False,
    http: Annotated[
        str | None,
        typer.Option(
            "--http",
            metavar="HOST:PORT",
            help=f"Serve streamable HTTP at http://HOST:PORT/mcp; off loopback {TOKEN_ENV} "
            "must hold the bearer token clients send",
        ),
    ] = None,
    desktop: DesktopOption = None,
    session: SessionOption = None,
    timeout: Annotated[float, typer.Option(help="Seconds a tool call may take")] = 120.0,
    yes: Annotated[
        bool,
        typer.Option(
            "--yes", "-y", help="Run destructive shell commands clients send without asking"
        ),
    ] = False,
    osworld: Annotated[
        bool,
        typer.Option(
            "--osworld",
            help="Serve OSWorld's VM server routes (plain HTTP) from a fresh virtual desktop, "
            "for OSWorld's own harness (docs/osworld.md)",
        ),
    ] = False,
    host: Annotated[str, typer.Option(help="--osworld: the address to bind")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="--osworld: the port (0: any free one)")] = 5000,
    files: Annotated[
        Path | None,
        typer.Option(metavar="DIR", help="--osworld: the dataset's files (download steps)"),
    ] = None,
) -> None:
    """Serve the desktop tools (screenshots, control tree, input, windows, the shell)
    over MCP. The shell policy holds for what clients send. With --osworld, OSWorld's VM
    server routes instead (plain HTTP, docs/osworld.md)."""
    if osworld:
        if stdio or http is not None:
            raise _fail("--osworld serves plain HTTP on --host/--port: not with --stdio/--http")
        if desktop not in (None, "virtual"):
            raise _fail("--osworld serves a fresh virtual desktop (it is replaced on reset)")
        _serve_osworld(host, port, files)
        return
    if stdio and http is not None:
        raise _fail("give --stdio or --http, not both")
    try:
        settings = load_settings(overrides={"assume_yes": yes or None})
        address = parse_address(http) if http is not None else None
    except (ConfigError, ValueError) as error:
        raise _fail(str(error)) from None
    token = os.environ.get(TOKEN_ENV) or None
    problem = token_problem(address[0], token) if address is not None else None
    if problem is not None:
        raise _fail(problem)
    # stdout is the MCP channel under --stdio: everything else goes to stderr.
    logging.basicConfig(level=logging.WARNING, format="roundhouse: %(message)s")
    # A server is stopped with SIGTERM: unwind, so a virtual desktop started for it stops too.
    signal.signal(signal.SIGTERM, exit_on_sigterm)
    # Under --stdio, stdin is the protocol: nobody can be asked there.
    asks = address is not None and sys.stdin.isatty()
    user = TerminalUser(settings.assume_yes) if asks else NonInteractiveUser(settings.assume_yes)
    with open_cli_desktop(desktop, settings.desktop, session) as opened:
        asyncio.run(_serve(opened, settings, user, address, token, timeout))


def _serve_osworld(host: str, port: int, files: Path | None) -> None:
    from roundhouse.osworld.files import FileCache
    from roundhouse.osworld.server import serve as serve_osworld

    if not 0 <= port < 65536:
        raise _fail(f"--port {port}: expected 0..65535")
    if files is not None and not files.is_dir():
        raise _fail(f"--files {files} is no folder")
    token = os.environ.get(TOKEN_ENV) or None
    problem = token_problem(host, token)
    if problem is not None:
        raise _fail(problem)
    logging.basicConfig(level=logging.WARNING, format="roundhouse: %(message)s")
    signal.signal(signal.SIGTERM, exit_on_sigterm)

    def ready(bound: int) -> None:
        typer.echo(f"roundhouse: serving OSWorld's routes on http://{host}:{bound}", err=True)

    cache = FileCache(files) if files is not None else None
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve_osworld(host, port, token, cache, ready))


def exit_on_sigterm(signum: int, frame: FrameType | None) -> None:
    """A SIGTERM handler that unwinds (context managers stop what they started)."""
    raise SystemExit(128 + signum)


async def _serve(
    desktop: Desktop,
    settings: Settings,
    user: UserChannel,
    address: tuple[str, int] | None,
    token: str | None,
    timeout: float,
) -> None:
    from roundhouse.devices.mcp import server as mcp  # the SDK is slow to load: only when serving

    async with open_registry(
        desktop, settings, extra=engine_tools(settings, user, desktop)
    ) as registry:
        if address is None:
            await mcp.serve_stdio(registry, timeout)
        else:
            host, port = address
            typer.echo(f"roundhouse: serving MCP on http://{host}:{port}/mcp", err=True)
            await mcp.serve_http(registry, host, port, token, timeout)
