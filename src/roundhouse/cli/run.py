"""`roundhouse run` and `roundhouse chat`: a request (or a line at a time) as rounds."""

from __future__ import annotations

import asyncio
import functools
import inspect
import os
import sys
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Annotated, Any, TypeVar, get_type_hints

import typer

from roundhouse.agents.user import TerminalUser
from roundhouse.cli.app import app
from roundhouse.cli.desktop import DesktopOption, SessionOption, desktop_mode, session_kind
from roundhouse.cli.display import StepPrinter
from roundhouse.config import ConfigError, Settings, ShellPolicy, load_settings
from roundhouse.core.events import Observer
from roundhouse.core.limits import LimitReached
from roundhouse.core.person import StoppedByPerson
from roundhouse.core.record import RoundRecord
from roundhouse.core.user import NonInteractiveUser, UserChannel
from roundhouse.engine.compose import DESKTOP_AGENTS, agent_kind, compose_session
from roundhouse.engine.person import HAND_BACK_SIGNAL, paused_run
from roundhouse.engine.session import Session, cost_line
from roundhouse.logs.resume import ResumePlan, mark_interrupted, plan_resume
from roundhouse.logs.store import SESSION_FILE

T = TypeVar("T")

EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_CANCELLED = 130

ModelOption = Annotated[
    str | None,
    typer.Option(
        "--model",
        "-m",
        help=(
            "offline (default), replay:FILE, openai:NAME; with --agent computer anthropic:NAME, "
            "openai-computer:NAME, gemini:NAME, uitars:NAME, qwen-vl:NAME or opencua:NAME"
        ),
    ),
]
AgentOption = Annotated[
    str | None,
    typer.Option(
        help="host: the GUI agents on a desktop; linux: the shell; computer: one "
        "computer-use model by pixels (default: host when there is a desktop)"
    ),
]
McpOption = Annotated[
    str | None,
    typer.Option(
        help="Drive the desktop of `roundhouse serve --http` at this URL (…/mcp; its token "
        "from RH_MCP_TOKEN), or of a command that serves MCP on stdio"
    ),
]
MaxCostOption = Annotated[
    float | None,
    typer.Option(help="Dollars the session may spend on model calls (default: no cap)"),
]
MaxRequestsOption = Annotated[
    int | None,
    typer.Option(help="Model requests the session may send, retries included (default: no cap)"),
]
MaxTokensOption = Annotated[
    int | None,
    typer.Option(help="Tokens, input and output, the session's models may use (default: no cap)"),
]
LogsOption = Annotated[Path | None, typer.Option(help="Folder for the log folders (default: logs)")]
TaskOption = Annotated[str | None, typer.Option(help="Name of this session's log folder")]
MaxStepOption = Annotated[int | None, typer.Option(help="Most steps a round may take")]
MaxActionsOption = Annotated[
    int | None,
    typer.Option(help="Most actions one answer may hold, run in order (1: one per model call)"),
]
YesOption = Annotated[bool, typer.Option("--yes", "-y", help="Approve confirmations")]
ConfigOption = Annotated[
    Path | None, typer.Option(help="Settings file (default: ./roundhouse.yaml)")
]
RecordOption = Annotated[
    Path | None, typer.Option("--record", help="Write every model answer to FILE, for replay:FILE")
]
PolicyOption = Annotated[
    ShellPolicy | None, typer.Option(help="Destructive shell commands: confirm, allow or deny")
]
WatchOption = Annotated[
    bool,
    typer.Option(
        "--watch",
        help="Show the run live on a loopback web page (its URL on stderr), where you can "
        "take control, hand back or stop it",
    ),
]
RecordVideoOption = Annotated[
    bool,
    typer.Option(
        "--record-video",
        help="Record the screen during the run (10 fps, screen.webm in the log folder; the "
        "report embeds it instead of the video of the step screenshots)",
    ),
]


@dataclass(frozen=True)
class SessionOptions:
    """The options run and chat share (the commands declare them once, through
    `session_command`)."""

    model: ModelOption = None
    agent: AgentOption = None
    desktop: DesktopOption = None
    session: SessionOption = None
    mcp: McpOption = None
    logs: LogsOption = None
    task: TaskOption = None
    max_step: MaxStepOption = None
    max_actions: MaxActionsOption = None
    max_cost: MaxCostOption = None
    max_requests: MaxRequestsOption = None
    max_tokens: MaxTokensOption = None
    yes: YesOption = False
    shell_policy: PolicyOption = None
    record: RecordOption = None
    config: ConfigOption = None
    watch: WatchOption = False
    record_video: RecordVideoOption = False

    def settings(self) -> Settings:
        return build_settings(
            model=self.model,
            agent=self.agent,
            desktop=desktop_settings(self.desktop, self.session),
            mcp=self.mcp,
            logs=self.logs,
            task=self.task,
            max_step=self.max_step,
            max_actions=self.max_actions,
            max_cost=self.max_cost,
            max_requests=self.max_requests,
            max_tokens=self.max_tokens,
            assume_yes=self.yes or None,
            shell_policy=self.shell_policy,
            record_answers=self.record,
            config=self.config,
        )


