"""GNOME input through Mutter's remote desktop (org.gnome.Mutter.RemoteDesktop).

A remote-desktop session with a screen cast of the primary monitor lets a client move the
pointer to absolute positions on that monitor and press keys and buttons, with no dialog.
The session belongs to the D-Bus connection that made it (it ends when that closes), and
starting it needs PipeWire in the session (the screen cast's stream).

Keys go as key codes of the session's own keymap (read from the seat, as applications
read it): Mutter would take keysyms too, but drops one its layout lacks without a word.
A character the layout lacks is composed with its dead key where it has one (é: dead
acute, e), else refused, naming set_text, which types any text.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping

from dbus_fast import Message, Variant

from roundhouse.devices.linux.display.base import Button, DisplayUnavailable
from roundhouse.devices.linux.display.pointer import EVDEV_BUTTONS
from roundhouse.devices.linux.display.wayland.dbus import DBusCallError, SyncBus
from roundhouse.devices.linux.display.wayland.globals import seat_keymap
from roundhouse.devices.linux.display.wayland.keyboard import ChordKeyboard
from roundhouse.devices.linux.display.wayland.keymap import Keymap
from roundhouse.devices.linux.display.wayland.pointer import ApproachingPointer
from roundhouse.devices.linux.display.wayland.wire import Connection, WaylandError

REMOTE = "org.gnome.Mutter.RemoteDesktop"
REMOTE_PATH = "/org/gnome/Mutter/RemoteDesktop"
REMOTE_SESSION = "org.gnome.Mutter.RemoteDesktop.Session"
CAST = "org.gnome.Mutter.ScreenCast"
CAST_PATH = "/org/gnome/Mutter/ScreenCast"
CAST_SESSION = "org.gnome.Mutter.ScreenCast.Session"
CAST_STREAM = "org.gnome.Mutter.ScreenCast.Stream"
START_TIMEOUT = 5.0  # seconds for the screen cast's PipeWire stream to appear
# The first key after a session starts was lost (measured on Mutter 43; see _wake): a
# Shift pressed and released, and a pause, go first.
WARM_UP = 0.3
KEY_LEFTSHIFT = 42  # evdev: the same key on every layout
KEYMAP_TIMEOUT = 2.0
KEYBOARD_SETTLE = 0.05  # seconds for a window to be handed the keyboard (see _wake)


class MutterInput(ApproachingPointer, ChordKeyboard):
    """Pointer and keyboard through Mutter's remote desktop (a display.base.Input)."""

    def __init__(self, bus: SyncBus, env: Mapping[str, str], size: tuple[int, int]) -> None:
        self._bus = bus
        self._lock = threading.Lock()
        self.size = size
        self._queued: list[Message] = []  # pointer events not sent yet (_flush)
        self.node = 0  # the PipeWire node of the screen cast, once started
        # When our last input was sent (time.monotonic(), Mutter's clock too): the person
        # watch (gnome/person_watch.py) tells ours from other input by it.
        self.last_sent = time.monotonic()
        if not bus.has_name(REMOTE):
            raise DisplayUnavailable(
                "this GNOME session offers no org.gnome.Mutter.RemoteDesktop on its session bus"
            )
        (self._session,) = bus.call(REMOTE, REMOTE_PATH, REMOTE, "CreateSession")
        try:
            self._start()
            # Read once the session's virtual keyboard exists: a headless seat has none
            # before, and asking it for a keyboard then is a protocol error.
            with Connection.open(env) as wayland:
                self._keymap = Keymap(seat_keymap(wayland, KEYMAP_TIMEOUT))
        except WaylandError as error:
            self._stop()
            raise DisplayUnavailable(f"cannot read the session's keyboard map: {error}") from None
        except BaseException:
            self._stop()
            raise

    def _start(self) -> None:
        (properties,) = self._bus.call(
            REMOTE, self._session, "org.freedesktop.DBus.Properties", "GetAll", "s",
            [REMOTE_SESSION],
        )  # fmt: skip
        session_id = properties["SessionId"].value
        options = {"remote-desktop-session-id": Variant("s", session_id)}
        (cast,) = self._bus.call(CAST, CAST_PATH, CAST, "CreateSession", "a{sv}", [options])
        # The primary monitor (""), without the pointer drawn in: absolute pointer positions
        # are this stream's, and its PipeWire node is the screen (gnome/cast.py).
        (self._stream,) = self._bus.call(
            CAST,
            cast,
            CAST_SESSION,
            "RecordMonitor",
            "sa{sv}",
            ["", {"cursor-mode": Variant("u", 0)}],
        )
        added = self._bus.watch(CAST_STREAM, "PipeWireStreamAdded", self._stream)
        try:
            self._call("Start")
            (self.node,) = added.next(START_TIMEOUT)
        except (DBusCallError, TimeoutError) as error:
            raise DisplayUnavailable(
                f"Mutter's remote desktop did not start ({error}); it needs PipeWire in the "
                "session: start pipewire and wireplumber"
            ) from None
        # Mutter makes the session's virtual pointer at its first pointer event, and a
        # click that was the first, sent in one go (_flush), went nowhere (5 test runs of
        # 5; 0 of 5 with this): a motion by nothing makes it now, and the keyboard's
        # warm-up covers both.
        self._call("NotifyPointerMotionRelative", "dd", 0.0, 0.0)
        self._wake(WARM_UP)

    def wake(self) -> None:
        """Give the focused window the keyboard (see _wake)."""
        with self._lock:
            self._wake(KEYBOARD_SETTLE)

    def _wake(self, pause: float = KEYBOARD_SETTLE) -> None:
        """Mutter 43 hands the window it has focused the keyboard only with the next key it
        is sent, and that key is lost: gedit, focused and left alone, never said it was
        active, and the first letter typed into it went missing (a window the application
        presents again, once its document has loaded, loses it again). So a Shift alone
        goes first, and after a pause a second one: a key sent at once after the first was
        lost too, now and then (1 run in 6 of the display tests). Before every text or
        combination too (the keyboard's hook)."""
        self._evdev_key(KEY_LEFTSHIFT, True)
        self._evdev_key(KEY_LEFTSHIFT, False)
        time.sleep(pause)
        self._evdev_key(KEY_LEFTSHIFT, True)
        self._evdev_key(KEY_LEFTSHIFT, False)

    def _call(self, member: str, signature: str = "", *args: object) -> None:
        if member.startswith("Notify"):
            self.last_sent = time.monotonic()
        self._bus.call(REMOTE, self._session, REMOTE_SESSION, member, signature, list(args))

    def _queue(self, member: str, signature: str, *args: object) -> None:
        """A pointer event, sent with the rest of its click, move or scroll at `_flush`."""
        self._queued.append(
            Message(
                destination=REMOTE,
                path=self._session,
                interface=REMOTE_SESSION,
                member=member,
                signature=signature,
                body=list(args),
            )
        )

    def _flush(self) -> None:
        """Send the queued pointer events in one go: Mutter answers each once its main
        loop gets to it, which it may do only after drawing a frame, and a click's four
        calls one after another took 4-40 ms."""
        queued, self._queued = self._queued, []
        if queued:
            self.last_sent = time.monotonic()
            self._bus.call_all(queued)

    def close(self) -> None:
        with self._lock:
            self._stop()

    def _stop(self) -> None:
        try:
            self._call("Stop")
        except (DBusCallError, RuntimeError, TimeoutError):
            pass  # already stopped, or the session is gone with the bus

    # ------------------------------------------------------------ pointer

    def _screen_size(self) -> tuple[int, int]:
        return self.size

    def _motion(self, x: int, y: int) -> None:
        """Move the pointer, without waiting for it to get there. Mutter moves it on its
        input thread after answering, but runs the session's motions and buttons there in
        the order they were sent, so a button follows the motion before it. Waiting for
        the Shell to report the new position, and 30 ms more per motion, cost ~100 ms a
        click and saved none: without it, 0 of 280 clicks missed (GTK 3, GTK 4 and Qt;
        into a window shown a moment before, the pointer coming from outside it; beside
        two busy loops)."""
        self._queue("NotifyPointerMotionAbsolute", "sdd", self._stream, float(x), float(y))

    def _button(self, button: Button, pressed: bool) -> None:
        self._queue("NotifyPointerButton", "ib", EVDEV_BUTTONS[button], pressed)

    def _axis(self, axis: int, steps: int) -> None:
        self._queue("NotifyPointerAxisDiscrete", "ui", axis, steps)

    # ------------------------------------------------------------ keyboard

    def _key(self, keycode: int, pressed: bool) -> None:
        self._evdev_key(keycode - 8, pressed)

    def _evdev_key(self, evdev: int, pressed: bool) -> None:
        self._call("NotifyKeyboardKeycode", "ub", evdev, pressed)
