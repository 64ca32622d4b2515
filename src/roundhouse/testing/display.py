"""A display server in memory: what the desktop tools run on in unit tests, with no desktop.

httpx ships MockTransport so that a client is tested without a network; this is the same
for the display. FakeDesktop holds a screen (a PIL image the windows are painted on), its
windows with their controls, and the input it is sent, recorded:

    fake = FakeDesktop()
    notes = fake.open_window("Notes", controls=[FakeControl.text_field("Body", Rect(...))])
    tools = fake_tools(fake)               # testing/tools.py: DesktopTools on it
    await tools.type_text("hi", label=1)   # the field is clicked, then typed into
    fake.clicks, fake.strokes, fake.typed  # [(x, y, "left")], ["h", "i"], "hi"
    notes.controls[0].text                 # "hi"

The input goes through the shared Pointer and Keyboard (pointer.py, keyboard.py), as every
backend's does, so the bounds check and the chords are the real ones; a key is its keysym.
What an application would do is scripted: a control's `on_press` (clicked, or its action
done through the fake tree), a window's `on_close`, and FakeDesktop.on_keys.

A fake made `drawing` tells what it draws, as a compositor does (DisplayServer.drawn):
every press, key, wheel notch and change through the fake tree counts as drawn, and a
script that changes the screen later calls `drew` itself. The settle then waits on that,
as on a real session, and the look after an action is begun ahead (observing.LookAhead).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from PIL import Image, ImageDraw
from Xlib import XK  # type: ignore[import-untyped, unused-ignore]

from roundhouse.devices.contract import Rect, WindowInfo
from roundhouse.devices.linux.display.base import (
    Button,
    Closing,
    DisplayServer,
    RegionScreen,
    WindowList,
    clip,
)
from roundhouse.devices.linux.display.changes import Changes
from roundhouse.devices.linux.display.keyboard import Chord, Keyboard
from roundhouse.devices.linux.display.keys import InputError, char_keysym, key_keysym, parse_combo
from roundhouse.devices.linux.display.pointer import Pointer

# What a key does to the focused text: ctrl+a selects it all, the rest edit it.
TEXT_ROLES = frozenset({"text", "entry", "password text", "document text", "terminal", "paragraph"})
_MODIFIERS = {"Control_L": "ctrl", "Shift_L": "shift", "Alt_L": "alt", "Super_L": "super"}
_MODIFIERS["ISO_Level3_Shift"] = "altgr"
_TYPED = {"Return": "\n", "Tab": "\t"}
TITLE_BAR = 24  # pixels: where a window's title is painted, above its controls


@dataclass(eq=False)
class FakeControl:
    """One control of a fake window, as its application would show it."""

    role: str
    name: str
    rect: Rect  # on the screen
    text: str = ""
    states: set[str] = field(default_factory=lambda: {"enabled", "focusable"})
    actions: tuple[str, ...] = ()
    grabs_focus: bool = True  # Component.GrabFocus is honoured (GTK 4 refuses it)
    editable_text: bool = False  # EditableText: its text can be set or inserted into
    # False: no Text of its own, whatever its role (Writer's document: its paragraphs have it).
    readable: bool = True
    on_press: Callable[[], None] | None = None  # what a click on it, or its action, does
    id: str = ""  # given when its window opens
    caret: int = 0
    selected_all: bool = False

    @classmethod
    def text_field(
        cls, name: str, rect: Rect, text: str = "", *, editable_text: bool = False
    ) -> FakeControl:
        """A one-line text field a person types into."""
        states = {"enabled", "focusable", "editable", "single line"}
        return cls("text", name, rect, text, states, editable_text=editable_text, caret=len(text))

    @classmethod
    def button(
        cls, name: str, rect: Rect, on_press: Callable[[], None] | None = None
    ) -> FakeControl:
        return cls("push button", name, rect, actions=("click",), on_press=on_press)

    def contains(self, x: int, y: int) -> bool:
        return self.rect.left <= x < self.rect.right and self.rect.top <= y < self.rect.bottom


@dataclass(eq=False)
class FakeWindow:
    xid: int
    title: str
    application: str
    rect: Rect
    controls: list[FakeControl] = field(default_factory=list)
    pid: int | None = None
    accessible: bool = True  # False: its application exposes no accessibility tree
    toolkit: tuple[str, str] = ("", "")  # as AT-SPI names it: ("Qt", "6.4.2"), ("GTK", "4.8")
    # What a close asks of it: whether it closed (False: it asked something first).
    on_close: Callable[[], bool] | None = None

    def info(self, active: bool) -> WindowInfo:
        return WindowInfo(
            xid=self.xid,
            title=self.title,
            application=self.application,
            pid=self.pid,
            rect=self.rect,
            active=active,
        )

    def control(self, name: str) -> FakeControl:
        return next(control for control in self.controls if control.name == name)

    def add(self, *controls: FakeControl) -> None:
        """Controls that appear in the window (a panel that opens), each given its id."""
        for control in controls:
            self.controls.append(control)
            control.id = f"fake:/{self.xid}/{len(self.controls)}"


class FakeDesktop:
    """The world the fake display server shows and is driven through (see the module)."""

    def __init__(
        self, size: tuple[int, int] = (800, 600), *, stacking: bool = True, drawing: bool = False
    ) -> None:
        self.size = size
        self.stacking = stacking  # False: the windows' order is not told (as on sway, KWin)
        self.drawn = Changes("the fake screen") if drawing else None
        self.background = Image.new("RGB", size, (58, 110, 165))  # draw on it freely
        self.windows: list[FakeWindow] = []  # in stacking order: the last one on top
        self.active: int | None = None
        self.pointer = (0, 0)
        self.moves: list[tuple[int, int]] = []  # every position the pointer passed
        self.clicks: list[tuple[int, int, Button]] = []  # a button pressed, where
        self.scrolls: list[tuple[int, int, int, int]] = []  # x, y, axis, notches
        self.strokes: list[str] = []  # each key with its modifiers: "ctrl+a", "h", "Return"
        self.typed = ""  # what the keys typed, as text
        self.listings = 0  # how often the windows were listed
        self._held: list[str] = []  # modifiers held, in order
        self._on_keys: dict[str, Callable[[], None]] = {}
        self._next_xid = 0x400001
        self._lock = threading.RLock()  # input arrives on the tools' threads

    # ------------------------------------------------------------ the script

    def open_window(
        self,
        title: str,
        application: str = "fake",
        rect: Rect | None = None,
        controls: Iterable[FakeControl] = (),
        *,
        active: bool = True,
    ) -> FakeWindow:
        width, height = self.size
        with self._lock:
            xid, self._next_xid = self._next_xid, self._next_xid + 1
            window = FakeWindow(
                xid,
                title,
                application,
                rect or Rect(left=40, top=30, right=width - 40, bottom=height - 30),
            )
            window.add(*controls)
            self.windows.append(window)
            if active or self.active is None:
                self.active = xid
        return window

    def close(self, xid: int) -> None:
        with self._lock:
            self.windows = [window for window in self.windows if window.xid != xid]
            if self.active == xid:
                self.active = self.windows[-1].xid if self.windows else None

    def window(self, xid: int) -> FakeWindow:
        return next(window for window in self.windows if window.xid == xid)

    def activate(self, xid: int) -> None:
        with self._lock:
            window = self.window(xid)
            self.windows.remove(window)
            self.windows.append(window)
            self.active = xid

    def on_keys(self, combo: str, reaction: Callable[[], None]) -> None:
        """Run `reaction` when `combo` ("ctrl+s", as strokes records it) is pressed."""
        self._on_keys[combo] = reaction

    def focus(self, control: FakeControl) -> None:
        """Give the control the keyboard focus (its window's other controls lose it)."""
        with self._lock:
            for window in self.windows:
                if control in window.controls:
                    for other in window.controls:
                        other.states.discard("focused")
                    control.states.add("focused")

    def focused(self) -> FakeControl | None:
        """The control of the active window that has the keyboard focus."""
        window = next((w for w in self.windows if w.xid == self.active), None)
        if window is None:
            return None
        return next((c for c in window.controls if "focused" in c.states), None)

    def render(self) -> Image.Image:
        """The screen now: the background, and each window painted over it, with its title
        and its controls (their names and texts), so that a change shows in the pixels."""
        image = self.background.copy()
        draw = ImageDraw.Draw(image)
        with self._lock:
            for window in self.windows:
                r = window.rect
                shade = 200 if window.xid == self.active else 170
                draw.rectangle((r.left, r.top, r.right - 1, r.bottom - 1), fill=(shade,) * 3)
                draw.rectangle((r.left, r.top, r.right - 1, r.top + TITLE_BAR), fill=(90, 90, 90))
                draw.text((r.left + 6, r.top + 6), window.title, fill=(255, 255, 255))
                for control in window.controls:
                    c = control.rect
                    draw.rectangle((c.left, c.top, c.right - 1, c.bottom - 1), outline=(0, 0, 0))
                    draw.text((c.left + 3, c.top + 3), control.text or control.name, fill=(0, 0, 0))
        return image

    def server(self) -> DisplayServer:
        """A display server on this desktop, as display/backends.py opens a real one."""
        routes = {"input": "memory", "screenshots": "memory", "windows": "memory"}
        return DisplayServer(
            "fake",
            FakeInput(self),
            FakeScreen(self),
            FakeWindows(self),
            routes=routes,
            drawn=self.drawn,
        )

    def list_windows(self) -> list[WindowInfo]:
        """The windows as a display server lists them; each listing is counted."""
        with self._lock:
            self.listings += 1
            return [window.info(window.xid == self.active) for window in self.windows]

    # ------------------------------------------------------------ what input does

    def motion(self, x: int, y: int) -> None:
        with self._lock:
            self.pointer = (x, y)
            self.moves.append((x, y))

    def wheel(self, axis: int, steps: int) -> None:
        with self._lock:
            self.scrolls.append((*self.pointer, axis, steps))
        self.drew()

    def press(self, button: Button) -> None:
        """A button went down where the pointer is: the window under it is raised and made
        active, and a left press focuses the control under it and runs its on_press."""
        with self._lock:
            self._pressed(button)
        self.drew()

    def _pressed(self, button: Button) -> None:
        x, y = self.pointer
        self.clicks.append((x, y, button))
        window = next((w for w in reversed(self.windows) if _inside(w.rect, x, y)), None)
        if window is None:
            return
        self.activate(window.xid)
        control = next((c for c in reversed(window.controls) if c.contains(x, y)), None)
        if control is None or button != "left":
            return
        if "focusable" in control.states:
            self.focus(control)
            control.caret, control.selected_all = len(control.text), False
        if control.on_press is not None:
            control.on_press()

    def key(self, keysym: int, pressed: bool) -> None:
        with self._lock:
            self._key(keysym, pressed)
        self.drew()

    def drew(self) -> None:
        """What shows was drawn again: counted where the fake is `drawing`."""
        if self.drawn is not None:
            self.drawn.bump()

    def _key(self, keysym: int, pressed: bool) -> None:
        name = _key_name(keysym)
        if name in _MODIFIERS.values():
            if pressed:
                self._held.append(name)
            elif name in self._held:
                self._held.remove(name)
            return
        if not pressed:
            return
        combo = "+".join([*self._held, name])
        self.strokes.append(combo)
        if combo in self._on_keys:
            self._on_keys[combo]()
        elif combo == "ctrl+a":
            if (target := self.focused()) is not None:
                target.selected_all = True
        elif not set(self._held) - {"shift"}:
            self._type(_TYPED.get(name, name if len(name) == 1 else ""), name)

    def _type(self, char: str, name: str) -> None:
        """A key that types `char` (or none: an arrow, a BackSpace), into the focused text."""
        target = self.focused()
        self.typed += char
        if target is None or "editable" not in target.states or not (char or name == "BackSpace"):
            return
        if target.selected_all:
            target.text, target.caret, target.selected_all = "", 0, False
        if name == "BackSpace" and target.caret > 0:
            target.text = target.text[: target.caret - 1] + target.text[target.caret :]
            target.caret -= 1
        elif char:
            target.text = target.text[: target.caret] + char + target.text[target.caret :]
            target.caret += len(char)


class FakeInput(Pointer, Keyboard, Closing):
    """The fake's pointer and keyboard: the shared ones, over the fake desktop."""

    key_delay = 0.0

    def __init__(self, desktop: FakeDesktop) -> None:
        self._desktop = desktop
        self._lock = threading.Lock()

    def close(self) -> None:
        pass

    def _screen_size(self) -> tuple[int, int]:
        return self._desktop.size

    def _motion(self, x: int, y: int) -> None:
        self._desktop.motion(x, y)

    def _button(self, button: Button, pressed: bool) -> None:
        if pressed:  # what a press does is done; a release is not recorded
            self._desktop.press(button)

    def _axis(self, axis: int, steps: int) -> None:
        self._desktop.wheel(axis, steps)

    def _key(self, keycode: int, pressed: bool) -> None:
        self._desktop.key(keycode, pressed)  # a key code here is its keysym

    def _text_chords(self, text: str) -> list[Chord]:
        return [Chord((), char_keysym(char)) for char in text]

    def _combo_chords(self, keys: str) -> list[Chord]:
        combos = [parse_combo(combo) for combo in keys.split()]
        if not combos:
            raise InputError("no keys given")
        return [
            Chord(tuple(int(XK.string_to_keysym(name)) for name in held), key_keysym(key))
            for held, key in combos
        ]


class FakeScreen(RegionScreen, Closing):
    """The fake desktop's pixels, painted afresh at every look."""

    def __init__(self, desktop: FakeDesktop) -> None:
        self._desktop = desktop
        self.size = desktop.size

    def close(self) -> None:
        pass

    def desktop(self) -> Image.Image:
        return self._desktop.render()

    def region(self, rect: Rect) -> Image.Image:
        clipped = clip(rect, self.size)
        return self.desktop().crop((clipped.left, clipped.top, clipped.right, clipped.bottom))

    def raw(self, rect: Rect | None = None) -> bytes:
        return (self.desktop() if rect is None else self.region(rect)).tobytes()


class FakeWindows(WindowList, Closing):
    """The fake desktop's windows (a display.base.Windows); each listing is counted."""

    def __init__(self, desktop: FakeDesktop) -> None:
        self._desktop = desktop

    def close(self) -> None:
        pass

    def list_windows(self) -> list[WindowInfo]:
        return self._desktop.list_windows()

    def viewable(self, xid: int) -> bool:
        return any(window.xid == xid for window in self._desktop.windows)

    def above(self, xid: int) -> list[Rect] | None:
        windows = self._desktop.windows
        found = [n for n, window in enumerate(windows) if window.xid == xid]
        if not self._desktop.stacking or not found:
            return None
        return [window.rect for window in windows[found[0] + 1 :]]

    async def activate(self, xid: int, timeout: float = 3.0) -> WindowInfo:
        self.get(xid)
        self._desktop.activate(xid)
        return await self._until_active(xid, timeout)

    async def close_window(self, xid: int, timeout: float = 3.0) -> bool:
        self.get(xid)
        window = self._desktop.window(xid)
        if window.on_close is None or window.on_close():
            self._desktop.close(xid)
        return await self._until_gone(xid, timeout)

    def content(self, window: WindowInfo) -> Rect:
        return window.rect


def _inside(rect: Rect, x: int, y: int) -> bool:
    return rect.left <= x < rect.right and rect.top <= y < rect.bottom


def _key_name(keysym: int) -> str:
    """How strokes write a key: "ctrl" for a modifier, the character a key types, else its
    X name ("Return", "F4")."""
    name = _NAMES.get(keysym)
    if name in _MODIFIERS:
        return _MODIFIERS[name]
    if 0x20 <= keysym <= 0x7E or 0xA0 <= keysym <= 0xFF:
        return chr(keysym)
    if keysym & 0xFF000000 == 0x01000000:
        return chr(keysym & 0xFFFFFF)
    return name or f"{keysym:#x}"


def _names(pairs: Sequence[tuple[str, object]]) -> dict[int, str]:
    names: dict[int, str] = {}
    for attribute, value in pairs:
        if attribute.startswith("XK_") and isinstance(value, int):
            names.setdefault(value, attribute[3:])
    return names


_NAMES = _names(list(vars(XK).items()))
