"""Desktop-wide keyboard shortcuts, as Ubuntu's GNOME binds them (Ctrl+Alt+T: a terminal).

OSWorld's tasks open a terminal by pressing Ctrl+Alt+T (through pyautogui). Neither openbox,
the window manager of roundhouse's X11 desktops, nor a headless compositor binds such a key,
so a listener asks the display server to tell it when the key is pressed, and runs the
action itself (with the task's environment, which the compositor does not have):
- on X11 it grabs the key on the root window (with and without Num Lock and Caps Lock,
  which X counts as modifiers), on an X connection of its own;
- where the session offers sway's IPC, it binds the key to a `nop` command naming it, and
  sway's binding events say when it ran.
Elsewhere (GNOME's and KWin's headless sessions) nothing binds it: `binds` says so before a
task that needs it starts. A listener runs in a thread and stops when asked, within a tenth
of a second.
"""

from __future__ import annotations

import json
import logging
import select
import socket
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from Xlib import XK, X  # type: ignore[import-untyped, unused-ignore]
from Xlib import error as xerror  # type: ignore[import-untyped, unused-ignore]
from Xlib.display import Display  # type: ignore[import-untyped, unused-ignore]

from roundhouse.devices.linux.desktops.desktop import Desktop
from roundhouse.devices.linux.display.backend import Backend
from roundhouse.devices.linux.display.wlroots.sway import (
    HEADER,
    MAGIC,
    SwayError,
    SwayIpc,
    sway_socket,
)

log = logging.getLogger(__name__)

SWAY_IPC = "SWAYSOCK"  # the variable of a session that offers sway's IPC
MODIFIERS = {"ctrl": X.ControlMask, "alt": X.Mod1Mask, "shift": X.ShiftMask, "super": X.Mod4Mask}
LOCKS = (0, X.LockMask, X.Mod2Mask, X.LockMask | X.Mod2Mask)  # Caps Lock, Num Lock
POLL = 0.1


@dataclass(frozen=True)
class Shortcut:
    keys: str  # "ctrl+alt+t"
    action: Callable[[], None]

    def parsed(self) -> tuple[int, str]:
        *mods, key = self.keys.lower().split("+")
        mask = 0
        for mod in mods:
            if mod not in MODIFIERS:
                raise ValueError(f"shortcut {self.keys!r}: unknown modifier {mod!r}")
            mask |= MODIFIERS[mod]
        return mask, key


class Listener(Protocol):
    def start(self) -> None: ...

    def stop(self) -> None: ...


def binds(backend: Backend) -> bool:
    """Whether a listener can bind shortcuts on a session of this backend (decided before it
    starts: X11, or a session exporting sway's IPC)."""
    return not backend.wayland or SWAY_IPC in backend.exports


def listener(desktop: Desktop, shortcuts: list[Shortcut]) -> Listener | None:
    """The listener for this desktop's display server; None where nothing can bind keys."""
    if not desktop.wayland:
        return ShortcutListener(desktop.display, shortcuts)
    if desktop.env.get(SWAY_IPC):
        return SwayShortcuts(desktop.env, shortcuts)
    return None


class _Listening(ABC):
    """What both listeners share: a thread that reads the key events until `stop`, and
    running a pressed shortcut's action."""

    def __init__(self) -> None:
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @abstractmethod
    def _listen(self) -> None: ...

    @abstractmethod
    def _close(self) -> None:
        """Close the connection the events came on (the thread has ended)."""

    def _start_listening(self) -> None:
        self._thread = threading.Thread(target=self._listen, name="osworld-shortcuts", daemon=True)
        self._thread.start()

    def _run(self, shortcut: Shortcut) -> None:
        try:
            shortcut.action()
        except OSError as error:
            log.warning("shortcut %s failed: %s", shortcut.keys, error)

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2 * POLL + 1)
            self._thread = None
        self._close()


class ShortcutListener(_Listening):
    """On X11: the keys grabbed on the root window."""

    def __init__(self, display: str, shortcuts: list[Shortcut]) -> None:
        super().__init__()
        self._display_name = display
        self._shortcuts = shortcuts
        self._x: Display | None = None
        self._bound: dict[tuple[int, int], Shortcut] = {}

    def start(self) -> None:
        self._x = Display(self._display_name)
        root = self._x.screen().root
        for shortcut in self._shortcuts:
            mask, key = shortcut.parsed()
            keycode = self._x.keysym_to_keycode(XK.string_to_keysym(key))
            if not keycode:
                raise ValueError(f"shortcut {shortcut.keys!r}: no key {key!r} on this keyboard")
            for lock in LOCKS:
                root.grab_key(keycode, mask | lock, True, X.GrabModeAsync, X.GrabModeAsync)
            self._bound[(keycode, mask)] = shortcut
        self._x.sync()
        self._start_listening()

    def _listen(self) -> None:
        x = self._x
        assert x is not None
        ignored = ~(X.LockMask | X.Mod2Mask)
        while not self._stop.is_set():
            try:
                ready, _, _ = select.select([x.fileno()], [], [], POLL)
                if not ready and not x.pending_events():
                    continue
                while x.pending_events():
                    event = x.next_event()
                    if event.type != X.KeyPress:
                        continue
                    shortcut = self._bound.get((event.detail, event.state & ignored & 0xFF))
                    if shortcut is not None:
                        self._run(shortcut)
            except (OSError, ValueError, xerror.ConnectionClosedError) as error:
                if not self._stop.is_set():
                    log.warning("the shortcut listener lost its X connection: %s", error)
                return

    def _close(self) -> None:
        if self._x is not None:
            self._x.close()
            self._x = None


SUBSCRIBE = 2
BINDING_EVENT = 0x80000005
SWAY_MODIFIERS = {"ctrl": "Ctrl", "alt": "Mod1", "shift": "Shift", "super": "Mod4"}
NOP_MARK = "roundhouse-shortcut-"


def sway_keys(shortcut: Shortcut) -> str:
    """The shortcut in sway's bindsym syntax: "ctrl+alt+t" -> "Ctrl+Mod1+t"."""
    *mods, key = shortcut.keys.lower().split("+")
    unknown = [mod for mod in mods if mod not in SWAY_MODIFIERS]
    if unknown:
        raise ValueError(f"shortcut {shortcut.keys!r}: unknown modifier {unknown[0]!r}")
    return "+".join([*(SWAY_MODIFIERS[mod] for mod in mods), key])


class SwayShortcuts(_Listening):
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
