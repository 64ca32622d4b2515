"""Whether a locker holds a wlroots session. No Wayland protocol tells a client "the screen
is locked": on a person's own desktop a locker is found by its process (`locker_running`);
on the virtual desktops roundhouse starts, by asking the compositor for the lock a locker
there holds, since each lock protocol tells that a second client cannot have it:

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

What the session-lock probe costs (docs/design.md, "A locked screen"): while the probe
holds the lock, a locker that starts in that round trip is refused and exits, so the screen
does not lock; where a locker died and left the session locked, sway hands the lock to the
next client that asks (the probe), whose unlock then unlocks the session; and killed
between `locked` and its unlock, the probe leaves the session locked. On a person's own
desktop each of these is a hole in their screen lock, so there it is never asked: a locker
is found by its process instead (`locker_running`), which can lock and unlock nothing but
knows only the lockers it names. The session lock is asked only on the virtual desktops
roundhouse starts, where nobody's lock is at stake and any locker is found.
"""

from __future__ import annotations

import logging
import os
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from roundhouse.devices.linux.display.wayland.wire import (
    TIMEOUT,
    Connection,
    WaylandError,
    WaylandTimeout,
)
from roundhouse.devices.linux.system import procfs

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


# The Wayland lockers a person's desktop is watched for, by the name their process runs
# under (/proc/PID/comm). A list, because nothing a Wayland client may ask without
# touching the lock itself says that a session is locked; a locker not named here is not
# seen on a person's desktop, and our keys would go to its password field.
LOCKER_PROCESSES = ("swaylock", "waylock", "gtklock", "hyprlock")


@dataclass(frozen=True)
class Lockers:
    """How a locker is looked for on one wlroots session."""

    probes: tuple[str, ...]  # the lock protocols asked for, when no window has the focus
    processes: bool  # whether a known locker's process on this display is looked for

    @property
    def route(self) -> str:
        """How, in words (the person watch's route, as doctor shows it)."""
        ways = []
        if self.processes:
            ways.append(
                f"their process ({', '.join(LOCKER_PROCESSES)} on this display; the session "
                "lock is never asked for on a desktop roundhouse did not start)"
            )
        if self.probes:
            where = " on a desktop roundhouse started" if SESSION_LOCK in self.probes else ""
            ways.append(f"the lock they hold, asked for ({' or '.join(self.probes)}){where}")
        return " or ".join(ways) or "nothing (no lock protocol is offered)"


def lock_protocols(offered: set[str]) -> tuple[str, ...]:
    """The lock protocols a locker could hold on a compositor that offers `offered`, the
    input inhibitor first: asking for it locks nothing."""
    return tuple(name for name in (INHIBIT, SESSION_LOCK) if name in offered)


def lockers(offered: set[str], virtual: bool) -> Lockers:
    """How to look for a locker on a compositor that offers `offered`: on a virtual desktop
    roundhouse started, by every lock protocol offered; on a person's, by the locker's
    process and the input inhibitor (asking for it locks and unlocks nothing), never by the
    session lock."""
    protocols = lock_protocols(offered)
    if virtual:
        return Lockers(protocols, processes=False)
    return Lockers(tuple(name for name in protocols if name != SESSION_LOCK), processes=True)


def locker_running(
    env: Mapping[str, str], proc: Path = procfs.PROC, uid: int | None = None
) -> str | None:
    """A known locker (LOCKER_PROCESSES) of this user (`uid`: ours) that is a client of the
    Wayland display of `env`, as a reason ("the screen is locked ..."), or None. A process
    of another user, or whose environment cannot be read, is skipped."""
    uid = os.getuid() if uid is None else uid
    display = _socket(env)
    if display is None:
        return None
    try:
        entries = list(os.scandir(proc))
    except OSError as error:
        log.warning("cannot list processes in %s: %s", proc, error)
        return None
    # Asked before every action: each process costs one small read (its name) and only a
    # locker's more (os calls: a third of pathlib's time over /proc).
    for entry in entries:
        if not entry.name.isdigit():
            continue
        try:
            name = _comm(os.path.join(entry.path, "comm"))
            if name not in LOCKER_PROCESSES or _real_uid(Path(entry.path, "status")) != uid:
                continue
            environ = Path(entry.path, "environ").read_bytes()
        except (OSError, ValueError):
            continue  # gone since it was listed, or not ours to read
        wanted = ("WAYLAND_DISPLAY", "XDG_RUNTIME_DIR")
        found = {name: procfs.environ_value(environ, name) for name in wanted}
        if _socket({name: value for name, value in found.items() if value is not None}) == display:
            return f"the screen is locked ({name} is running on this display, pid {entry.name})"
    return None


def _comm(path: str) -> str:
    """A process's name (at most 15 bytes and a newline)."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        return os.read(fd, 64).decode(errors="replace").strip()
    finally:
        os.close(fd)


def _socket(env: Mapping[str, str]) -> Path | None:
    """The Wayland socket a client of `env` connects to, as libwayland finds it."""
    name = env.get("WAYLAND_DISPLAY") or "wayland-0"
    if name.startswith("/"):
        return Path(name)
    runtime = env.get("XDG_RUNTIME_DIR")
    return Path(runtime) / name if runtime else None


def _real_uid(status: Path) -> int | None:
    for line in status.read_text().splitlines():
        if line.startswith("Uid:"):
            return int(line.split()[1])
    return None


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
