"""A display backend, declared once: the record every part of roundhouse reads about it.

A backend is one way of driving one kind of session (X11, sway, GNOME, KDE, labwc): how it
is recognised in a session's environment, how it opens, the routes it takes for input,
the screen and the windows with what each needs from the session and the fix when it is
refused, and the compositor a virtual desktop of its kind starts. Its code is one folder of
display/ with its record in that folder's backend.py; display/backends.py lists them.

    record = backends.detect(env)            # or backends.named("sway")
    display = record.open(env, virtual=False)  # a DisplayServer: input, screen, windows
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Literal, Protocol

from roundhouse.devices.linux.display.base import DisplayServer, Screen
from roundhouse.devices.linux.display.changes import Changes
from roundhouse.devices.linux.display.compositor import Compositor
from roundhouse.devices.linux.display.shortcuts import Listener, Shortcut

Capability = Literal["input", "screenshots", "windows"]
CAPABILITIES: tuple[Capability, ...] = ("input", "screenshots", "windows")


@dataclass(frozen=True)
class Route:
    """One way a capability reaches the display server, and what the session must allow."""

    capability: Capability
    name: str  # as doctor and the routes of a DisplayServer name it: "XTest"
    needs: str  # what the session must allow for it ("none: any X client may")
    fix: str = ""  # the one step that grants it where it is refused


class SetupFailed(RuntimeError):
    """A backend's one-time setup could not be done; the message says why and what to do."""


@dataclass
class Outcome:
    """What a setup (or its undoing) did, in lines a person reads, and why a log-out is
    still needed, if one is."""

    done: list[str] = field(default_factory=list)
    log_out: str = ""


Setup = Callable[[Mapping[str, str]], Outcome]
# Optional capabilities, which OSWorld's environments ask of a session (osworld/env.py):
# desktop-wide keys bound for a program (display/shortcuts.py); every window left at its
# own size, not tiled; a program's first window waited for and maximised where asked
# (env, its window class, maximise, timeout).
BindKeys = Callable[[Mapping[str, str], Sequence[Shortcut]], Listener]
FloatWindows = Callable[[Mapping[str, str]], None]
WhenShown = Callable[[Mapping[str, str], str, bool, float], None]
# The screen (and what says it drew) alone, for a viewer (roundhouse watch), where opening
# the display whole would send the session something (GNOME: a remote desktop's warm-up).
ScreenAlone = Callable[[Mapping[str, str]], AbstractContextManager[tuple[Screen, Changes | None]]]


class Opener(Protocol):
    """How a backend connects to a session: `env`, its environment; `virtual`, whether it is
    a desktop roundhouse started (Desktop.virtual), where what the display server is asked
    may touch what a person's own session must never have touched (wlroots' person watch
    takes the session lock there to find a locker, and on a person's never)."""

    def __call__(self, env: Mapping[str, str], *, virtual: bool) -> DisplayServer: ...


def setup_command(
    argv: list[str], env: Mapping[str, str] | None = None, check: bool = True, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """Run one command of a setup, bounded; SetupFailed saying what failed."""
    try:
        done = subprocess.run(
            argv, env=None if env is None else dict(env), capture_output=True, text=True,
            timeout=timeout,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as error:
        raise SetupFailed(f"{' '.join(argv)} failed: {error}") from None
    if check and done.returncode != 0:
        raise SetupFailed(f"{' '.join(argv)} failed: {done.stderr.strip()}")
    return done


def taken(*routes: Route) -> dict[str, str]:
    """The routes an opened DisplayServer took, by capability (its `routes`)."""
    return {route.capability: route.name for route in routes}


@dataclass(frozen=True)
class Backend:
    """One display backend: what roundhouse knows of it, in one place."""

    kind: str  # what --session takes and a Desktop carries: "sway"
    title: str  # as a person names it, with the versions driven: "GNOME 43–48"
    family: str  # the compositor family it belongs to: "wlroots"
    wayland: bool
    # How a session of this kind is recognised: an entry of XDG_CURRENT_DESKTOP (any case),
    # a variable its session sets (SWAYSOCK), else a Wayland global that tells it apart
    # (any one of `offers`: a person's KWin hides its fake input, not its plasma shell).
    desktop_names: tuple[str, ...]
    marks: tuple[str, ...]
    offers: frozenset[str]
    routes: tuple[Route, ...]  # each capability's, in the order open() tries them
    open: Opener
    # How a virtual desktop of this kind runs headless; what it sets XDG_CURRENT_DESKTOP to,
    # and the variables beyond the standard ones a terminal in it has (export lines).
    compositor: Compositor
    current_desktop: str = ""
    exports: tuple[str, ...] = ()
    # Settings a person's session may have switched off that this kind's apps need for their
    # trees: (gsettings schema, key, the value wanted, what is wrong otherwise).
    settings: tuple[tuple[str, str, str, str], ...] = ()
    # The Debian packages roundhouse's routes use on a person's session of this kind (not
    # its compositor, which the session has): doctor names those missing.
    person_packages: tuple[str, ...] = ("at-spi2-core", "libatk-adaptor")
    # Its virtual session runs X11-only programs (an X server, or XWayland).
    runs_x11_programs: bool = False
    # What a person does once on their own session of this kind for the routes it refuses
    # to unknown programs (`roundhouse setup KIND`), and undoes (`roundhouse setup --undo`).
    setup: Setup | None = None
    undo: Setup | None = None
    # How a run sees the person (their input, and a locked screen) on this kind: what
    # display/KIND/person.py reads, as the README's table says it.
    person_watch: str = ""
    # The interpreter roundhouse must run as in such a session (one a desktop file vouches
    # for), when it is not this process's already: the command starts itself again as it.
    relaunch: Callable[[Mapping[str, str]], str | None] | None = None
    # What only some sessions offer (see BindKeys above); None where this kind cannot.
    bind_keys: BindKeys | None = None
    float_windows: FloatWindows | None = None
    when_shown: WhenShown | None = None
    screen_alone: ScreenAlone | None = None

    @property
    def session_type(self) -> Literal["x11", "wayland"]:
        """As XDG_SESSION_TYPE names it."""
        return "wayland" if self.wayland else "x11"

    def route(self, capability: Capability, name: str | None = None) -> Route:
        """The capability's route of that name, else its first (the preferred one)."""
        offered = [route for route in self.routes if route.capability == capability]
        return next((route for route in offered if route.name == name), offered[0])

    def needs(self) -> dict[Capability, str]:
        """What each capability's preferred route needs from the session."""
        return {capability: self.route(capability).needs for capability in CAPABILITIES}
