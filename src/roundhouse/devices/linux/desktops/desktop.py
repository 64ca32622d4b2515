"""The desktop the device works on, as a value: where its apps run and how they are started.

A Desktop is a virtual one (virtual.py: Xvfb and openbox, or a headless compositor) or the
person's own session (`current_desktop`), of a session kind that names its display backend
(display/backends.py). Pass `desktop.env` to every process meant for it, and start
applications with `desktop.app_command(argv)`.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from roundhouse.devices.linux.desktops import janitor
from roundhouse.devices.linux.desktops.apps import app_command
from roundhouse.devices.linux.desktops.session import runtime_dir_of, wayland_env, x11_env
from roundhouse.devices.linux.display import backends
from roundhouse.devices.linux.display.backend import Backend
from roundhouse.devices.linux.display.base import DisplayUnavailable

DBUS_TIMEOUT = 5.0


class DesktopUnavailable(RuntimeError):
    """No display to work on, and none can be started; the message says what to install."""


@dataclass(frozen=True)
class Desktop:
    """Where apps run: pass `env` to every process meant for this desktop."""

    display: str  # ":3"; a Wayland one by its name ("sway-1") or its WAYLAND_DISPLAY
    env: dict[str, str] = field(hash=False)
    width: int
    height: int
    virtual: bool
    kind: str = "x11"  # its display backend's (display/backends.py)

    @property
    def backend(self) -> Backend:
        return backends.named(self.kind)

    @property
    def bus_address(self) -> str | None:
        return self.env.get("DBUS_SESSION_BUS_ADDRESS")

    @property
    def wayland(self) -> bool:
        """A Wayland session (its applications are Wayland clients)."""
        return self.backend.wayland

    def app_command(self, argv: Sequence[str]) -> list[str]:
        """The command line that makes the app expose its tree (desktops/apps.py)."""
        return app_command(argv, self.env, virtual=self.virtual, wayland=self.wayland)


def current_desktop(environ: Mapping[str, str] | None = None) -> Desktop:
    """The display and session bus of the environment: the user's own, or one of our
    virtual desktops that this process was started on."""
    env = os.environ if environ is None else environ
    if backends.is_wayland(env):
        return _current_wayland(env)
    display = env.get("DISPLAY")
    if not display:
        hint = (
            ""
            if shutil.which("Xvfb")
            else "; for a virtual desktop install: sudo apt-get install "
            + backends.named(backends.DEFAULT_KIND).compositor.packages
        )
        raise DesktopUnavailable(f"no display: DISPLAY is not set{hint}")
    try:
        width, height = backends.screen_size(env)
    except DisplayUnavailable as error:
        raise DesktopUnavailable(str(error)) from None
    bus_address = env.get("DBUS_SESSION_BUS_ADDRESS")
    runtime_bus = Path(env.get("XDG_RUNTIME_DIR", "/nonexistent")) / "bus"
    if bus_address is None and runtime_bus.exists():
        bus_address = f"unix:path={runtime_bus}"
    return Desktop(
        display, x11_env(display, bus_address, env), width, height, virtual=_ours(env), kind="x11"
    )


def _current_wayland(env: Mapping[str, str]) -> Desktop:
    """The Wayland session of the environment: its backend, its compositor's socket and
    output size."""
    runtime = runtime_dir_of(env)
    name = env.get("WAYLAND_DISPLAY") or "wayland-0"
    located = {**env, "XDG_RUNTIME_DIR": runtime}
    try:
        backend = backends.detect(located)
        width, height = backends.screen_size(located, DBUS_TIMEOUT)  # every monitor's box
    except DisplayUnavailable as error:
        raise DesktopUnavailable(str(error)) from None
    bus_address = env.get("DBUS_SESSION_BUS_ADDRESS")
    if bus_address is None and (Path(runtime) / "bus").exists():
        bus_address = f"unix:path={Path(runtime) / 'bus'}"
    session = wayland_env(env, wayland_display=name, runtime_dir=runtime, bus_address=bus_address)
    return Desktop(name, session, width, height, virtual=_ours(located), kind=backend.kind)


def _ours(env: Mapping[str, str]) -> bool:
    """A session of one of our virtual desktops (a batch task's round, `desktop start`) is
    treated as one: its apps get the throw-away profiles kept in its runtime folder."""
    return Path(env.get("XDG_RUNTIME_DIR", "")).name.startswith(janitor.DESKTOP_RUNTIME_PREFIX)
