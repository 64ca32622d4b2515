"""`roundhouse desktop start|stop|status` and `roundhouse tree`.

`desktop start` leaves a virtual desktop running (Xvfb, or with --session a headless
Wayland compositor: sway, labwc, gnome, kde) and prints the shell lines that point programs at it;
`stop` and `status` find it again through its state file. `--desktop` (for `tree`, and for
any command that uses `open_cli_desktop`) takes "current", "virtual" or a started desktop
(":3", "sway-1"); without it the current session is used when there is one, else a
virtual desktop is started for the command.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import ValidationError

from roundhouse.agents.prompting import describe_controls
from roundhouse.cli.app import app
from roundhouse.config import ConfigError, DesktopSettings, load_settings
from roundhouse.devices.contract import UiNode, UiSnapshot, WindowInfo, readable
from roundhouse.devices.linux.atspi.client import AtspiClient, AtspiError, TreeLimits, ui_tree_json
from roundhouse.devices.linux.desktops.desktop import Desktop, DesktopUnavailable
from roundhouse.devices.linux.desktops.detached import DesktopState, detached_states, state_alive
from roundhouse.devices.linux.desktops.opening import open_desktop, start_detached, stop_detached
from roundhouse.devices.linux.display.backends import DEFAULT_KIND, SESSION_KINDS, open_display
from roundhouse.devices.linux.display.base import DisplayUnavailable

desktop_app = typer.Typer(help="Virtual desktops: start one, see which run, stop them.")
app.add_typer(desktop_app, name="desktop")

EXIT_FAILED = 1

DesktopOption = Annotated[
    str | None,
    typer.Option(
        "--desktop",
        help="current, virtual, or a started desktop (:3, sway-1) "
        "(default: the current session, else a virtual one)",
    ),
]
SessionOption = Annotated[
    str | None,
    typer.Option(
        "--session",
        help=f"What a virtual desktop runs: {DEFAULT_KIND} (Xvfb and openbox, the default), or "
        "a headless Wayland compositor: "
        f"{', '.join(kind for kind in SESSION_KINDS if kind != DEFAULT_KIND)}",
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON")]
ShippedOption = Annotated[
    bool,
    typer.Option(
        "--shipped",
        help="With the security its distribution ships, as a person's own session has it "
        "(GNOME Shell without unsafe mode, KWin with its permission checks): for trying "
        "`roundhouse setup` and what works without it",
    ),
]


def _fail(message: str) -> typer.Exit:
    typer.echo(f"roundhouse: {message}", err=True)
    return typer.Exit(EXIT_FAILED)


def _settings() -> DesktopSettings:
    try:
        return load_settings().desktop
    except ConfigError as error:
        raise _fail(str(error)) from None


def with_session(settings: DesktopSettings, session: str | None) -> DesktopSettings:
    """The settings with a virtual desktop's session kind from --session."""
    if session is None:
        return settings
    return settings.model_copy(update={"session": session_kind(session)})


def session_kind(session: str) -> str:
    """--session's value, one of the kinds display/backends.py lists; a usage error else."""
    if session not in SESSION_KINDS:
        raise typer.BadParameter(
            f"{session!r}: expected one of {', '.join(SESSION_KINDS)}", param_hint="--session"
        )
    return session


@contextlib.contextmanager
def open_cli_desktop(
    spec: str | None, settings: DesktopSettings | None = None, session: str | None = None
) -> Iterator[Desktop]:
    """The desktop a command's --desktop option names (see the module docstring); a
    virtual one runs what --session asks for."""
    base = with_session(settings or _settings(), session)
    try:
        chosen = base.model_copy(update={"mode": desktop_mode(spec)})
        with open_desktop(chosen) as desktop:
            yield desktop
    except (DesktopUnavailable, DisplayUnavailable) as error:
        raise _fail(str(error)) from None


def desktop_mode(spec: str | None) -> str:
    """--desktop's value as settings.desktop.mode; a usage error names what it takes."""
    if spec is None:
        return "auto"
    try:
        DesktopSettings(mode=spec)
    except ValidationError:
        raise _fail(
            f"--desktop {spec!r}: expected current, virtual or a started desktop (:3, sway-1)"
        ) from None
    return spec


# ---------------------------------------------------------------- desktop start|stop|status


