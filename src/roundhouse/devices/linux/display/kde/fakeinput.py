"""KDE input through KWin's org_kde_kwin_fake_input (version 4: absolute pointer motion and
key codes), on one Wayland connection.

KWin offers the interface only to programs it trusts: in a person's Plasma session that is
a program whose desktop file lists it in X-KDE-Wayland-Interfaces; our virtual KDE
desktops run KWin with KWIN_WAYLAND_NO_PERMISSION_CHECKS. Keys are evdev key codes, read
in the session's own keymap (from the seat, as applications read it); a character the
layout lacks is composed with its dead key where it has one, else refused, naming set_text.
"""

from __future__ import annotations

from roundhouse.devices.contract import Rect
from roundhouse.devices.linux.display.base import Button, DisplayUnavailable
from roundhouse.devices.linux.display.pointer import EVDEV_BUTTONS, WHEEL_STEP
from roundhouse.devices.linux.display.wayland.globals import (
    bind_outputs,
    desktop_box,
    seat_keymap,
)
from roundhouse.devices.linux.display.wayland.input import WaylandInput
from roundhouse.devices.linux.display.wayland.keymap import Keymap

INTERFACE = "org_kde_kwin_fake_input"
PRESSED, RELEASED = 1, 0
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
        # KWin's absolute motion is in the desktop's logical pixels, across every output.
        self.desktop: Rect = desktop_box(bind_outputs(self._wayland))
        self._fake = self._wayland.bind(INTERFACE, 4)
        self._wayland.request(self._fake, AUTHENTICATE, "ss", "roundhouse", "desktop automation")
        self._keymap = Keymap(seat_keymap(self._wayland, KEYMAP_TIMEOUT))
        self._wayland.roundtrip()

    # ------------------------------------------------------------ pointer

    def _screen_size(self) -> tuple[int, int]:
        return self.desktop.right, self.desktop.bottom

    def _motion(self, x: int, y: int) -> None:
        # Each motion in a roundtrip of its own: the pointer arrives by moving (approach).
        self._wayland.request(self._fake, MOTION_ABSOLUTE, "ff", float(x), float(y))
        self._wayland.roundtrip()

    def _button(self, button: Button, pressed: bool) -> None:
        state = PRESSED if pressed else RELEASED
        self._wayland.request(self._fake, BUTTON, "uu", EVDEV_BUTTONS[button], state)

    def _axis(self, axis: int, steps: int) -> None:
        value = WHEEL_STEP if steps > 0 else -WHEEL_STEP
        for _ in range(abs(steps)):
            self._wayland.request(self._fake, AXIS, "uf", axis, value)

    # ------------------------------------------------------------ keyboard

    def _key(self, keycode: int, pressed: bool) -> None:
        state = PRESSED if pressed else RELEASED
        self._wayland.request(self._fake, KEYBOARD_KEY, "uu", keycode - 8, state)
