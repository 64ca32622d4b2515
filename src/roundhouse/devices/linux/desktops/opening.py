"""The desktop a command works on, as the settings name it: the current session, a new
virtual desktop, or one `roundhouse desktop start` left running; and starting and stopping
such detached desktops."""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator
from pathlib import Path

from roundhouse.config import DesktopSettings
from roundhouse.devices.linux.desktops.desktop import Desktop, DesktopUnavailable, current_desktop
from roundhouse.devices.linux.desktops.detached import (
    DesktopState,
    detached_states,
    state_alive,
    state_dir,
)
from roundhouse.devices.linux.desktops.reaper import TAG_ENV
from roundhouse.devices.linux.desktops.session import wayland_env, without_session, x11_env
from roundhouse.devices.linux.desktops.virtual import VirtualDesktop, stop_desktop_processes
from roundhouse.devices.linux.display import backends
from roundhouse.devices.linux.system.presence import has_display

log = logging.getLogger(__name__)


@contextlib.contextmanager
def open_desktop(settings: DesktopSettings) -> Iterator[Desktop]:
    """The desktop the settings ask for: "current", "virtual", "auto" (current if any), or
    a desktop started with `roundhouse desktop start` (":3", "sway-1")."""
    if settings.mode not in ("auto", "virtual", "current"):
        yield started_desktop(settings.mode)
        return
    if settings.mode == "current" or (settings.mode == "auto" and has_display(os.environ)):
        try:
            yield current_desktop()
            return
        except DesktopUnavailable as error:
            if settings.mode == "current":
                raise
            log.info("the current session is not usable (%s); starting a virtual desktop", error)
    with VirtualDesktop(settings) as desktop:
        yield desktop


def started_desktop(display: str) -> Desktop:
    """The desktop `roundhouse desktop start` left running on `display`."""
    for _path, state in detached_states():
        if state.display == display and state_alive(state):
            return detached_desktop(state)
    raise DesktopUnavailable(
        f"no started desktop on {display}; `roundhouse desktop status` lists them"
    )


def start_detached(settings: DesktopSettings) -> tuple[Desktop, Path]:
    """Start a virtual desktop that outlives this process; its pids go to a state file."""
    virtual = VirtualDesktop(settings)
    desktop = virtual.start()
    state = virtual.state()
    path = state_dir() / f"{desktop.display.lstrip(':')}.json"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(state.to_json())
    except OSError:
        virtual.stop()
        raise
    virtual.detach()
    return desktop, path


def stop_detached(state: DesktopState, path: Path) -> None:
    stop_desktop_processes(state)
    path.unlink(missing_ok=True)


def detached_desktop(state: DesktopState) -> Desktop:
    """The Desktop of a detached virtual desktop, to run commands on it."""
    backend = backends.named(state.session)
    if state.wayland_display is not None:
        env = wayland_env(
            {**without_session(os.environ), **({TAG_ENV: state.tag} if state.tag else {})},
            wayland_display=state.wayland_display,
            runtime_dir=state.runtime_dir,
            bus_address=state.bus_address,
            current_desktop=backend.current_desktop,
            virtual=True,
        )
    else:
        env = x11_env(
            state.display, state.bus_address, runtime_dir=state.runtime_dir, tag=state.tag
        )
    env.update(state.extra_env)
    return Desktop(state.display, env, state.width, state.height, virtual=True, kind=backend.kind)
