"""wlroots input: a virtual pointer (zwlr_virtual_pointer_v1) and a virtual keyboard
(zwp_virtual_keyboard_v1), on one Wayland connection kept open.

The keyboard carries a keymap of ours: the session's layout (as the compositor itself
reads it for keyboards without settings of their own: XKB_DEFAULT_LAYOUT, else US), so key
codes mean what applications expect of them, plus a key for each character the layout
lacks, added (and the keymap sent again) when one is first typed. A wlroots compositor
hands the focused application the keymap of the keyboard that sent a key: what we type
arrives as typed, whatever layout the person's own keyboard has. A virtual keyboard's keymap reaches
the focused application with its first key; the first key after a keymap is sent waits a
moment, or it may be read with the old map (wtype's lost first key).
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping

from roundhouse.devices.linux.display.base import Button
from roundhouse.devices.linux.display.keyboard import Chord
from roundhouse.devices.linux.display.keys import InputError
from roundhouse.devices.linux.display.pointer import EVDEV_BUTTONS, WHEEL_STEP
from roundhouse.devices.linux.display.wayland.globals import (
    KEYMAP_XKB_V1,
    bind_outputs,
    desktop_box,
    memfd_with,
)
from roundhouse.devices.linux.display.wayland.input import WaylandInput
from roundhouse.devices.linux.display.wayland.keymap import Keymap, with_extra_keys
from roundhouse.devices.linux.display.wayland.wire import WaylandError

PRESSED, RELEASED = 1, 0
AXIS_SOURCE_WHEEL = 0
KEYMAP_SETTLE = 0.05  # seconds between a new keymap and the first key read with it
# Requests of zwlr_virtual_pointer_v1 and zwp_virtual_keyboard_v1.
MOTION_ABSOLUTE, BUTTON, FRAME, AXIS_SOURCE, AXIS_DISCRETE = 1, 2, 4, 5, 7
KEYMAP, KEY, MODIFIERS = 0, 1, 2


class WlrootsInput(WaylandInput):
    """Pointer and keyboard through wlroots' virtual input protocols (a display.base.Input)."""

    def _setup(self) -> None:
        wayland = self._wayland
        registry = {g.interface for g in wayland.registry().values()}
        missing = [
            name
            for name in ("zwlr_virtual_pointer_manager_v1", "zwp_virtual_keyboard_manager_v1")
            if name not in registry
        ]
        if missing:
            raise WaylandError(
                f"this compositor offers no {' or '.join(missing)}: wlroots input needs sway, "
                "Hyprland, labwc, river or another wlroots compositor"
            )
        # The pointer's absolute motion spans every output: the desktop's box.
        self._box = desktop_box(bind_outputs(wayland))
        seat = wayland.bind("wl_seat", 1)
        pointers = wayland.bind("zwlr_virtual_pointer_manager_v1", 1)
        keyboards = wayland.bind("zwp_virtual_keyboard_manager_v1", 1)
        self._pointer = wayland.new_id()
        wayland.request(pointers, 0, "on", seat, self._pointer)  # create_virtual_pointer
        # The keyboard and its keymap go in one write, handled together: sway makes a new
        # keyboard the seat's at once, and a client that asks for the seat's keymap before
        # ours arrives is told there is none (swaylock 1.8 exits on that, and leaves the
        # session locked with nobody to unlock it).
        self._base = Keymap.from_names(*session_layout(self._env))
        self._extra: dict[int, int] = {}  # keycode -> keysym, beyond the layout
        self._keymap = self._base
        self._keyboard = wayland.new_id()
        with wayland.batch():
            wayland.request(keyboards, 0, "on", seat, self._keyboard)  # create_virtual_keyboard
            self._send_keymap(self._base.text)
        wayland.roundtrip()

    # ------------------------------------------------------------ pointer

    def _screen_size(self) -> tuple[int, int]:
        return self._box.right, self._box.bottom

    def _motion(self, x: int, y: int) -> None:
        # motion_absolute(time, x, y, x_extent, y_extent), in a frame of its own: a point
        # of the box every output lies in (logical pixels, whatever an output's scale)
        box = self._box
        self._wayland.request(
            self._pointer, MOTION_ABSOLUTE, "uuuuu",
            _now(), x - box.left, y - box.top, box.width, box.height,
        )  # fmt: skip
        self._frame()

    def _button(self, button: Button, pressed: bool) -> None:
        state = PRESSED if pressed else RELEASED
        self._wayland.request(self._pointer, BUTTON, "uuu", _now(), EVDEV_BUTTONS[button], state)
        self._frame()

    def _axis(self, axis: int, steps: int) -> None:
        sign = 1 if steps > 0 else -1
        for _ in range(abs(steps)):  # a notch: its source, the discrete step, a frame
            self._wayland.request(self._pointer, AXIS_SOURCE, "u", AXIS_SOURCE_WHEEL)
            self._wayland.request(
                self._pointer, AXIS_DISCRETE, "uufi", _now(), axis, sign * WHEEL_STEP, sign
            )
            self._frame()

    def _frame(self) -> None:
        self._wayland.request(self._pointer, FRAME)

    # ------------------------------------------------------------ keyboard

    def _hold(self, chord: Chord, pressed: bool) -> None:
        """The chord's modifiers, set around its key: wlroots does not work a virtual
        keyboard's modifiers out from its keys, the client says them."""
        mask = self._keymap.mask(chord.modifiers)
        if mask:  # modifiers(depressed, latched, locked, group)
            self._wayland.request(
                self._keyboard, MODIFIERS, "uuuu", mask if pressed else 0, 0, 0, 0
            )

    def _key(self, keycode: int, pressed: bool) -> None:
        state = PRESSED if pressed else RELEASED
        self._wayland.request(self._keyboard, KEY, "uuu", _now(), keycode - 8, state)

    def _add_keys(self, keysyms: list[int]) -> Keymap:
        """A keymap with keys for `keysyms` too, sent to the compositor."""
        free = [code for code in self._base.free_keycodes() if code not in self._extra]
        if len(free) < len(keysyms):  # full: start again from the layout
            self._extra.clear()
            free = self._base.free_keycodes()
        if len(free) < len(keysyms):
            raise InputError(f"{len(keysyms)} characters at once are more than a keymap holds")
        self._extra.update(zip(free, keysyms, strict=False))
        self._keymap = Keymap(with_extra_keys(self._base.text, self._extra))
        self._send_keymap(self._keymap.text)
        self._wayland.roundtrip()
        time.sleep(KEYMAP_SETTLE)
        return self._keymap

    def _send_keymap(self, text: str) -> None:
        data = text.encode() + b"\0"
        fd = memfd_with(data, "roundhouse-keymap")
        try:
            self._wayland.request(self._keyboard, KEYMAP, "uhu", KEYMAP_XKB_V1, fd, len(data))
        finally:
            os.close(fd)


def session_layout(env: Mapping[str, str]) -> tuple[str, str]:
    """The layout and variant a wlroots session reads keys in where nothing else is set:
    XKB_DEFAULT_LAYOUT and XKB_DEFAULT_VARIANT (a list's first), else US."""
    layout = env.get("XKB_DEFAULT_LAYOUT", "").split(",")[0].strip() or "us"
    variant = env.get("XKB_DEFAULT_VARIANT", "").split(",")[0].strip()
    return layout, variant


def _now() -> int:
    return int(time.monotonic() * 1000) & 0xFFFFFFFF
