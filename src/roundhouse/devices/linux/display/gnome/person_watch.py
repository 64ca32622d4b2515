"""The person at a GNOME session: input not ours, through Mutter's idle monitor, and a
locked screen, through GNOME Shell's screen shield. Both answer any client of the session
bus, unsafe mode or not, and only read.

Mutter shows a program no other client's input. What it does tell is how long the seat has
been idle (org.gnome.Mutter.IdleMonitor GetIdletime, what gnome-settings-daemon asks): any
input resets it, from a person's mouse or a remote desktop's (ours, or another program's),
when Mutter handles it, in milliseconds of CLOCK_MONOTONIC, the clock of time.monotonic().
So the last input's moment is known on our clock, and ours is told apart by when it was
sent: not by order, as on X11 and wlroots (Mutter handles a remote desktop's input after
answering the call that sent it, and nothing says when). `ours` waits until Mutter has
handled an input sent no earlier than our last one (keys were handled within 1.5 ms here,
a motion within its call), and takes everything until then, and OURS_SETTLE after our
last send, as ours; `foreign` says whether an input came later. What it costs: a person's
input within OURS_SETTLE of ours, and theirs while we act, say nothing.

GNOME Shell's screen shield (org.gnome.Shell.ScreenShield, object /org/gnome/ScreenSaver:
what the org.gnome.ScreenSaver service asks) says whether it is up: locked, or blanked on
its way to locking. The Shell makes one only where it can lock (GDM and logind): a
headless GNOME Shell has none, and then nothing locks it.

A consent or a password the Shell itself asks for (polkit's authentication, a portal's
question, the session's log-out) is one of its modal dialogs, which take the keyboard
while they show. Where roundhouse reaches into the Shell (its extension, or Eval: shell.py
`dialogs`), one that shows blocks the desktop as a lock does, named by its first label.
Without either (a person's GNOME before `roundhouse setup gnome`, or an extension
installed by an older roundhouse) they are not seen.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from roundhouse.core.polling import within
from roundhouse.devices.linux.display.base import Closing
from roundhouse.devices.linux.display.wayland.dbus import DBusCallError, SyncBus

log = logging.getLogger(__name__)

IDLE = ("org.gnome.Mutter.IdleMonitor", "/org/gnome/Mutter/IdleMonitor/Core")
IDLE_INTERFACE = "org.gnome.Mutter.IdleMonitor"
SHIELD = ("org.gnome.Shell.ScreenShield", "/org/gnome/ScreenSaver", "org.gnome.ScreenSaver")
# Seconds after our last send whose input is taken as ours: Mutter handles it after the
# call that sent it has been answered, and the last seen may be the one before it.
OURS_SETTLE = 0.1
OURS_WAIT = 1.0  # seconds for Mutter to have handled our last input
TICK = 0.001  # GetIdletime counts whole milliseconds


class GnomeWatch(Closing):
    """Other input, the screen shield and the Shell's own dialogs on one GNOME session (a
    display.base.PersonWatch). `last_sent` says when our input (gnome/remote.py) last sent
    anything; `dialogs`, where the Shell is reached, which of its modal dialogs show."""

    def __init__(
        self,
        bus: SyncBus,
        last_sent: Callable[[], float],
        dialogs: Callable[[], list[str]] | None = None,
    ) -> None:
        self._bus = bus
        self._last_sent = last_sent
        self._dialogs = dialogs
        self._lock = threading.Lock()
        self._ours_until = 0.0
        self.route = (
            "Mutter's idle monitor (input after ours resets it); lockers by GNOME Shell's "
            "screen shield (org.gnome.ScreenSaver GetActive); "
            + (
                "the Shell's own dialogs (polkit's, a portal's) by the Shell"
                if dialogs is not None
                else "the Shell's own dialogs (polkit's, a portal's) not seen: "
                "roundhouse's extension is not running"
            )
        )
        self.last_input()  # refused or missing: say so now
        self.ours()

    def close(self) -> None:
        pass  # the bus is the display's, closed with it

    def last_input(self) -> tuple[float, float]:
        """When Mutter last handled input, on time.monotonic()'s clock: (earliest, latest),
        as far as the call's round trip and the whole milliseconds tell."""
        asked = time.monotonic()
        (idle_ms,) = self._bus.call(*IDLE, IDLE_INTERFACE, "GetIdletime")
        answered = time.monotonic()
        idle = int(idle_ms) / 1000
        return asked - idle - TICK, answered - idle

    def ours(self) -> None:
        with self._lock:
            sent = self._last_sent()

            def handled() -> float | None:
                _, latest = self.last_input()
                return latest if latest >= sent else None

            latest = within(handled, OURS_WAIT, TICK)
            if latest is None:
                log.info("Mutter did not say it handled our last input within %g s", OURS_WAIT)
                _, latest = self.last_input()
            self._ours_until = max(latest, sent + OURS_SETTLE)

    def foreign(self) -> str | None:
        with self._lock:
            earliest, _ = self.last_input()
            if earliest <= self._ours_until:
                return None
            self._ours_until = earliest  # said once: the Desk keeps it
        # The idle monitor does not say which device: a key, a button or the pointer.
        return "input came from a mouse or keyboard not ours"

    def blocked(self) -> str | None:
        with self._lock:
            if self._shield_up():
                return "the screen is locked (GNOME Shell's screen shield is up)"
            dialogs = self._shown_dialogs()
        if not dialogs:
            return None
        return (
            f"GNOME Shell's own dialog {dialogs[0]!r} is up (it asks the person: a password "
            "or a consent), and takes the keyboard"
        )

    def _shield_up(self) -> bool:
        if not self._bus.has_name(SHIELD[0]):
            return False  # no screen shield: this GNOME Shell cannot lock
        try:
            (active,) = self._bus.call(*SHIELD, "GetActive")
        except DBusCallError as error:
            log.info("GNOME Shell's screen shield did not answer: %s", error)
            return False
        return bool(active)

    def _shown_dialogs(self) -> list[str]:
        if self._dialogs is None:
            return []
        try:
            return self._dialogs()
        except RuntimeError as error:  # ShellRefused: an extension of an older roundhouse
            log.info("GNOME Shell did not say which of its dialogs show: %s", error)
            return []
