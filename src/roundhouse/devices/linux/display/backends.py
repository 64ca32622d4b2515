"""The display backends roundhouse drives, and which one a session is.

Every backend is a record (display/backend.py) in a folder of its own; BACKENDS lists them,
in the order a session's environment is matched against them. Nothing else names a kind.

A session is X11 or Wayland (XDG_SESSION_TYPE, else which display variable is set). A
Wayland session's backend is the one XDG_CURRENT_DESKTOP names, else the one whose variable
its session sets (SWAYSOCK), else the one whose Wayland globals its compositor offers.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Set
from contextlib import contextmanager
from typing import Protocol

from roundhouse.devices.contract import WindowInfo
from roundhouse.devices.linux.display.backend import CAPABILITIES, Backend
from roundhouse.devices.linux.display.base import DisplayServer, DisplayUnavailable, Screen
from roundhouse.devices.linux.display.changes import Changes
from roundhouse.devices.linux.display.gnome.backend import GNOME
from roundhouse.devices.linux.display.kde.backend import KDE
from roundhouse.devices.linux.display.labwc.backend import LABWC
from roundhouse.devices.linux.display.wayland.dbus import DBusCallError
from roundhouse.devices.linux.display.wayland.globals import bind_outputs, desktop_box
from roundhouse.devices.linux.display.wayland.wire import Connection, WaylandError
from roundhouse.devices.linux.display.wlroots.backend import SWAY
from roundhouse.devices.linux.display.x11.backend import X11
from roundhouse.devices.linux.display.x11.backend import screen_size as x11_screen_size

BACKENDS: tuple[Backend, ...] = (X11, SWAY, LABWC, GNOME, KDE)
SESSION_KINDS: tuple[str, ...] = tuple(backend.kind for backend in BACKENDS)
DEFAULT_KIND = X11.kind  # what a virtual desktop runs when nothing says


class UnknownKind(ValueError):
    """A session kind no backend has; the message names the kinds there are."""


def named(kind: str | None) -> Backend:
    """The backend of this kind ("sway"; None: DEFAULT_KIND); UnknownKind naming the kinds
    otherwise."""
    kind = kind or DEFAULT_KIND
    for backend in BACKENDS:
        if backend.kind == kind:
            return backend
    raise UnknownKind(f"no session kind {kind!r}: roundhouse drives {', '.join(SESSION_KINDS)}")


def screen_size(env: Mapping[str, str], timeout: float = 5.0) -> tuple[int, int]:
    """The size of the session's whole desktop in logical pixels (the box of every
    monitor); DisplayUnavailable saying why it cannot be read."""
    if not is_wayland(env):
        return x11_screen_size(env.get("DISPLAY", ""))
    try:
        with Connection.open(env, timeout) as wayland:
            box = desktop_box(bind_outputs(wayland))
    except WaylandError as error:
        raise DisplayUnavailable(f"the Wayland session is not usable: {error}") from None
    return box.right, box.bottom


@contextmanager
def screen_alone(desktop: OnDisplay) -> Iterator[tuple[Screen, Changes | None]]:
    """The desktop's screen and what says it drew, opened sending the session nothing (a
    viewer's: roundhouse watch); DisplayUnavailable as open_display says it."""
    backend = named(desktop.kind)
    if backend.screen_alone is not None:
        with backend.screen_alone(desktop.env) as seen:
            yield seen
        return
    with open_display(desktop) as display:
        yield display.screen, display.drawn


def capability_table() -> str:
    """The README's table of what roundhouse uses on each kind of session, in Markdown,
    from the records (tests/test_backends.py holds the README to it): each capability's
    routes in the order they are tried, how the person is seen, and the one-time setup."""
    head = ("your session", *CAPABILITIES, "your input; a locked screen", "what you do once")
    lines = [_row(head), _row(("---",) * len(head))]
    for backend in BACKENDS:
        routes = [
            "; else ".join(r.name for r in backend.routes if r.capability == capability)
            for capability in CAPABILITIES
        ]
        setup = next(
            (r.fix for r in backend.routes if r.fix.startswith("roundhouse setup ")), "nothing"
        )
        lines.append(_row((backend.title, *routes, backend.person_watch, f"{setup}")))
    return "\n".join(lines) + "\n"


def _row(cells: tuple[str, ...]) -> str:
    return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"


def is_wayland(env: Mapping[str, str]) -> bool:
    """Whether the session is Wayland: XDG_SESSION_TYPE says so, or it says nothing and
    WAYLAND_DISPLAY is set."""
    session_type = env.get("XDG_SESSION_TYPE", "").lower()
    if session_type in ("x11", "tty"):
        return False
    return bool(env.get("WAYLAND_DISPLAY")) or session_type == "wayland"


def named_in(env: Mapping[str, str]) -> Backend | None:
    """The backend the session's environment names, without asking its compositor (pure):
    X11; else an entry of XDG_CURRENT_DESKTOP; else a variable only one session sets."""
    if not is_wayland(env):
        return X11
    wayland = [backend for backend in BACKENDS if backend.wayland]
    for name in env.get("XDG_CURRENT_DESKTOP", "").split(":"):
        for backend in wayland:
            if name.strip().lower() in backend.desktop_names:
                return backend
    return next((b for b in wayland if any(env.get(mark) for mark in b.marks)), None)


def detect(env: Mapping[str, str]) -> Backend:
    """The backend of the session of `env` (named_in, else the compositor's globals);
    DisplayUnavailable for a compositor roundhouse does not drive."""
    backend = named_in(env)
    if backend is not None:
        return backend
    try:
        with Connection.open(env) as wayland:
            offered = {found.interface for found in wayland.registry().values()}
    except WaylandError as error:
        raise DisplayUnavailable(f"the Wayland session is not usable: {error}") from None
    return offering(offered, env)


def offering(offered: Set[str], env: Mapping[str, str]) -> Backend:
    """The first backend one of whose telling globals a compositor offers (pure)."""
    for backend in BACKENDS:
        if backend.offers & offered:
            return backend
    desktop = env.get("XDG_CURRENT_DESKTOP") or "not set"
    drives = ", ".join(backend.kind for backend in BACKENDS if backend.wayland)
    raise DisplayUnavailable(
        f"this Wayland compositor is not one roundhouse drives (XDG_CURRENT_DESKTOP: "
        f"{desktop}; it offers none of the interfaces roundhouse looks for): roundhouse "
        f"drives {drives}. Set XDG_CURRENT_DESKTOP if yours is one of them, or run an X11 "
        "session."
    )


class OnDisplay(Protocol):
    """What a display is opened for: a desktop of a kind, with its environment."""

    @property
    def kind(self) -> str: ...

    @property
    def env(self) -> dict[str, str]: ...

    @property
    def virtual(self) -> bool:
        """A desktop roundhouse started, not a person's own (backend.Opener)."""


def open_display(desktop: OnDisplay) -> DisplayServer:
    """The display server of `desktop`, connected through its backend's routes."""
    backend = named(desktop.kind)
    try:
        return backend.open(desktop.env, virtual=desktop.virtual)
    except DisplayUnavailable:
        raise
    except (WaylandError, DBusCallError, OSError, RuntimeError) as error:
        raise DisplayUnavailable(f"cannot drive this {backend.kind} session: {error}") from None


def list_windows(desktop: OnDisplay) -> list[WindowInfo]:
    """One-off listing (connects and disconnects); keep a DisplayServer for more."""
    with open_display(desktop) as display:
        return display.windows.list_windows()
