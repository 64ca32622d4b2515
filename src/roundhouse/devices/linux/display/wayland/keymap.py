"""XKB keymaps, through libxkbcommon (the library every Wayland toolkit loads).

On Wayland a key press is a keycode, and the client turns it into a character with the
keymap the compositor sent it. Two questions follow, and libxkbcommon answers both:

- which key (and which modifiers) gives a character in a compositor's keymap (KWin's fake
  input sends keycodes; Mutter drops a keysym its layout lacks without a word);
- a keymap of our own for a virtual keyboard (wlroots): a US layout, so shortcuts and
  physical key codes mean what applications expect, plus keys for the characters the
  layout lacks (é on a US map, €, 漢), added as they are typed.

Keycodes here are XKB's (evdev + 8), as in the keymap text.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
from dataclasses import dataclass

EVDEV_OFFSET = 8
FORMAT_TEXT_V1 = 1
_MODIFIER_KEYSYMS = {
    "Shift": 0xFFE1,  # Shift_L
    "Lock": 0xFFE5,  # Caps_Lock
    "Control": 0xFFE3,  # Control_L
    "Mod1": 0xFFE9,  # Alt_L
    "Mod4": 0xFFEB,  # Super_L
    "Mod5": 0xFE03,  # ISO_Level3_Shift (AltGr)
}


class KeymapError(RuntimeError):
    """libxkbcommon is missing, or a keymap did not compile."""


class _RuleNames(ctypes.Structure):
    _fields_ = [
        ("rules", ctypes.c_char_p),
        ("model", ctypes.c_char_p),
        ("layout", ctypes.c_char_p),
        ("variant", ctypes.c_char_p),
        ("options", ctypes.c_char_p),
    ]


@functools.cache
def _lib() -> ctypes.CDLL:
    name = ctypes.util.find_library("xkbcommon") or "libxkbcommon.so.0"
    try:
        lib = ctypes.CDLL(name)
    except OSError as error:
        raise KeymapError(
            f"cannot load libxkbcommon ({error}); install it: sudo apt-get install libxkbcommon0"
        ) from None
    p, u32, i = ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int
    signatures: dict[str, tuple[object, list[object]]] = {
        "xkb_context_new": (p, [i]),
        "xkb_context_unref": (None, [p]),
        "xkb_keymap_new_from_string": (p, [p, ctypes.c_char_p, i, i]),
        "xkb_keymap_new_from_names": (p, [p, ctypes.POINTER(_RuleNames), i]),
        "xkb_keymap_unref": (None, [p]),
        "xkb_keymap_get_as_string": (p, [p, i]),
        "xkb_keymap_min_keycode": (u32, [p]),
        "xkb_keymap_max_keycode": (u32, [p]),
        "xkb_keymap_num_layouts_for_key": (u32, [p, u32]),
        "xkb_keymap_num_levels_for_key": (u32, [p, u32, u32]),
        "xkb_keymap_key_get_syms_by_level": (
            i,
            [p, u32, u32, u32, ctypes.POINTER(ctypes.POINTER(u32))],
        ),
        "xkb_keymap_key_get_mods_for_level": (
            ctypes.c_size_t,
            [p, u32, u32, u32, ctypes.POINTER(u32), ctypes.c_size_t],
        ),
        "xkb_keymap_mod_get_index": (u32, [p, ctypes.c_char_p]),
        "xkb_keymap_num_mods": (u32, [p]),
        "xkb_keymap_mod_get_name": (ctypes.c_char_p, [p, u32]),
        "xkb_keysym_to_utf32": (u32, [u32]),
        "xkb_keysym_get_name": (i, [u32, ctypes.c_char_p, ctypes.c_size_t]),
    }
    for function, (restype, argtypes) in signatures.items():
        handle = getattr(lib, function)
        handle.restype = restype
        handle.argtypes = argtypes
    return lib


def _free(pointer: int) -> None:
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    libc.free(ctypes.c_void_p(pointer))


def keysym_name(keysym: int) -> str:
    """The keysym's XKB name ("a", "EuroSign", "U4E2D")."""
    buffer = ctypes.create_string_buffer(64)
    if _lib().xkb_keysym_get_name(keysym, buffer, len(buffer)) < 0:
        return f"0x{keysym:08x}"
    return buffer.value.decode()


def keysym_char(keysym: int) -> str:
    """The character a keysym types, or "" (Return, F4, Shift_L)."""
    code = int(_lib().xkb_keysym_to_utf32(keysym))
    return chr(code) if code and code != 0x7F and code >= 0x20 else ""


@dataclass(frozen=True)
class Stroke:
    """One key and the modifiers (by XKB name: "Shift", "Mod5") that give a keysym."""

    keycode: int
    modifiers: tuple[str, ...] = ()