def session_command(command: Callable[..., None]) -> Callable[..., None]:
    """A command whose last parameter is `options: SessionOptions` gets the shared options
    as its own (typer reads the signature), and receives them as one value."""
    hints = get_type_hints(SessionOptions, include_extras=True)
    shared = [
        inspect.Parameter(
            field.name,
            inspect.Parameter.KEYWORD_ONLY,
            default=field.default,
            annotation=hints[field.name],
        )
        for field in fields(SessionOptions)
    ]
    signature = inspect.signature(command)
    resolved = get_type_hints(command, include_extras=True)  # typer needs them evaluated
    own = [
        p.replace(annotation=resolved[p.name])
        for p in signature.parameters.values()
        if p.name != "options"
    ]

    @functools.wraps(command)
    def with_options(*args: Any, **kwargs: Any) -> None:
        options = SessionOptions(**{p.name: kwargs.pop(p.name) for p in shared})
        command(*args, options=options, **kwargs)

    with_options.__signature__ = signature.replace(parameters=[*own, *shared])  # type: ignore[attr-defined]
    return with_options


def desktop_settings(desktop: str | None, session: str | None) -> dict[str, str] | None:
    """--desktop and --session as the settings' desktop section (None: neither given)."""
    section = {"mode": desktop_mode(desktop)} if desktop else {}
    if session:
        section["session"] = session_kind(session)
    return section or None


def build_settings(
    restored: tuple[str, Mapping[str, Any]] | None = None, **flags: object
) -> Settings:
    config = flags.pop("config", None)
    try:
        return load_settings(
            config if isinstance(config, Path) else None, overrides=flags, restored=restored
        )
    except ConfigError as error:
        typer.echo(f"roundhouse: {error}", err=True)
        raise typer.Exit(EXIT_USAGE) from None


def in_session(
    settings: Settings,
    work: Callable[[Session], Awaitable[T]],
    *,
    resume: ResumePlan | None = None,
    watch: bool = False,
    record_video: bool = False,
) -> tuple[Session, T]:
    """Open the session the settings describe (engine/compose.py), do a command's work in
    it, and on Ctrl-C say where the (cancelled) work is recorded and exit 130. With `watch`
    the run is shown on a local page (roundhouse/watch/), and `record_video` records its
    screen."""
    sessions: list[Session] = []
    interactive = sys.stdin.isatty()
    user: UserChannel = (
        TerminalUser(settings.assume_yes)
        if interactive
        else NonInteractiveUser(settings.assume_yes)
    )

    async def main() -> T:
        printer = StepPrinter(sys.stderr)
        if watch or record_video:
            return await watched(
                settings, work, sessions, user, printer, resume, watch, record_video
            )
        async with compose_session(
            settings, resume=resume, user=user, observers=[printer]
        ) as session:
            sessions.append(session)
            return await work(session)

    try:
        result = run_async(main())
    except KeyboardInterrupt:
        where = f" in {sessions[0].store.folder}" if sessions else ""
        typer.echo(f"\ncancelled; it is recorded{where}", err=True)
        raise typer.Exit(EXIT_CANCELLED) from None
    except StoppedByPerson:
        folder = sessions[0].store.folder
        typer.echo(
            f"\nstopped from the watch page; it is recorded in {folder}: "
            f"`roundhouse resume {folder}` carries it on",
            err=True,
        )
        raise typer.Exit(EXIT_CANCELLED) from None
    return sessions[0], result


async def watched(
    settings: Settings,
    work: Callable[[Session], Awaitable[T]],
    sessions: list[Session],
    user: UserChannel,
    printer: StepPrinter,
    resume: ResumePlan | None,
    serve: bool,
    record: bool,
) -> T:
    """The session on a desktop opened first, to be watched (and recorded) as it runs."""
    if agent_kind(settings) not in DESKTOP_AGENTS or settings.mcp is not None:
        raise ConfigError(
            "--watch and --record-video need a desktop here (not --mcp, not --agent linux)"
        )

    from roundhouse.watch.run import watching  # the web stack: only for --watch

    def ready(url: str) -> None:
        typer.echo(f"roundhouse: watch the run at {url}", err=True)

    async with watching(settings.desktop, serve=serve, ready=ready) as seen:
        observers: list[Observer] = [printer, seen.watched.feed]
        hand_back = seen.control.hand_back if seen.control is not None else None
        async with compose_session(
            settings, resume=resume, user=user, observers=observers,
            hand_back=hand_back, desktop=seen.desktop,
        ) as session:  # fmt: skip
            sessions.append(session)
            seen.watched.feed.log_folder = session.store.folder  # the step cards' screenshots
            return await seen.run(_awaited(work(session)), session.store.folder, record)


