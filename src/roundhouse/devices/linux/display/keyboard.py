"""The keyboard, written once: a text or key combinations become chords (keys held around
one key), played alike on every display server; a chord may also be kept down a while.

A backend says how its chords are found (`_text_chords`, `_combo_chords`: X11 by keysym
through the server's own keymap, x11/input.py; the Wayland backends in an XKB keymap,
wayland/keyboard.py) and how one key reaches its server (`_key`); its quirks are hooks:
`_wake` before the keys (Mutter hands a window the keyboard only with a key, which it
drops), `_hold` around a chord's key (wlroots, which does not work a virtual keyboard's
modifiers out from its keys), `_flush` after each chord (X11's sync, a Wayland roundtrip).
"""

from __future__ import annotations

import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass

from roundhouse.devices.linux.display.keys import InputError, held_combo

KEY_DELAY = 0.002  # seconds between two chords: lets a busy client keep up with a burst


@dataclass(frozen=True)
class Chord:
    """Keys held (in order) around one key."""

    held: tuple[int, ...]  # key codes, as the backend's `_key` takes them
    key: int
    modifiers: tuple[str, ...] = ()  # the XKB modifiers the held keys set (Wayland keymaps)


class Keyboard(ABC):
    """type_text and press_keys (a display.base.Input's keyboard half), serialised on the
    backend's `_lock`."""

    _lock: threading.Lock
    key_delay: float = KEY_DELAY
    _held: Chord | None = None  # what keys_down holds, until keys_up

    def type_text(self, text: str) -> None:
        """Type any Unicode text ("\\n" is Return, "\\t" is Tab)."""
        with self._lock:
            self._play(self._text_chords(text))

    def press_keys(self, keys: str) -> None:
        """Press combinations ("ctrl+s", "alt+F4", "Return"), several separated by spaces,
        in turn."""
        with self._lock:
            self._play(self._combo_chords(keys))

    def keys_down(self, keys: str) -> None:
        """Press one combination ("shift", "ctrl+shift") and keep it down, until keys_up:
        keys held through a click or for a while."""
        chord = self._one_chord(keys)
        with self._lock:
            self._wake()
            for keycode in chord.held:
                self._key(keycode, True)
            self._hold(chord, True)
            self._key(chord.key, True)
            self._flush()
            self._held = chord

    def keys_up(self, keys: str) -> None:
        """Release what keys_down(keys) pressed, in the reverse order."""
        chord = self._one_chord(keys)
        with self._lock:
            self._key(chord.key, False)
            self._hold(chord, False)
            for keycode in reversed(chord.held):
                self._key(keycode, False)
            self._flush()
            self._held = None

    def _one_chord(self, keys: str) -> Chord:
        chords = list(self._combo_chords(held_combo(keys)))
        if len(chords) != 1:
            raise InputError(f"one key combination is held at a time, not {keys!r}")
        return chords[0]

    def _play(self, chords: Iterable[Chord]) -> None:
        """Press each chord in turn: its held keys, its key, then the held keys released.
        Not woken while keys_down holds keys: they woke it, and GNOME's wake (a Shift
        pressed and released) would release a Shift held."""
        if self._held is None:
            self._wake()
        for chord in chords:
            for keycode in chord.held:
                self._key(keycode, True)
            self._hold(chord, True)
            self._key(chord.key, True)
            self._key(chord.key, False)
            self._hold(chord, False)
            for keycode in reversed(chord.held):
                self._key(keycode, False)
            self._flush()
            time.sleep(self.key_delay)

    def _wake(self) -> None:  # noqa: B027 (a hook: most backends need nothing)
        """What must reach the server before the first key."""

    def _hold(self, chord: Chord, pressed: bool) -> None:  # noqa: B027 (a hook)
        """Said around the chord's key once its held keys are down (pressed) and before they
        are released (not pressed)."""

    def _flush(self) -> None:  # noqa: B027 (a hook)
        """Make sure what was sent has reached the server."""

    @abstractmethod
    def _key(self, keycode: int, pressed: bool) -> None: ...

    @abstractmethod
    def _text_chords(self, text: str) -> Iterable[Chord]:
        """The chords that type `text`; InputError, with nothing typed, for a character that
        cannot be."""

    @abstractmethod
    def _combo_chords(self, keys: str) -> Iterable[Chord]:
        """The chords of "ctrl+s alt+F4 Return"; InputError for an unknown key."""