class Keymap:
    """A compiled keymap, as an index from keysym (and character) to the key that gives it
    at the lowest level of the first layout that has it."""

    def __init__(self, text: str) -> None:
        lib = _lib()
        context = lib.xkb_context_new(0)
        if not context:
            raise KeymapError("libxkbcommon could not make a context")
        try:
            keymap = lib.xkb_keymap_new_from_string(context, text.encode(), FORMAT_TEXT_V1, 0)
            if not keymap:
                raise KeymapError("the keymap did not compile")
            try:
                self._index(keymap)
                pointer = lib.xkb_keymap_get_as_string(keymap, FORMAT_TEXT_V1)
                self.text = ctypes.string_at(pointer).decode()
                _free(pointer)
            finally:
                lib.xkb_keymap_unref(keymap)
        finally:
            lib.xkb_context_unref(context)

    @classmethod
    def from_names(cls, layout: str = "us", variant: str = "") -> Keymap:
        """The system's XKB data compiled for a layout (rules evdev, model pc105)."""
        lib = _lib()
        context = lib.xkb_context_new(0)
        names = _RuleNames(b"evdev", b"pc105", layout.encode(), variant.encode(), b"")
        keymap = lib.xkb_keymap_new_from_names(context, ctypes.byref(names), 0)
        try:
            if not keymap:
                raise KeymapError(
                    f"no XKB layout {layout!r}: is xkb-data installed (sudo apt-get install "
                    "xkb-data)?"
                )
            pointer = lib.xkb_keymap_get_as_string(keymap, FORMAT_TEXT_V1)
            text = ctypes.string_at(pointer).decode()
            _free(pointer)
        finally:
            if keymap:
                lib.xkb_keymap_unref(keymap)
            lib.xkb_context_unref(context)
        return cls(text)

    def _index(self, keymap: int) -> None:
        lib = _lib()
        mod_names = [
            (lib.xkb_keymap_mod_get_name(keymap, index) or b"").decode()
            for index in range(lib.xkb_keymap_num_mods(keymap))
        ]
        self.mod_bits = {name: 1 << index for index, name in enumerate(mod_names) if name}
        self.by_keysym: dict[int, Stroke] = {}
        self.by_char: dict[str, Stroke] = {}
        self.keysym_of_char: dict[str, int] = {}
        self.used: set[int] = set()
        syms = ctypes.POINTER(ctypes.c_uint32)()
        masks = (ctypes.c_uint32 * 8)()
        first, last = lib.xkb_keymap_min_keycode(keymap), lib.xkb_keymap_max_keycode(keymap)
        self.max_keycode = int(last)
        # Level by level over every key, so a keysym's cheapest key wins (a on level 1,
        # not a level-3 duplicate somewhere else).
        found: list[tuple[int, int, int, int, tuple[str, ...]]] = []
        for keycode in range(first, last + 1):
            layouts = lib.xkb_keymap_num_layouts_for_key(keymap, keycode)
            for layout in range(min(layouts, 1)):  # the first (active by default) layout
                for level in range(lib.xkb_keymap_num_levels_for_key(keymap, keycode, layout)):
                    count = lib.xkb_keymap_key_get_syms_by_level(
                        keymap, keycode, layout, level, ctypes.byref(syms)
                    )
                    if count != 1:
                        continue
                    self.used.add(keycode)
                    n = lib.xkb_keymap_key_get_mods_for_level(
                        keymap, keycode, layout, level, masks, len(masks)
                    )
                    if n == 0:
                        continue
                    mask = min((masks[k] for k in range(n)), key=lambda m: bin(m).count("1"))
                    modifiers = tuple(
                        name for bit, name in enumerate(mod_names) if mask & (1 << bit)
                    )
                    found.append((level, len(modifiers), keycode, syms[0], modifiers))
        for _level, _cost, keycode, keysym, modifiers in sorted(found):
            stroke = Stroke(keycode, modifiers)
            self.by_keysym.setdefault(keysym, stroke)
            char = keysym_char(keysym)
            if char:
                self.by_char.setdefault(char, stroke)
                self.keysym_of_char.setdefault(char, keysym)

    def stroke(self, keysym: int) -> Stroke | None:
        """The key for a keysym; a Unicode keysym (0x01000000 + code) is found by its
        character too."""
        if keysym in self.by_keysym:
            return self.by_keysym[keysym]
        char = keysym_char(keysym)
        return self.by_char.get(char) if char else None

    def mask(self, modifiers: tuple[str, ...]) -> int:
        """The modifier mask of XKB modifier names, as wl_keyboard.modifiers carries it."""
        return sum(self.mod_bits.get(name, 0) for name in set(modifiers))

    def modifier_key(self, modifier: str) -> Stroke | None:
        """The key that sets an XKB modifier ("Shift", "Control", "Mod1", "Mod5")."""
        keysym = _MODIFIER_KEYSYMS.get(modifier)
        return None if keysym is None else self.by_keysym.get(keysym)

    def free_keycodes(self) -> list[int]:
        """Keycodes no key of this keymap uses, for characters it lacks: those up to 255
        first (X clients know no others), highest first (low ones are common keys)."""
        low = [code for code in range(255, EVDEV_OFFSET, -1) if code not in self.used]
        high = [code for code in range(256, self.max_keycode + 1) if code not in self.used]
        return low + high


def with_extra_keys(text: str, extra: dict[int, int]) -> str:
    """The keymap text with one more key per {keycode: keysym}, each on its own keycode
    and one level (what wtype does for characters a layout lacks)."""
    if not extra:
        return text
    names = {code: f"<RH{code}>" for code in extra}
    keycodes = "".join(f"\t{names[code]} = {code};\n" for code in sorted(extra))
    symbols = "".join(
        f"\tkey {names[code]} {{ [ {keysym_name(keysym)} ] }};\n"
        for code, keysym in sorted(extra.items())
    )
    return _insert_at_section_end(
        _insert_at_section_end(text, "xkb_keycodes", keycodes), "xkb_symbols", symbols
    )


def _insert_at_section_end(text: str, section: str, lines: str) -> str:
    start = text.index(section)
    depth = 0
    for position in range(text.index("{", start), len(text)):
        if text[position] == "{":
            depth += 1
        elif text[position] == "}":
            depth -= 1
            if depth == 0:
                return text[:position] + lines + text[position:]
    raise KeymapError(f"the keymap's {section} section does not end")
