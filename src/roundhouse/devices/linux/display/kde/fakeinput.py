"""KDE input through KWin's org_kde_kwin_fake_input (version 4: absolute pointer motion and
key codes), on one Wayland connection.

KWin offers the interface only to programs it trusts: in a person's Plasma session that is
a program whose desktop file lists it in X-KDE-Wayland-Interfaces; our virtual KDE
desktops run KWin with KWIN_WAYLAND_NO_PERMISSION_CHECKS. Keys are evdev key codes, read
in the session's own keymap (from the seat, as applications read it); a character the
layout lacks is refused, naming set_text.
"""

from __future__ import annotations

import time

from roundhouse.devices.linux.display.base import (
    DRAG_PAUSE,
    Button,
    DisplayUnavailable,
    drag_path,
)
from roundhouse.devices.linux.display.keys import InputError
from roundhouse.devices.linux.display.wayland.globals import Output, bind_output, seat_keymap
from roundhouse.devices.linux.display.wayland.input import WaylandInput
from roundhouse.devices.linux.display.wayland.keyboard import Chord
from roundhouse.devices.linux.display.wayland.keymap import Keymap
from roundhouse.devices.linux.display.wayland.pointer import approach

INTERFACE = "org_kde_kwin_fake_input"
BUTTONS = {"left": 0x110, "right": 0x111, "middle": 0x112}  # evdev BTN_*
PRESSED, RELEASED = 1, 0
AXIS_VERTICAL, AXIS_HORIZONTAL = 0, 1
WHEEL_STEP = 15.0  # one notch, in wl_pointer axis units
KEY_DELAY = 0.002
KEYMAP_TIMEOUT = 2.0
# Requests (org_kde_kwin_fake_input v4).
AUTHENTICATE, BUTTON, AXIS, MOTION_ABSOLUTE, KEYBOARD_KEY = 0, 2, 3, 9, 10


class FakeInput(WaylandInput):
    """Pointer and keyboard through KWin's fake input (a display.base.Input)."""

    def _setup(self) -> None:
        version = self._wayland.version(INTERFACE)
        if version < 4:
            raise DisplayUnavailable(
                f"KWin offers this program no {INTERFACE} version 4 "
                f"({'version ' + str(version) if version else 'none at all'}): in a Plasma "
                "session, a program may use it only when its desktop file lists it in "
                "X-KDE-Wayland-Interfaces (`roundhouse doctor` says how)"
            )
        self.output: Output = bind_output(self._wayland)
        self._fake = self._wayland.bind(INTERFACE, 4)
        self._wayland.request(self._fake, AUTHENTICATE, "ss", "roundhouse", "desktop automation")
        self._keymap = Keymap(seat_keymap(self._wayland, KEYMAP_TIMEOUT))
        self._wayland.roundtrip()

    # ------------------------------------------------------------ pointer

    def move(self, x: int, y: int) -> None:
        with self._lock:
            self._motion(x, y)
            self._wayland.roundtrip()

    def click(self, x: int, y: int, button: Button = "left", count: int = 1) -> None:
        with self._lock:
            self._motion(x, y)
            for _ in range(count):
                self._wayland.request(self._fake, BUTTON, "uu", BUTTONS[button], PRESSED)
                self._wayland.request(self._fake, BUTTON, "uu", BUTTONS[button], RELEASED)
            self._wayland.roundtrip()

    def scroll(self, x: int, y: int, dx: int = 0, dy: int = 0) -> None:
        with self._lock:
            self._motion(x, y)
            for axis, steps in ((AXIS_VERTICAL, dy), (AXIS_HORIZONTAL, dx)):
                for _ in range(abs(steps)):
                    value = WHEEL_STEP if steps > 0 else -WHEEL_STEP
                    self._wayland.request(self._fake, AXIS, "uf", axis, value)
            self._wayland.roundtrip()

    def drag(self, start: tuple[int, int], end: tuple[int, int], button: Button = "left") -> None:
        with self._lock:
            self._motion(*start)
            self._wayland.request(self._fake, BUTTON, "uu", BUTTONS[button], PRESSED)
            self._wayland.roundtrip()
            for x, y in drag_path(start, end):
                self._motion(x, y)
                self._wayland.roundtrip()
                time.sleep(DRAG_PAUSE)
            self._wayland.request(self._fake, BUTTON, "uu", BUTTONS[button], RELEASED)
            self._wayland.roundtrip()

    def _motion(self, x: int, y: int) -> None:
        width, height = self.output.logical_size
        if not (0 <= x < width and 0 <= y < height):
            raise InputError(f"({x}, {y}) is outside the {width}x{height} screen")
        for px, py in approach(x, y, width):
            self._wayland.request(self._fake, MOTION_ABSOLUTE, "ff", float(px), float(py))
            self._wayland.roundtrip()

    # ------------------------------------------------------------ keyboard

    def _play(self, chords: list[Chord]) -> None:
        for chord in chords:
            for keycode in chord.held:
                self._key(keycode, PRESSED)
            self._key(chord.key, PRESSED)
            self._key(chord.key, RELEASED)
            for keycode in reversed(chord.held):
                self._key(keycode, RELEASED)
            self._wayland.roundtrip()
            time.sleep(KEY_DELAY)

    def _key(self, keycode: int, state: int) -> None:
        self._wayland.request(self._fake, KEYBOARD_KEY, "uu", keycode - 8, state)
