"""wlroots input: a virtual pointer (zwlr_virtual_pointer_v1) and a virtual keyboard
(zwp_virtual_keyboard_v1), on one Wayland connection kept open.

The keyboard carries a keymap of ours: the US layout, so key codes mean what
applications expect of them, plus a key for each character the layout lacks, added
(and the keymap sent again) when one is first typed. A virtual keyboard's keymap reaches
the focused application with its first key; the first key after a keymap is sent waits a
moment, or it may be read with the old map (wtype's lost first key).
"""

from __future__ import annotations

import os
import time

from roundhouse.devices.linux.display.base import DRAG_PAUSE, Button, drag_path
from roundhouse.devices.linux.display.keys import InputError
from roundhouse.devices.linux.display.wayland.globals import (
    KEYMAP_XKB_V1,
    Output,
    bind_output,
    memfd_with,
)
from roundhouse.devices.linux.display.wayland.input import WaylandInput
from roundhouse.devices.linux.display.wayland.keyboard import Chord
from roundhouse.devices.linux.display.wayland.keymap import Keymap, with_extra_keys
from roundhouse.devices.linux.display.wayland.pointer import approach
from roundhouse.devices.linux.display.wayland.wire import WaylandError

BUTTONS = {"left": 0x110, "right": 0x111, "middle": 0x112}  # evdev BTN_*
PRESSED, RELEASED = 1, 0
AXIS_VERTICAL, AXIS_HORIZONTAL = 0, 1
AXIS_SOURCE_WHEEL = 0
WHEEL_STEP = 15.0  # a wheel notch, as libinput reports one
KEYMAP_SETTLE = 0.05  # seconds between a new keymap and the first key read with it
KEY_DELAY = 0.002


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
        self.output: Output = bind_output(wayland)
        seat = wayland.bind("wl_seat", 1)
        pointers = wayland.bind("zwlr_virtual_pointer_manager_v1", 1)
        keyboards = wayland.bind("zwp_virtual_keyboard_manager_v1", 1)
        self._pointer = wayland.new_id()
        wayland.request(pointers, 0, "on", seat, self._pointer)  # create_virtual_pointer
        self._keyboard = wayland.new_id()
        wayland.request(keyboards, 0, "on", seat, self._keyboard)  # create_virtual_keyboard
        self._base = Keymap.from_names("us")
        self._extra: dict[int, int] = {}  # keycode -> keysym, beyond the layout
        self._keymap = self._base
        self._send_keymap(self._base.text)
        wayland.roundtrip()

    # ------------------------------------------------------------ pointer

    def move(self, x: int, y: int) -> None:
        with self._lock:
            self._motion(x, y)
            self._frame()
            self._wayland.roundtrip()

    def click(self, x: int, y: int, button: Button = "left", count: int = 1) -> None:
        code = BUTTONS[button]
        with self._lock:
            self._motion(x, y)
            self._frame()
            for _ in range(count):
                self._button(code, PRESSED)
                self._button(code, RELEASED)
            self._wayland.roundtrip()

    def scroll(self, x: int, y: int, dx: int = 0, dy: int = 0) -> None:
        """dy > 0 scrolls down, dx > 0 right, one wheel notch per unit."""
        with self._lock:
            self._motion(x, y)
            self._frame()
            for axis, steps in ((AXIS_VERTICAL, dy), (AXIS_HORIZONTAL, dx)):
                for _ in range(abs(steps)):
                    sign = 1 if steps > 0 else -1
                    self._wayland.request(self._pointer, 5, "u", AXIS_SOURCE_WHEEL)
                    self._wayland.request(
                        self._pointer, 7, "uufi", _now(), axis, sign * WHEEL_STEP, sign
                    )
                    self._frame()
            self._wayland.roundtrip()

    def drag(self, start: tuple[int, int], end: tuple[int, int], button: Button = "left") -> None:
        code = BUTTONS[button]
        with self._lock:
            self._motion(*start)
            self._frame()
            self._button(code, PRESSED)
            self._wayland.roundtrip()
            for x, y in drag_path(start, end):
                self._motion(x, y)
                self._frame()
                self._wayland.roundtrip()
                time.sleep(DRAG_PAUSE)
            self._button(code, RELEASED)
            self._wayland.roundtrip()

    def _motion(self, x: int, y: int) -> None:
        width, height = self.output.width, self.output.height
        if not (0 <= x < width and 0 <= y < height):
            raise InputError(f"({x}, {y}) is outside the {width}x{height} screen")
        for px, py in approach(x, y, width):
            # motion_absolute(time, x, y, x_extent, y_extent), each in its own frame
            self._wayland.request(self._pointer, 1, "uuuuu", _now(), px, py, width, height)
            self._frame()

    def _button(self, code: int, state: int) -> None:
        self._wayland.request(self._pointer, 2, "uuu", _now(), code, state)
        self._frame()

    def _frame(self) -> None:
        self._wayland.request(self._pointer, 4)

    # ------------------------------------------------------------ keyboard

    def _play(self, chords: list[Chord]) -> None:
        """Each chord's keys, with its modifiers set around its key: wlroots does not
        work a virtual keyboard's modifiers out from its keys, the client says them."""
        for chord in chords:
            mask = self._keymap.mask(chord.modifiers)
            for keycode in chord.held:
                self._key(keycode, PRESSED)
            if mask:
                self._modifiers(mask)
            self._key(chord.key, PRESSED)
            self._key(chord.key, RELEASED)
            if mask:
                self._modifiers(0)
            for keycode in reversed(chord.held):
                self._key(keycode, RELEASED)
            self._wayland.roundtrip()
            time.sleep(KEY_DELAY)

    def _modifiers(self, depressed: int) -> None:
        # modifiers(depressed, latched, locked, group)
        self._wayland.request(self._keyboard, 2, "uuuu", depressed, 0, 0, 0)

    def _key(self, keycode: int, state: int) -> None:
        self._wayland.request(self._keyboard, 1, "uuu", _now(), keycode - 8, state)

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
            self._wayland.request(self._keyboard, 0, "uhu", KEYMAP_XKB_V1, fd, len(data))
        finally:
            os.close(fd)


def _now() -> int:
    return int(time.monotonic() * 1000) & 0xFFFFFFFF
