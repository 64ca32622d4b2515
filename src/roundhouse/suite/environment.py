"""The one environment a batch task runs in, whatever its family (roundhouse's own task files,
OSWorld's): a fresh virtual desktop of the session kind asked for, a fresh home, and nothing
of either left once the task is judged.

    async with TaskDesktop(DesktopSettings(session="sway"), home) as desktop:
        ...   # desktop.env: HOME is `home`, the user's own XDG folders are gone

- The desktop is a VirtualDesktop (its own runtime folder, session bus, display server of
  the kind the settings name, and AT-SPI); stopping it ends every process that ran on it
  (desktops/reaper.py), and a janitor does so should this process die first.
- The home is made empty. Every process of the desktop gets it, and so do the services its
  session bus starts later (dconf, GNOME Terminal's server): what a file dialog shows
  (recent files, bookmarks) or what gsettings wrote cannot come from an earlier run. The
  user's own XDG folders (XDG_CONFIG_HOME, ...) go with the old home; the machine's search
  paths stay (applications are found through XDG_DATA_DIRS: Flatpak's, scripts/with-apps.sh's).
- A family adds variables of its own (`more`: OSWorld's shims on PATH, its dconf), given to
  the bus's services too.
"""

from __future__ import annotations

import asyncio
import dataclasses
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path

from dbus_fast import MessageType
from dbus_fast.aio import MessageBus
from dbus_fast.errors import DBusFastError

from roundhouse.config import DesktopSettings
from roundhouse.devices.linux.desktops.desktop import Desktop, DesktopUnavailable
from roundhouse.devices.linux.desktops.virtual import VirtualDesktop
from roundhouse.devices.linux.system.bus_daemon import bus_daemon_message

BUS_TIMEOUT = 5.0
# The session's own XDG variables (its runtime folder, its type and desktop) and the
# machine's search paths; the user's folders (XDG_CONFIG_HOME, …) go with the old HOME.
MACHINE_XDG = frozenset(
    {
        "XDG_RUNTIME_DIR",
        "XDG_SESSION_TYPE",
        "XDG_CURRENT_DESKTOP",
        "XDG_DATA_DIRS",
        "XDG_CONFIG_DIRS",
    }
)
More = Callable[[Desktop], Mapping[str, str]]  # a family's own variables, for this desktop


class TaskDesktop:
    """`async with TaskDesktop(settings, home) as desktop:` started on entry (a fresh
    desktop of `settings.session`, `settings.width` x `settings.height`, and a fresh `home`),
    stopped on exit; `stop()` may also be called, more than once."""

    def __init__(self, settings: DesktopSettings, home: Path, more: More | None = None) -> None:
        self.home = home
        self._more = more
        self._virtual = VirtualDesktop(settings)

    async def __aenter__(self) -> Desktop:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def start(self) -> Desktop:
        starting = asyncio.ensure_future(asyncio.to_thread(self._virtual.start))
        try:
            started = await asyncio.shield(starting)
            shutil.rmtree(self.home, ignore_errors=True)
            self.home.mkdir(parents=True)
            desktop = dataclasses.replace(started, env=home_env(started.env, self.home))
            added = dict(self._more(desktop)) if self._more is not None else {}
            desktop.env.update(added)
            try:
                await set_activation_environment(
                    started.bus_address, {"HOME": str(self.home), **added}
                )
            except DBusFastError as error:
                raise DesktopUnavailable(f"its session bus took no environment: {error}") from None
        except BaseException:
            # A thread cannot be cancelled: let the start end, then stop what it started.
            await asyncio.wait([starting])
            await self.stop()
            raise
        return desktop

    async def stop(self) -> None:
        """End every process of the desktop, then the desktop."""
        await asyncio.to_thread(self._virtual.stop)


def home_env(env: Mapping[str, str], home: Path) -> dict[str, str]:
    """The desktop's environment with `home` for HOME, the user's XDG folders dropped."""
    kept = {k: v for k, v in env.items() if not k.startswith("XDG_") or k in MACHINE_XDG}
    return {**kept, "HOME": str(home)}


async def set_activation_environment(bus_address: str | None, env: Mapping[str, str]) -> None:
    """The services the session bus starts from now on get these variables (the task's home,
    not that of whoever started the bus)."""
    if bus_address is None:
        return
    bus = await asyncio.wait_for(MessageBus(bus_address=bus_address).connect(), BUS_TIMEOUT)
    try:
        reply = await asyncio.wait_for(
            bus.call(bus_daemon_message("UpdateActivationEnvironment", "a{ss}", [dict(env)])),
            BUS_TIMEOUT,
        )
        if reply is None or reply.message_type == MessageType.ERROR:
            body = reply.body if reply is not None else "no answer"
            raise DBusFastError(f"UpdateActivationEnvironment failed: {body}")
    finally:
        bus.disconnect()
