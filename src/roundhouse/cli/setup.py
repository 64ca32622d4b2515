"""`roundhouse setup KIND`: what a person does once on their own session for roundhouse to
drive it, where the session refuses unknown programs (GNOME: roundhouse's Shell extension;
KDE: a desktop file that vouches for roundhouse's own interpreter), and `--undo`."""

from __future__ import annotations

import os
from typing import Annotated

import typer

from roundhouse.cli.app import app
from roundhouse.cli.desktop import EXIT_FAILED
from roundhouse.devices.linux.display import backends
from roundhouse.devices.linux.display.backend import Backend, Outcome, SetupFailed


def _settable() -> list[Backend]:
    return [backend for backend in backends.BACKENDS if backend.setup is not None]


@app.command("setup")
def setup(
    kind: Annotated[
        str | None,
        typer.Argument(
            help="The session kind to set up: "
            f"{', '.join(b.kind for b in _settable())} (default: this session's)",
            show_default=False,
        ),
    ] = None,
    undo: Annotated[bool, typer.Option("--undo", help="Remove what setup added")] = False,
) -> None:
    """Do once what your own session needs for roundhouse to drive it, and say when a
    log-out is needed. GNOME: install roundhouse's GNOME Shell extension (window positions).
    KDE: vouch for roundhouse's own interpreter to KWin (input and screenshots). --undo
    removes it (without KIND: every kind's)."""
    chosen = _chosen(kind, undo)
    if not chosen:
        session = backends.named_in(os.environ)
        name = session.kind if session is not None else "this session"
        typer.echo(f"roundhouse: nothing to set up on {name}: it lets roundhouse drive it as it is")
        return
    for backend in chosen:
        act = backend.undo if undo else backend.setup
        assert act is not None
        try:
            outcome = act(os.environ)
        except SetupFailed as error:
            typer.echo(f"roundhouse: setup {backend.kind} failed: {error}", err=True)
            raise typer.Exit(EXIT_FAILED) from None
        _say(backend, outcome, undo)


def _chosen(kind: str | None, undo: bool) -> list[Backend]:
    if kind is not None:
        try:
            backend = backends.named(kind)
        except backends.UnknownKind as error:
            raise typer.BadParameter(str(error), param_hint="KIND") from None
        if backend.setup is None:
            return []
        return [backend]
    if undo:
        return _settable()
    session = backends.named_in(os.environ)
    return [session] if session is not None and session.setup is not None else []


def _say(backend: Backend, outcome: Outcome, undo: bool) -> None:
    verb = "undo" if undo else "setup"
    if not outcome.done:
        typer.echo(f"{verb} {backend.kind}: nothing to do")
    for line in outcome.done:
        typer.echo(f"{verb} {backend.kind}: {line}")
    if outcome.log_out:
        typer.echo(f"log out and in once: {outcome.log_out}")
