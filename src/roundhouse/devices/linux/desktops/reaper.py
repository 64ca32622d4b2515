"""Ending every process of a virtual desktop when it stops, and no one else's.

Apps launched on a desktop are not in our process group (they get sessions of their own,
so that our Ctrl-C does not reach them), LibreOffice re-executes itself as soffice.bin,
and Chromium forks helpers and writes over its environment. A process is the desktop's
when any of these holds:

- its environment has the desktop's tag (TAG_ENV, unique per desktop start), which
  every process started with the desktop's environment inherits;
- it is a client of the desktop's X server (the X-Resource extension names the pid of
  every local client), or of its Wayland compositor (the kernel names both ends of its
  socket: sockets.py), asked while the desktop's own server runs: this is how Chromium,
  whose environment reads empty, is found;
- it is one of the desktop's own processes (Xvfb, the buses, the window manager, the
  services the buses started);
- its parent is the desktop's, or it is in a session whose leader is the desktop's
  (helpers whose parent died are re-parented to init but stay in their session).

Never: a process carrying another desktop's tag, ourselves, our ancestors, or anything
in their sessions. `belonging` decides on a snapshot of the process table (pure, tested
with fabricated tables); `DesktopReaper` does the reading and the signalling.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import signal
import socket
import threading
import uuid
from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from Xlib import display as xdisplay  # type: ignore[import-untyped, unused-ignore]
from Xlib import error as xerror  # type: ignore[import-untyped, unused-ignore]
from Xlib.ext import res  # type: ignore[import-untyped, unused-ignore]

from roundhouse.core.polling import within
from roundhouse.devices.linux.desktops.sockets import clients_of
from roundhouse.devices.linux.system.procfs import Proc, ProcessRecord, alive, snapshot

log = logging.getLogger(__name__)

TAG_ENV = "RH_DESKTOP_TAG"
GRACE = 2.0  # seconds between SIGTERM and SIGKILL
KILL_WAIT = 1.0  # seconds for SIGKILLed processes to be gone
X_QUERY_TIMEOUT = 2.0  # a stopped or wedged X server must not hold the stop up
PASSES = 3  # a pass ends what it found; the next finds what they forked meanwhile
KERNEL_PIDS = frozenset({0, 1, 2})  # the idle task, init, kthreadd


def new_tag() -> str:
    return uuid.uuid4().hex


# ---------------------------------------------------------------- choosing (pure)


@dataclass(frozen=True, kw_only=True)
class Marks:
    """What makes a process one of a desktop's."""

    tag: str | None  # None: a desktop started before tags (its state file has none)
    x_clients: frozenset[int] = frozenset()
    roots: frozenset[ProcessRecord] = frozenset()  # its own processes
    sessions: frozenset[int] = frozenset()  # sessions an earlier pass found to be its


def protected(table: Mapping[int, Proc], me: int) -> frozenset[int]:
    """Ourselves and our ancestors (and the kernel's and init's pids): never ended."""
    pids = set(KERNEL_PIDS) | {me}
    pid = me
    while pid in table and table[pid].ppid not in pids:
        pid = table[pid].ppid
        pids.add(pid)
    return frozenset(pids)