async def _awaited(pending: Awaitable[T]) -> T:
    return await pending


def run_async(main: Coroutine[Any, Any, T]) -> T:
    """Run the command's work; usage problems found on the way exit 2."""
    try:
        return asyncio.run(main)
    except ConfigError as error:
        typer.echo(f"roundhouse: {error}", err=True)
        raise typer.Exit(EXIT_USAGE) from None


def report(outcome: RoundRecord, session: Session) -> None:
    typer.echo(f"\n{outcome.state}: {outcome.result or outcome.error or ''}".rstrip())
    if outcome.error and outcome.result and outcome.error != outcome.result:
        typer.echo(f"error: {outcome.error}")
    typer.echo(cost_line(outcome.usage))
    typer.echo(f"Logs: {session.store.folder}")


@app.command()
@session_command
def run(
    request: Annotated[str, typer.Argument(help="What you want done, in plain language")],
    options: SessionOptions,
) -> None:
    """Run one request as a round and print its answer, its cost and its log folder."""
    settings = options.settings()
    session, outcome = in_session(
        settings,
        lambda session: session.run_round(request),
        watch=options.watch,
        record_video=options.record_video,
    )
    report(outcome, session)
    raise typer.Exit(0 if outcome.finished else EXIT_FAILED)


@app.command()
@session_command
def chat(options: SessionOptions) -> None:
    """One session: each line you type is a round. Ctrl-D ends it."""
    settings = options.settings()
    interactive = sys.stdin.isatty()
    session, _ = in_session(
        settings,
        lambda session: _chat(session, interactive),
        watch=options.watch,
        record_video=options.record_video,
    )
    typer.echo(cost_line(session.usage, scope="this session"))
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
        except LimitReached as limit:  # max_round
            typer.echo(f"roundhouse: {limit}; ending the session", err=True)
            break
        report(outcome, session)


@app.command()
def resume(
    log_dir: Annotated[Path, typer.Argument(help="The log folder of the session to carry on")],
    model: ModelOption = None,
    desktop: DesktopOption = None,
    mcp: McpOption = None,
    max_cost: MaxCostOption = None,
    max_requests: MaxRequestsOption = None,
    max_tokens: MaxTokensOption = None,
    yes: YesOption = False,
) -> None:
    """Carry on a session that was killed or cancelled, or whose desktop was lost: finished
    rounds are kept, an unfinished one (or one ended by a lost device) is run again,
    blackboard and cost are restored."""
    try:
        plan = plan_resume(log_dir)
    except ConfigError as error:
        typer.echo(f"roundhouse: {error}", err=True)
        raise typer.Exit(EXIT_USAGE) from None
    waiting = paused_run(plan.record)
    if waiting is not None:  # the run is alive and waits for the person: hand back to it
        os.kill(waiting.pid, HAND_BACK_SIGNAL)
        typer.echo(f"roundhouse: handed the desktop back to the run (pid {waiting.pid})", err=True)
        raise typer.Exit(0)
    settings = build_settings(
        restored=(str(log_dir / SESSION_FILE), plan.record.settings),  # the session's, whole
        model=model,
        agent=plan.record.agent.value,
        desktop={"mode": desktop_mode(desktop)} if desktop else None,
        mcp=mcp,
        logs=log_dir.parent,
        max_cost=max_cost,  # a limit given here replaces the session's own
        max_requests=max_requests,
        max_tokens=max_tokens,
        assume_yes=yes or None,
    )
    typer.echo(
        f"roundhouse: {len(plan.kept)} rounds kept, {len(plan.interrupted)} to run again",
        err=True,
    )

    async def carry_on(session: Session) -> list[RoundRecord]:
        mark_interrupted(session.events, plan)
        return [await session.run_round(request) for request in plan.requests]

    session, outcomes = in_session(settings, carry_on, resume=plan)
    for outcome in outcomes:
        report(outcome, session)
    typer.echo(cost_line(session.usage, scope="this session"))
    raise typer.Exit(0 if all(outcome.finished for outcome in outcomes) else EXIT_FAILED)
