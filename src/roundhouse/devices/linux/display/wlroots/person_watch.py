"""The person at a wlroots session: input not ours, through an idle protocol
(wayland/idle.py), and a locker, by its process or the lock it holds (lockers.py)."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from roundhouse.devices.linux.display.wayland import idle
from roundhouse.devices.linux.display.wayland.wire import TIMEOUT
from roundhouse.devices.linux.display.wlroots.lockers import (
    Lockers,
    locker_holds,
    locker_running,
    lockers,
)


def locker_check(
    env: Mapping[str, str], locks: Lockers, focused: Callable[[], bool]
) -> Callable[[], str | None]:
    """Why the session is locked, or None, asked as `locks` says."""
    env = dict(env)

    def locked() -> str | None:
        # A locker's process is looked for whatever has the focus: looking changes nothing,
        # and a locker that has started but not yet locked is caught before our keys race it.
        if locks.processes:
            running = locker_running(env)
            if running:
                return running
        # A locker takes the keyboard focus from every window. Only then is a lock asked
        # for: granted to us for a moment, the input inhibitor takes the focus too (and
        # sway 1.7 does not give it back), the session lock blanks the screen.
        if not locks.probes or focused():
            return None
        return locker_holds(env, locks.probes, TIMEOUT)

    return locked


def idle_watch(
    env: Mapping[str, str], focused: Callable[[], bool], virtual: bool
) -> idle.IdleWatch | None:
    """The watch, where the compositor offers an idle protocol; None where it does not.
    `focused`: whether a window has the keyboard focus (no locker is up then); `virtual`:
    a desktop roundhouse started, where a locker may be looked for by taking the session
    lock (lockers.py says why a person's never is)."""
    offered = idle.offered(env)
    locks = lockers(set(offered), virtual)
    return idle.idle_watch(env, offered, locker_check(env, locks, focused), locks.route)