def belonging(table: Mapping[int, Proc], marks: Marks, spare: Collection[int]) -> frozenset[int]:
    """The pids of the desktop's processes in `table`, none of `spare` or their sessions."""
    # The sessions of spared processes are never taken whole: our own session may be led
    # by a shell that also runs the user's other programs.
    spared_sessions = {table[pid].sid for pid in spare if pid in table}
    sessions = marks.sessions - spared_sessions
    roots = {r.pid for r in marks.roots if r.pid in table and table[r.pid].start == r.start}

    def eligible(proc: Proc) -> bool:
        if proc.pid in spare or proc.ppid == 2:  # kernel threads are children of kthreadd
            return False
        # Another desktop's tag: not ours. The desktop's own processes are known by pid.
        return proc.tag is None or proc.tag == marks.tag or proc.pid in roots

    def marked(proc: Proc) -> bool:
        return (
            (marks.tag is not None and proc.tag == marks.tag)
            or proc.pid in marks.x_clients
            or proc.pid in roots
            or proc.sid in sessions
        )

    children: dict[int, list[int]] = defaultdict(list)
    members: dict[int, list[int]] = defaultdict(list)
    for proc in table.values():
        children[proc.ppid].append(proc.pid)
        members[proc.sid].append(proc.pid)
    chosen = {proc.pid for proc in table.values() if eligible(proc) and marked(proc)}
    queue = list(chosen)
    while queue:
        pid = queue.pop()
        related = list(children[pid])
        if table[pid].sid == pid and pid not in spared_sessions:  # a session leader
            related += members[pid]
        for other in related:
            if other not in chosen and eligible(table[other]):
                chosen.add(other)
                queue.append(other)
    return frozenset(chosen)


def sessions_led(table: Mapping[int, Proc], pids: Iterable[int]) -> frozenset[int]:
    """The sessions these processes lead: their members are the desktop's even once the
    leader is gone and they were re-parented."""
    return frozenset(pid for pid in pids if pid in table and table[pid].sid == pid)


# ---------------------------------------------------------------- reading X


def x_client_pids(display: str) -> frozenset[int]:
    """Pids of the local clients of this X server; empty when it cannot say (gone, no
    X-Resource extension, or no answer within X_QUERY_TIMEOUT)."""
    found: list[frozenset[int]] = []
    thread = threading.Thread(target=lambda: found.append(_query_client_pids(display)), daemon=True)
    thread.start()
    thread.join(X_QUERY_TIMEOUT)
    if not found:
        log.warning("X server %s did not name its clients; going by tag and parents", display)
        return frozenset()
    return found[0]


def _query_client_pids(display: str) -> frozenset[int]:
    if not _answers(display):
        log.info("X server %s is gone: no clients to ask about", display)
        return frozenset()
    try:
        connection = xdisplay.Display(display)
    except (xerror.DisplayError, OSError) as error:
        log.info("X server %s is gone (%s): no clients to ask about", display, error)
        return frozenset()
    try:
        if not connection.has_extension(res.extname):
            log.warning("X server %s has no X-Resource extension", display)
            return frozenset()
        spec = {"client": 0, "mask": res.LocalClientPIDMask}  # client 0: every client
        reply = connection.res_query_client_ids([spec])
        return frozenset(
            int(item.value[0])
            for item in reply.ids
            if item.spec.mask == res.LocalClientPIDMask and item.value
        )
    except (xerror.XError, xerror.ConnectionClosedError, OSError) as error:
        log.warning("X server %s did not name its clients: %s", display, error)
        return frozenset()
    finally:
        with contextlib.suppress(xerror.ConnectionClosedError, OSError):
            connection.close()


def _answers(display: str) -> bool:
    """Whether a local X server listens on the display's socket. Asked before python-xlib
    is: when it cannot connect it leaves its sockets open (a ResourceWarning), and a
    SIGKILLed Xvfb leaves its socket file behind, so the file's existence says nothing."""
    match = re.fullmatch(r"(?:unix)?:(\d+)(?:\.\d+)?", display)
    if match is None:
        return True  # not a local display: let python-xlib try
    path = f"/tmp/.X11-unix/X{match[1]}"
    for address in (path, "\0" + path):  # the file, else Linux's abstract socket
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
            try:
                probe.connect(address)
                return True
            except OSError:
                continue
    return False


# ---------------------------------------------------------------- signalling


