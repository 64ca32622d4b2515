"""Who is connected to a unix socket: a Wayland compositor's clients, as the X-Resource
extension names an X server's.

Chromium writes over its environment (the desktop's tag with it) and its helpers follow
its session, not ours; on X11 the X server names it as a client. A Wayland compositor has
no such request, but the kernel knows both ends of every unix socket: sock_diag (netlink)
gives each socket's bound name and its peer, and /proc/PID/fd which process holds which.
"""

from __future__ import annotations

import logging
import os
import socket
import struct
from pathlib import Path

log = logging.getLogger(__name__)

NETLINK_SOCK_DIAG = 4
SOCK_DIAG_BY_FAMILY = 20
NLM_F_REQUEST, NLM_F_DUMP = 0x1, 0x300
NLMSG_ERROR, NLMSG_DONE = 2, 3
UDIAG_SHOW_NAME, UDIAG_SHOW_PEER = 0x1, 0x4
UNIX_DIAG_NAME, UNIX_DIAG_PEER = 0, 2
HEADER = struct.Struct("=IHHII")  # nlmsghdr: length, type, flags, sequence, port
REQUEST = struct.Struct("=BBHIIIII")  # unix_diag_req
MESSAGE = struct.Struct("=BBBBIII")  # unix_diag_msg: family, type, state, pad, inode, cookie
TIMEOUT = 2.0


def unix_sockets() -> dict[int, tuple[str, int]]:
    """Every unix socket of the system (of this network namespace): inode -> (bound name,
    peer's inode; 0 when unconnected). Empty when the kernel cannot say (no unix_diag)."""
    found: dict[int, tuple[str, int]] = {}
    try:
        with socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, NETLINK_SOCK_DIAG) as link:
            link.settimeout(TIMEOUT)
            request = REQUEST.pack(
                socket.AF_UNIX, 0, 0, 0xFFFFFFFF, 0, UDIAG_SHOW_NAME | UDIAG_SHOW_PEER,
                0xFFFFFFFF, 0xFFFFFFFF,
            )  # fmt: skip
            flags = NLM_F_REQUEST | NLM_F_DUMP
            header = HEADER.pack(HEADER.size + len(request), SOCK_DIAG_BY_FAMILY, flags, 1, 0)
            link.send(header + request)
            while _read(link, found):
                pass
    except OSError as error:
        log.warning("the kernel did not list its unix sockets (%s)", error)
        return {}
    return found


def _read(link: socket.socket, found: dict[int, tuple[str, int]]) -> bool:
    """Read one batch of the dump into `found`; False once it is done."""
    data = link.recv(1 << 16)
    offset = 0
    while offset + HEADER.size <= len(data):
        length, kind, _flags, _sequence, _port = HEADER.unpack_from(data, offset)
        if kind in (NLMSG_DONE, NLMSG_ERROR) or length < HEADER.size:
            return False
        body = offset + HEADER.size
        *_, inode, _cookie0, _cookie1 = MESSAGE.unpack_from(data, body)
        name, peer = "", 0
        attribute = body + MESSAGE.size
        while attribute + 4 <= offset + length:
            size, kind = struct.unpack_from("=HH", data, attribute)
            value = data[attribute + 4 : attribute + size]
            if kind == UNIX_DIAG_NAME:
                name = value.rstrip(b"\0").decode(errors="replace")
            elif kind == UNIX_DIAG_PEER and len(value) >= 4:
                (peer,) = struct.unpack_from("=I", value)
            attribute += (size + 3) & ~3
        found[inode] = (name, peer)
        offset += (length + 3) & ~3
    return True


def clients_of(path: str) -> frozenset[int]:
    """Pids of the processes connected to the unix socket bound at `path` (its server
    itself not among them)."""
    sockets = unix_sockets()
    accepted = {inode for inode, (name, peer) in sockets.items() if name == path and peer}
    theirs = {sockets[inode][1] for inode in accepted}
    if not theirs:
        return frozenset()
    pids = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            descriptors = os.listdir(entry / "fd")
        except OSError:  # gone, or another user's
            continue
        for descriptor in descriptors:
            try:
                target = os.readlink(entry / "fd" / descriptor)
            except OSError:
                continue
            if target.startswith("socket:[") and int(target[8:-1]) in theirs:
                pids.add(int(entry.name))
                break
    return frozenset(pids)
