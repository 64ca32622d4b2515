"""The person at a KDE session: input not ours, through the idle protocols KWin offers any
client (wayland/idle.py: its fake input, ours, is handled before the roundtrip that follows
it, as on wlroots), and a locked screen, through KWin's screen locker.

Plasma's screen locker lives in KWin (kscreenlocker): org.freedesktop.ScreenSaver's
GetActive, on KWin's own connection, says whether it is locked; it answers any client and
only reads. A KWin started without its locker (--no-lockscreen) owns no such name, and
then nothing locks it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from roundhouse.devices.linux.display.wayland import idle
from roundhouse.devices.linux.display.wayland.dbus import DBusCallError, SyncBus

log = logging.getLogger(__name__)

LOCKER = ("org.freedesktop.ScreenSaver", "/ScreenSaver", "org.freedesktop.ScreenSaver")
LOCKER_ROUTE = "KWin's screen locker (org.freedesktop.ScreenSaver GetActive)"


def kwin_locked(bus: SyncBus) -> str | None:
    """Why the session is locked (KWin's locker holds it), or None."""
    if not bus.has_name(LOCKER[0]):
        return None  # KWin without its locker: nothing locks this session
    try:
        (active,) = bus.call(*LOCKER, "GetActive")
    except DBusCallError as error:
        log.info("KWin's screen locker did not answer: %s", error)
        return None
    return "the screen is locked (KWin's screen locker is up)" if active else None


def kwin_watch(env: Mapping[str, str], bus: SyncBus) -> idle.IdleWatch | None:
    """The watch, where KWin offers this client an idle protocol; None where not."""
    return idle.idle_watch(env, idle.offered(env), lambda: kwin_locked(bus), LOCKER_ROUTE)