def terminate(
    records: Sequence[ProcessRecord], grace: float = GRACE, settle: float = KILL_WAIT
) -> list[ProcessRecord]:
    """SIGTERM each (still the same) process, wait up to `grace`, SIGKILL what is left and
    wait up to `settle` for it to go. Returns the processes that needed SIGKILL."""
    live = [record for record in records if alive(record)]
    _send(live, signal.SIGTERM)
    # A stopped process (a hung app someone SIGSTOPped, a job suspended with Ctrl-Z) only
    # sees the SIGTERM once continued, as a shell's `kill` does for its stopped jobs.
    _send(live, signal.SIGCONT)
    live = _wait_gone(live, grace)
    _send(live, signal.SIGKILL)
    for record in _wait_gone(live, settle):
        log.warning("%s (pid %d) still runs after SIGKILL", record.name, record.pid)
    return live


def _send(records: Iterable[ProcessRecord], sig: signal.Signals) -> None:
    for record in records:
        if not alive(record):  # checked again: the pid must not have been recycled
            continue
        try:
            os.kill(record.pid, sig)
        except ProcessLookupError:
            pass  # ended by itself
        except PermissionError:
            log.warning("not allowed to end %s (pid %d)", record.name, record.pid)


def _wait_gone(records: list[ProcessRecord], timeout: float) -> list[ProcessRecord]:
    """Those of `records` still alive after `timeout` seconds (none, once all have gone)."""

    def gone() -> bool:
        nonlocal records
        for record in records:
            # Reap our own children; re-parented ones are reaped by init.
            with contextlib.suppress(ChildProcessError, OSError):
                os.waitpid(record.pid, os.WNOHANG)
        records = [record for record in records if alive(record)]
        return not records

    within(gone, timeout, every=0.01)
    return records


# ---------------------------------------------------------------- one desktop


class DesktopReaper:
    """Ends one desktop's processes in passes, remembering the sessions it found.

    `end_apps` first, while the X server still answers (it names its clients, and apps
    can still shut down cleanly); then the desktop stops its own processes in order; then
    `end_leftovers` takes what was started in between.
    """

    def __init__(
        self,
        tag: str | None,
        display: str,
        server: ProcessRecord | None,
        own: Sequence[ProcessRecord],
        wayland_socket: str | None = None,
    ) -> None:
        """`server` is the desktop's Xvfb, or its Wayland compositor listening on
        `wayland_socket`: its clients are asked for only while it runs."""
        self.tag = tag
        self.display = display
        self.server = server
        self.wayland_socket = wayland_socket
        self.own = frozenset(own)
        self._own_pids = {record.pid for record in own}
        self._sessions: frozenset[int] = frozenset()

    def end_apps(self) -> list[ProcessRecord]:
        return self._passes(self._x_clients())

    def end_leftovers(self) -> list[ProcessRecord]:
        return self._passes(frozenset())

    def _x_clients(self) -> frozenset[int]:
        """The clients of the desktop's X server (or Wayland compositor). Once our Xvfb is
        gone its display number may already be another desktop's (a stale state file, a
        killed Xvfb): that desktop's clients are not ours. While ours runs, no other
        server can take it."""
        if self.server is None or not alive(self.server):
            return frozenset()
        if self.wayland_socket is not None:
            clients = clients_of(self.wayland_socket)
        else:
            clients = x_client_pids(self.display)
        return clients if alive(self.server) else frozenset()

    def _passes(self, x_clients: frozenset[int]) -> list[ProcessRecord]:
        ended: list[ProcessRecord] = []
        for _ in range(PASSES):
            table = snapshot(TAG_ENV)
            marks = Marks(
                tag=self.tag, x_clients=x_clients, roots=self.own, sessions=self._sessions
            )
            chosen = belonging(table, marks, protected(table, os.getpid()))
            self._sessions |= sessions_led(table, chosen)
            targets = [table[pid].record for pid in sorted(chosen - self._own_pids)]
            if not targets:
                break
            killed = terminate(targets)
            log.info(
                "desktop %s: ended %d processes (%s)%s",
                self.display,
                len(targets),
                ", ".join(sorted({record.name for record in targets})),
                f"; {len(killed)} needed SIGKILL" if killed else "",
            )
            ended += targets
            x_clients = frozenset()  # pids seen once; by now they may be another's
        return ended