@desktop_app.command("start")
def start(
    width: Annotated[int | None, typer.Option(help="Screen width (default: 1280)")] = None,
    height: Annotated[int | None, typer.Option(help="Screen height (default: 800)")] = None,
    session: SessionOption = None,
    shipped: ShippedOption = False,
    monitors: Annotated[
        int | None,
        typer.Option(
            min=1,
            max=2,
            help="2: a second monitor to the right of the first, 1920x1200 at scale 1.5 "
            "(sway), the first's size at scale 1.5 (kde: KWin's outputs are all one size), "
            "or 1920x1200 at scale 1 (x11)",
        ),
    ] = None,
    layout: Annotated[
        str | None,
        typer.Option(help='The keyboard layout keys are read with, as XKB names it: "de", "fr"'),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Start a virtual desktop that keeps running; print how to use it.

    eval "$(roundhouse desktop start)" points this shell's programs at it: a terminal of
    that session has the same variables, and `--desktop current` then drives it.
    """
    settings = with_session(_settings(), session)
    given = (("width", width), ("height", height), ("monitors", monitors), ("layout", layout))
    updates: dict[str, object] = {key: value for key, value in given if value}
    if shipped:
        updates["shipped"] = True
    try:
        chosen = DesktopSettings.model_validate({**settings.model_dump(), **updates})
    except ValidationError as error:
        raise _fail(f"bad desktop option: {error.errors()[0]['msg']}") from None
    try:
        desktop, path = start_detached(chosen)
    except DesktopUnavailable as error:
        raise _fail(str(error)) from None
    if as_json:
        typer.echo(
            json.dumps(
                {
                    "display": desktop.display,
                    "session": desktop.kind,
                    "env": session_exports(desktop),
                    "state_file": str(path),
                }
            )
        )
        return
    if desktop.wayland:
        typer.echo("unset DISPLAY")
    for name, value in session_exports(desktop).items():
        typer.echo(f"export {name}={shlex.quote(value)}")
    typer.echo(
        f"# virtual {desktop.kind} desktop {desktop.display} "
        f"({desktop.width}x{desktop.height}) started; "
        f"stop it with: roundhouse desktop stop {desktop.display}",
        err=True,
    )


def session_exports(desktop: Desktop) -> dict[str, str]:
    """The variables a terminal in the desktop's session has, that point programs at it."""
    if not desktop.wayland:
        names: tuple[str, ...] = ("DISPLAY", "DBUS_SESSION_BUS_ADDRESS")
    else:
        names = (
            "WAYLAND_DISPLAY",
            "XDG_RUNTIME_DIR",
            "XDG_SESSION_TYPE",
            "XDG_CURRENT_DESKTOP",
            "DBUS_SESSION_BUS_ADDRESS",
        )
    names += desktop.backend.exports  # what its own session sets: sway's SWAYSOCK
    return {name: desktop.env[name] for name in names if desktop.env.get(name)}


@desktop_app.command("stop")
def stop(
    display: Annotated[str | None, typer.Argument(help="Which desktop, e.g. :3")] = None,
    stop_all: Annotated[bool, typer.Option("--all", help="Stop every started desktop")] = False,
) -> None:
    """Stop a desktop started with `roundhouse desktop start`, and every app that ran on it
    (with what they forked); nothing of another desktop, nor the user's own programs."""
    states = detached_states()
    if stop_all:
        chosen = states
    elif display is not None:
        chosen = [(path, state) for path, state in states if state.display == display]
        if not chosen:
            raise _fail(f"no started desktop on {display}; running: {_displays(states)}")
    elif len(states) == 1:
        chosen = states
    else:
        raise _fail(f"which desktop? name one of: {_displays(states)} (or --all)")
    for path, state in chosen:
        stop_detached(state, path)
        typer.echo(f"stopped {state.display}")


@desktop_app.command("status")
def status(as_json: JsonOption = False) -> None:
    """List the desktops started with `roundhouse desktop start`."""
    rows = [_status_row(path, state) for path, state in detached_states()]
    if as_json:
        typer.echo(json.dumps({"desktops": rows}, indent=2))
        return
    if not rows:
        typer.echo("no started desktops")
    for row in rows:
        pids = " ".join(f"{name}={pid}" for name, pid in row["processes"])
        size = f"{row['width']}x{row['height']}"
        typer.echo(f"{row['display']}  {row['session']}  {row['status']}  {size}  {pids}")


def _status_row(path: Path, state: DesktopState) -> dict[str, Any]:
    return {
        "display": state.display,
        "session": state.session,
        "status": "running" if state_alive(state) else "gone (stale state file)",
        "width": state.width,
        "height": state.height,
        "bus_address": state.bus_address,
        "processes": [(record.name, record.pid) for record in state.processes],
        "state_file": str(path),
    }


def _displays(states: list[tuple[Path, DesktopState]]) -> str:
    return ", ".join(state.display for _, state in states) or "none"


# ---------------------------------------------------------------- tree


@app.command("tree")
def tree(
    app_name: Annotated[
        str | None, typer.Option("--app", help="A window of this application")
    ] = None,
    title: Annotated[
        str | None, typer.Option("--window", help="The window whose title contains this")
    ] = None,
    controls: Annotated[
        bool,
        typer.Option(
            "--controls",
            help="The window as the agent's prompt lists it: numbered controls with values "
            "and states, and the text among them",
        ),
    ] = False,
    max_nodes: Annotated[int, typer.Option(help="Cut the tree after this many nodes")] = 5000,
    as_json: JsonOption = False,
    desktop: DesktopOption = None,
) -> None:
    """Print a window's accessibility tree (default: the active window)."""
    with open_cli_desktop(desktop) as opened, open_display(opened) as display:
        windows = display.windows.list_windows()
        window = pick_window(windows, app_name, title)
        if window is None:
            known = "; ".join(f"{w.application}: {w.title!r}" for w in windows) or "none"
            raise _fail(f"no such window (windows: {known})")
        client = AtspiClient(content=display.windows.content)
        try:
            output = asyncio.run(_read(client, opened, window, controls, max_nodes, as_json))
        except AtspiError as error:
            raise _fail(str(error)) from None
    typer.echo(output)


def pick_window(
    windows: list[WindowInfo], app_name: str | None, title: str | None
) -> WindowInfo | None:
    """The first window matching both filters (case-insensitive), the active one first."""
    ordered = sorted(windows, key=lambda window: not window.active)
    for window in ordered:
        if app_name is not None and app_name.lower() not in window.application.lower():
            continue
        if title is not None and title.lower() not in window.title.lower():
            continue
        return window
    return None


async def _read(
    client: AtspiClient,
    desktop: Desktop,
    window: WindowInfo,
    controls: bool,
    max_nodes: int,
    as_json: bool,
) -> str:
    async with client:
        await client.connect(desktop)
        if controls:
            listed = await client.controls(window, TreeLimits(max_nodes=max_nodes))
            if as_json:
                return listed.model_dump_json(indent=2)
            # As the AppAgent's prompt lists them (the rectangles are in --json).
            lines = [f"{window.application}: {window.title!r}"]
            if listed.note:
                lines.append(listed.note)
            lines.append(describe_controls(listed.controls, listed.context))
            return "\n".join(lines)
        snapshot = await client.ui_tree(window, TreeLimits(max_nodes=max_nodes))
        if as_json:
            return json.dumps(ui_tree_json(snapshot), indent=2, ensure_ascii=False)
        return render_tree(snapshot)


# Characters of a node's text the tree prints, on one line; a cut text ends in "…" (a sheet's
# summary cut silently at 40 read "of 1048576 × 163" for 16,384 columns).
TREE_TEXT_LIMIT = 100


def render_tree(snapshot: UiSnapshot) -> str:
    window = snapshot.window
    lines = [f"{window.application}: {window.title!r}" if window else "(no window)"]
    if snapshot.root is None:
        lines.append("no accessibility tree: use screenshots and coordinates")
        return "\n".join(lines)

    def add(node: UiNode, depth: int) -> None:
        rect = f" {node.rect.as_list()}" if node.rect is not None else ""
        text = f" text={readable(node.text, TREE_TEXT_LIMIT)!r}" if node.text else ""
        lines.append(f"{'  ' * depth}{node.role} {node.name!r}{rect}{text}")
        for child in node.children:
            add(child, depth + 1)

    add(snapshot.root, 0)
    footer = f"{snapshot.node_count} nodes in {snapshot.elapsed_ms:.0f} ms"
    if snapshot.truncated:
        footer += f"; cut: {snapshot.truncated_reason}"
    lines.append(footer)
    return "\n".join(lines)
