"""Input not ours on a Wayland session, through an idle protocol (wlroots compositors and
KWin offer them to any client; Mutter offers none).

A Wayland client sees no other client's input, nor where the pointer is. What these
compositors do tell any client is when the seat stops being idle, through
ext-idle-notify-v1 (sway 1.8 on, KWin 5.27 on) or org_kde_kwin_idle before it (sway 1.7,
KWin), which swayidle uses: with a timeout of 1 ms the seat is idle again a moment after
any input, and says "resumed" at the next, from whatever device or client (a person's
mouse, another program's virtual pointer or fake input). Ours too, told apart by order as
on X11: the compositor handles our input before it answers the input connection's
roundtrip, and queues the "resumed" it caused on this connection then; a roundtrip here
afterwards comes after it. So `ours` dispatches and forgets, `foreign` dispatches and finds
what came since. An application that inhibits idling (a video playing full-screen) hides
input from every notification but ext-idle-notify-v1's input one (version 2), which is
asked for where offered. A locked screen is each compositor's own question (`locked`).
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from roundhouse.devices.linux.display.base import Closing
from roundhouse.devices.linux.display.wayland.wire import TIMEOUT, Connection

IDLE_TIMEOUT_MS = 1
# Both protocols' notifications send idled/idle (0), then resumed (1) at the next input.
RESUMED = 1


@dataclass(frozen=True)
class IdleProtocol:
    """How one idle protocol is asked for a notification on the seat."""

    interface: str
    version: int  # the highest we speak
    opcode: int  # the request that makes a notification
    signature: str
    seat_first: bool  # the order of its seat and timeout arguments

    def request(self, wayland: Connection, notifier: int, notification: int, seat: int) -> None:
        args = (seat, IDLE_TIMEOUT_MS) if self.seat_first else (IDLE_TIMEOUT_MS, seat)
        wayland.request(notifier, self.opcode, self.signature, notification, *args)


# get_input_idle_notification(id, timeout, seat): input alone, idle inhibitors ignored.
EXT_INPUT_IDLE = IdleProtocol("ext_idle_notifier_v1", 2, 2, "nuo", seat_first=False)
# get_idle_notification(id, timeout, seat): held idle-free by an idle inhibitor.
EXT_IDLE = IdleProtocol("ext_idle_notifier_v1", 1, 1, "nuo", seat_first=False)
# get_idle_timeout(id, seat, timeout)
KDE_IDLE = IdleProtocol("org_kde_kwin_idle", 1, 0, "nou", seat_first=True)


def idle_protocol(offered: Mapping[str, int]) -> IdleProtocol | None:
    """The idle protocol to watch by, of those offered (interface -> version): the one that
    sees input through an idle inhibitor first."""
    for protocol in (EXT_INPUT_IDLE, EXT_IDLE, KDE_IDLE):
        if offered.get(protocol.interface, 0) >= protocol.version:
            return protocol
    return None


class IdleWatch(Closing):
    """Other input through an idle protocol, and a locked screen as `locked` says (a
    display.base.PersonWatch)."""

    def __init__(
        self,
        env: Mapping[str, str],
        protocol: IdleProtocol,
        locked: Callable[[], str | None],
        locks_route: str,
        timeout: float = TIMEOUT,
    ) -> None:
        self.route = (
            f"{protocol.interface} v{protocol.version} (any input ends the 1 ms idle); "
            f"lockers by {locks_route}"
        )
        self._locked = locked
        self._lock = threading.Lock()
        self._resumed = 0
        self._wayland = Connection.open(env, timeout)
        try:
            seat = self._wayland.bind("wl_seat", 1)
            notifier = self._wayland.bind(protocol.interface, protocol.version)
            watched = self._wayland.new_id(self._on_event)
            protocol.request(self._wayland, notifier, watched, seat)
            self.ours()
        except BaseException:
            self._wayland.close()
            raise

    def _on_event(self, opcode: int, _payload: bytes, _fds: deque[int]) -> None:
        if opcode == RESUMED:
            self._resumed += 1

    def close(self) -> None:
        with self._lock:
            self._wayland.close()

    def ours(self) -> None:
        with self._lock:
            self._wayland.roundtrip()
            self._resumed = 0

    def foreign(self) -> str | None:
        with self._lock:
            self._wayland.roundtrip()
            resumed, self._resumed = self._resumed, 0
        # The idle protocols do not say which device: a key, a button or the pointer.
        return "input came from a mouse or keyboard not ours" if resumed else None

    def blocked(self) -> str | None:
        return self._locked()


def offered(env: Mapping[str, str]) -> dict[str, int]:
    """The globals the compositor of `env` offers this client: interface -> version."""
    with Connection.open(env) as wayland:
        return {found.interface: found.version for found in wayland.registry().values()}


def idle_watch(
    env: Mapping[str, str],
    globals_offered: Mapping[str, int],
    locked: Callable[[], str | None],
    locks_route: str,
) -> IdleWatch | None:
    """The watch, where the compositor offers an idle protocol and a seat; None where not."""
    protocol = idle_protocol(globals_offered)
    if protocol is None or "wl_seat" not in globals_offered:
        return None
    return IdleWatch(env, protocol, locked, locks_route)
