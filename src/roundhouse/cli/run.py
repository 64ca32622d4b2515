"""`roundhouse run` and `roundhouse chat`: a request (or a line at a time) as rounds."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Annotated

import typer

from roundhouse.agents.user import NonInteractiveUser, TerminalUser, UserChannel
from roundhouse.cli.app import app
from roundhouse.cli.display import StepPrinter
from roundhouse.config import ConfigError, Settings, ShellPolicy, load_settings
from roundhouse.devices.base import LocalDispatcher, ToolRegistry
from roundhouse.devices.shell import ShellTools
from roundhouse.events import EventBus
from roundhouse.round import RoundOutcome
from roundhouse.session import Session, SessionLimit, cost_line
from roundhouse.states import AgentKind
from roundhouse.store import LogStore

EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_CANCELLED = 130

ModelOption = Annotated[
    str | None,
    typer.Option("--model", "-m", help="offline (default), replay:FILE or openai:NAME"),
]
AgentOption = Annotated[str | None, typer.Option(help="linux: act through the shell")]
LogsOption = Annotated[Path | None, typer.Option(help="Folder for the log folders [default: logs]")]
TaskOption = Annotated[str | None, typer.Option(help="Name of this session's log folder")]
MaxStepOption = Annotated[int | None, typer.Option(help="Most steps a round may take")]
YesOption = Annotated[bool, typer.Option("--yes", "-y", help="Approve confirmations")]
ConfigOption = Annotated[
    Path | None, typer.Option(help="Settings file [default: ./roundhouse.yaml]")
]
PolicyOption = Annotated[
    ShellPolicy | None, typer.Option(help="Destructive shell commands: confirm, allow or deny")
]


def build_settings(**flags: object) -> Settings:
    config = flags.pop("config", None)
    try:
        return load_settings(config if isinstance(config, Path) else None, overrides=flags)
    except ConfigError as error:
        typer.echo(f"roundhouse: {error}", err=True)
        raise typer.Exit(EXIT_USAGE) from None


def build_session(settings: Settings, interactive: bool) -> Session:
    if settings.agent == "host":
        typer.echo("roundhouse: the GUI agents (--agent host) are not built yet", err=True)
        raise typer.Exit(EXIT_USAGE)
    registry = ToolRegistry(ShellTools(settings).tools())
    user: UserChannel = (
        TerminalUser(settings.assume_yes)
        if interactive
        else NonInteractiveUser(settings.assume_yes)
    )
    events = EventBus()
    events.subscribe(StepPrinter(sys.stderr))
    store = LogStore.create(settings.logs, settings.task)
    session = Session(
        settings,
        store=store,
        dispatcher=LocalDispatcher(registry),
        user=user,
        events=events,
        agent_kind=AgentKind.LINUX,
    )
    try:  # build the agents once now, so a bad model spec is a usage error before any round
        session.new_agents()
    except ConfigError as error:
        typer.echo(f"roundhouse: {error}", err=True)
        raise typer.Exit(EXIT_USAGE) from None
    return session


def report(outcome: RoundOutcome) -> None:
    typer.echo(f"\n{outcome.state}: {outcome.result or outcome.error or ''}".rstrip())
    if outcome.error and outcome.result and outcome.error != outcome.result:
        typer.echo(f"error: {outcome.error}")
    typer.echo(cost_line(outcome.cost))
    typer.echo(f"Logs: {outcome.log_dir}")


@app.command()
def run(
    request: Annotated[str, typer.Argument(help="What you want done, in plain language")],
    model: ModelOption = None,
    agent: AgentOption = None,
    logs: LogsOption = None,
    task: TaskOption = None,
    max_step: MaxStepOption = None,
    yes: YesOption = False,
    shell_policy: PolicyOption = None,
    config: ConfigOption = None,
) -> None:
    """Run one request as a round and print its answer, its cost and its log folder."""
    settings = build_settings(
        model=model,
        agent=agent,
        logs=logs,
        task=task,
        max_step=max_step,
        assume_yes=yes or None,
        shell_policy=shell_policy,
        config=config,
    )
    session = build_session(settings, interactive=sys.stdin.isatty())
    try:
        outcome = asyncio.run(session.run_round(request))
    except KeyboardInterrupt:
        typer.echo(f"\ncancelled; the round is recorded in {session.store.folder}", err=True)
        raise typer.Exit(EXIT_CANCELLED) from None
    report(outcome)
    raise typer.Exit(0 if outcome.finished else EXIT_FAILED)


@app.command()
def chat(
    model: ModelOption = None,
    agent: AgentOption = None,
    logs: LogsOption = None,
    task: TaskOption = None,
    max_step: MaxStepOption = None,
    yes: YesOption = False,
    shell_policy: PolicyOption = None,
    config: ConfigOption = None,
) -> None:
    """One session: each line you type is a round. Ctrl-D ends it."""
    settings = build_settings(
        model=model,
        agent=agent,
        logs=logs,
        task=task,
        max_step=max_step,
        assume_yes=yes or None,
        shell_policy=shell_policy,
        config=config,
    )
    interactive = sys.stdin.isatty()
    session = build_session(settings, interactive=interactive)
    try:
        asyncio.run(_chat(session, interactive))
    except KeyboardInterrupt:
        typer.echo(f"\ncancelled; the session is recorded in {session.store.folder}", err=True)
        raise typer.Exit(EXIT_CANCELLED) from None
    typer.echo(cost_line(session.cost, scope="this session"))
    typer.echo(f"Logs: {session.store.folder}")
    failed = any(not outcome.finished for outcome in session.outcomes)
    raise typer.Exit(EXIT_FAILED if failed else 0)


async def _chat(session: Session, interactive: bool) -> None:
    while True:
        if interactive:
            typer.echo("you> ", nl=False, err=True)
        line = await asyncio.to_thread(sys.stdin.readline)
        if not line:  # Ctrl-D
            break
        if not line.strip():
            continue
        try:
            outcome = await session.run_round(line.strip())
        except SessionLimit as limit:
            typer.echo(f"roundhouse: {limit}; ending the session", err=True)
            break
        report(outcome)
