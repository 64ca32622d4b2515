"""Whether a locker holds a wlroots session, asked of the compositor by the one lock
protocol a locker there can hold. No Wayland protocol tells a client "the screen is
locked"; what each lock protocol does tell is that a second client cannot have the lock.

- ext-session-lock-v1 (sway 1.8 on; swaylock uses it wherever it is offered): a `lock`
  request is refused (`finished`) while another client holds the lock, and granted
  (`locked`) otherwise. Granted means the probe itself locked the session, so it unlocks
  it at once (`unlock_and_destroy`, then a sync: the compositor must have handled it
  before the connection closes, or it takes the closed connection for a locker that died
  and keeps the session locked). sway grants or refuses in the request's own handler, so
  the session is ours for one round trip: no window loses the focus (the probe runs only
  when none has it) and at most one frame can be drawn blank.
- zwlr_input_inhibit_manager_v1 (wlroots before 0.17: sway 1.7, swaylock before
  ext-session-lock): the inhibitor takes every input to the client that holds it; a second
  request is refused with a protocol error (which ends that connection), else granted and
  given back at once.

What the session-lock probe costs, and why it is still asked (docs/design.md, "A locked
screen"): it is only asked when no window has the keyboard focus (as under a locker);
while the probe holds the lock, a locker that starts in that round trip is refused; and
where a locker died and left the session locked, sway hands the lock to the next client
that asks (the probe) and so the probe's unlock ends that lock.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Mapping

from roundhouse.devices.linux.display.wayland.wire import (
    TIMEOUT,
    Connection,
    WaylandError,
    WaylandTimeout,
)

log = logging.getLogger(__name__)

SESSION_LOCK = "ext_session_lock_manager_v1"
INHIBIT = "zwlr_input_inhibit_manager_v1"
# ext_session_lock_manager_v1 request: destroy (0), lock (1). ext_session_lock_v1
# requests: destroy (0), get_lock_surface (1), unlock_and_destroy (2); events: locked
# (0), finished (1).
LOCK = 1
LOCK_DESTROY = 0
UNLOCK_AND_DESTROY = 2
LOCKED = 0


def lock_protocols(offered: set[str]) -> tuple[str, ...]:
    """The lock protocols a locker could hold on a compositor that offers `offered`, the
    input inhibitor first: asking for it locks nothing."""
    return tuple(name for name in (INHIBIT, SESSION_LOCK) if name in offered)


def locker_holds(
    env: Mapping[str, str], protocols: tuple[str, ...], timeout: float = TIMEOUT
) -> str | None:
    """Which lock another client (a locker) holds, as a reason ("the screen is locked
    ..."), or None: each protocol of `protocols` is asked on a connection of its own."""
    for protocol in protocols:
        held = _held(env, protocol, timeout)
        if held:
            return held
    return None


def _held(env: Mapping[str, str], protocol: str, timeout: float) -> str | None:
    try:
        probe = Connection.open(env, timeout)
    except WaylandError:
        return None
    with probe:
        if probe.find(protocol) is None:
            return None
        if protocol == SESSION_LOCK:
            if _session_locked(probe):
                return "the screen is locked (a locker holds the session lock)"
        elif _inhibitor_held(probe):
            return "the screen is locked (a locker holds the input inhibitor: all input is its)"
    return None


def _session_locked(probe: Connection) -> bool:
    manager = probe.bind(SESSION_LOCK, 1)
    answers: list[int] = []

    def on_lock(opcode: int, _payload: bytes, _fds: deque[int]) -> None:
        answers.append(opcode)

    lock = probe.new_id(on_lock)
    probe.request(manager, LOCK, "n", lock)
    try:
        # The compositor must answer one or the other; sway does before the next request.
        probe.wait(lambda: bool(answers), None, "grant or refuse a session lock")
    except WaylandTimeout:
        # Neither: closing now leaves a compositor that grants later with a lock nobody
        # holds (sway keeps it, red). Nothing better can be done than to say so.
        log.warning("the compositor neither granted nor refused a session lock in time")
        return False
    if answers[0] == LOCKED:
        probe.request(lock, UNLOCK_AND_DESTROY)  # ours: given back at once
        probe.roundtrip()
        return False
    probe.request(lock, LOCK_DESTROY)  # refused: another client holds the lock
    probe.roundtrip()
    return True


def _inhibitor_held(probe: Connection) -> bool:
    manager = probe.bind(INHIBIT, 1)
    inhibitor = probe.new_id()
    probe.request(manager, 0, "n", inhibitor)  # get_inhibitor
    try:
        probe.roundtrip()
    except WaylandTimeout:
        return False  # a busy compositor says nothing either way: not known locked
    except WaylandError:
        return True  # refused (already_inhibited): another client holds it
    probe.request(inhibitor, 0)  # destroy: granted to us, given back at once
    probe.roundtrip()
    return False
