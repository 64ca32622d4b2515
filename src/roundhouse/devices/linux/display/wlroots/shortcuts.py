"""Desktop-wide shortcuts where sway's IPC is offered (display/shortcuts.py): each key bound
to a `nop` command naming it, and sway's binding events, read on a connection of the
listener's own, say when it ran."""

from __future__ import annotations

import json
import logging
import socket
import threading
from collections.abc import Mapping, Sequence

from roundhouse.devices.linux.display.shortcuts import POLL, Listening, Shortcut
from roundhouse.devices.linux.display.wlroots.sway import (
    HEADER,
    MAGIC,
    SwayError,
    SwayIpc,
    sway_socket,
)

log = logging.getLogger(__name__)

SUBSCRIBE = 2
BINDING_EVENT = 0x80000005
SWAY_MODIFIERS = {"ctrl": "Ctrl", "alt": "Mod1", "shift": "Shift", "super": "Mod4"}
NOP_MARK = "roundhouse-shortcut-"


def bind_keys(env: Mapping[str, str], shortcuts: Sequence[Shortcut]) -> SwayShortcuts:
    return SwayShortcuts(env, shortcuts)


def sway_keys(shortcut: Shortcut) -> str:
    """The shortcut in sway's bindsym syntax: "ctrl+alt+t" -> "Ctrl+Mod1+t"."""
    modifiers, key = shortcut.chord()
    return "+".join([*(SWAY_MODIFIERS[modifier] for modifier in modifiers), key])


class SwayShortcuts(Listening):
    """Where sway's IPC is offered: each key bound to `nop roundhouse-shortcut-N`, and the
    binding events read on a connection of its own."""

    def __init__(self, env: Mapping[str, str], shortcuts: Sequence[Shortcut]) -> None:
        super().__init__()
        self._path = sway_socket(env)
        self._bound = {f"nop {NOP_MARK}{n}": shortcut for n, shortcut in enumerate(shortcuts)}
        self._events: socket.socket | None = None

    def start(self) -> None:
        ipc = SwayIpc(self._path)
        try:
            for command, shortcut in self._bound.items():
                ipc.command(f"bindsym --no-repeat {sway_keys(shortcut)} {command}")
        finally:
            ipc.close()
        events = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
        events.settimeout(POLL)
        try:
            events.connect(str(self._path))
            payload = json.dumps(["binding"]).encode()
            events.sendall(HEADER.pack(MAGIC, len(payload), SUBSCRIBE) + payload)
            kind, reply = _read_message(events, self._stop, deadline_polls=50)
        except (OSError, SwayError):
            events.close()
            raise
        if kind != SUBSCRIBE or not reply.get("success"):
            events.close()
            raise SwayError(f"sway refused to send binding events: {reply}")
        self._events = events
        self._start_listening()

    def _listen(self) -> None:
        assert self._events is not None
        while not self._stop.is_set():
            try:
                kind, event = _read_message(self._events, self._stop)
            except (OSError, SwayError) as error:
                if not self._stop.is_set():
                    log.warning("the shortcut listener lost sway's IPC: %s", error)
                return
            binding = event.get("binding")
            command = str(binding.get("command", "")) if isinstance(binding, dict) else ""
            shortcut = self._bound.get(command) if kind == BINDING_EVENT else None
            if shortcut is not None:
                self._run(shortcut)

    def _close(self) -> None:
        if self._events is not None:
            self._events.close()
            self._events = None


def _read_message(
    sock: socket.socket, stop: threading.Event, deadline_polls: int | None = None
) -> tuple[int, dict[str, object]]:
    """One message of sway's IPC: (its type, its JSON body). Waits in POLL steps until one
    comes, `stop` is set (SwayError) or `deadline_polls` steps went by (TimeoutError)."""
    header = _read_exactly(sock, HEADER.size, stop, deadline_polls)
    magic, size, kind = HEADER.unpack(header)
    if magic != MAGIC:
        raise SwayError("sway's IPC socket answered something else than i3-ipc")
    body = json.loads(_read_exactly(sock, size, stop, deadline_polls))
    return kind, body if isinstance(body, dict) else {}


def _read_exactly(
    sock: socket.socket, size: int, stop: threading.Event, polls: int | None
) -> bytes:
    data = b""
    while len(data) < size:
        try:
            chunk = sock.recv(size - len(data))
        except TimeoutError:
            if stop.is_set():
                raise SwayError("stopped") from None
            if polls is not None:
                polls -= 1
                if polls <= 0:
                    raise
            continue
        if not chunk:
            raise SwayError("sway closed its IPC connection")
        data += chunk
    return data
