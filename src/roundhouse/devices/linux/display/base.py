"""The display server, as the desktop tools use it: one seam, an implementation per server.

A display server gives the tools three things: input (pointer and keyboard), the screen's
pixels, and its windows (listed with their screen rectangles, activated, closed, and where
each one's content sits). X11 is one implementation (display/x11); each Wayland compositor
family is another. The tools, the accessibility reader and the launcher know only this.

Every call is synchronous and bounded: the tools run them in a thread, and an
implementation that talks to another process gives each call a timeout.
"""

from __future__ import annotations

import contextlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol, Self

from PIL import Image

from roundhouse.core.polling import within_async
from roundhouse.devices.contract import Rect, WindowInfo
from roundhouse.devices.linux.display.changes import Changes

Button = Literal["left", "middle", "right"]


class Closable(Protocol):
    def close(self) -> None: ...


class Closing(ABC):
    """A part that holds a connection, or a process, until close(); `with` closes it too.
    The backends' parts, the display server and the launcher inherit this, so that none
    writes its own __enter__ and __exit__."""

    @abstractmethod
    def close(self) -> None: ...

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


class Input(Protocol):
    """Pointer and keyboard. Coordinates are screen pixels. Every backend builds it from
    pointer.Pointer and keyboard.Keyboard: a point off the screen is refused there."""

    def move(self, x: int, y: int) -> None: ...

    def click(self, x: int, y: int, button: Button = "left", count: int = 1) -> None: ...

    def scroll(self, x: int, y: int, dx: int = 0, dy: int = 0) -> None: ...

    def drag(
        self, start: tuple[int, int], end: tuple[int, int], button: Button = "left"
    ) -> None: ...

    def type_text(self, text: str) -> None:
        """Type any Unicode text; "\\n" is Enter."""

    def press_keys(self, keys: str) -> None:
        """Press combinations ("ctrl+s"), several separated by spaces, in turn."""

    def button_down(self, button: Button = "left") -> None:
        """Press a button where the pointer is, and keep it down."""

    def button_up(self, button: Button = "left") -> None: ...

    def position(self) -> tuple[int, int] | None:
        """Where the pointer is (None: not known, before it was ever moved)."""

    def keys_down(self, keys: str) -> None:
        """Press one combination ("shift") and keep it down."""

    def keys_up(self, keys: str) -> None: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class Monitor:
    """One monitor: where it is on the desktop, in the desktop's pixels (what the windows,
    the pointer and the accessibility tree speak: a compositor's logical pixels), and how
    many of its own pixels make one of those (1.5 on a monitor scaled by 150%)."""

    number: int  # 1, 2, ...: left to right, as a person counts them
    name: str  # as the display server names it: "HEADLESS-2", "RH-2"
    rect: Rect
    scale: float = 1.0

    @property
    def pixels(self) -> tuple[int, int]:
        """Its own size in pixels: what a screenshot of it holds."""
        return round(self.rect.width * self.scale), round(self.rect.height * self.scale)

    def as_json(self) -> dict[str, object]:
        width, height = self.pixels
        return {
            "number": self.number,
            "name": self.name,
            "rect": self.rect.as_list(),
            "scale": self.scale,
            "width": width,
            "height": height,
        }


def numbered(found: Sequence[tuple[str, Rect, float]]) -> list[Monitor]:
    """Monitors numbered left to right, then top to bottom, from (name, rect, scale)."""
    ordered = sorted(found, key=lambda item: (item[1].left, item[1].top))
    return [Monitor(n, name, rect, scale) for n, (name, rect, scale) in enumerate(ordered, 1)]


class MonitorError(ValueError):
    """A monitor number the desktop does not have; the message names those it has."""


class Screen(Protocol):
    """The screen's pixels: the whole desktop's, in its own (logical) pixels, and each
    monitor's in the monitor's own."""

    @property
    def size(self) -> tuple[int, int]: ...

    def monitors(self) -> list[Monitor]: ...

    def monitor(self, number: int) -> tuple[Image.Image, Monitor]:
        """The monitor's own pixels (MonitorError for a number it does not have)."""

    def desktop(self) -> Image.Image: ...

    def region(self, rect: Rect) -> Image.Image: ...

    def raw(self, rect: Rect | None = None) -> bytes:
        """The screen's (or a region's) pixels as bytes, cheap, to compare with later ones."""

    def window(self, window: WindowInfo) -> tuple[Image.Image, str]:
        """The window's pixels and how they were taken ("composite": its own content even
        when covered; "region": what the screen shows where it is)."""

    def close(self) -> None: ...


class RegionScreen(ABC):
    """What a display server's Screen derives alike: a window is the region of the screen it
    covers. A compositor keeps each window's pixels to itself (screencopy, a screen cast and
    GNOME Shell's screenshots copy outputs); a backend that can read a window's own pixels
    (X11's XComposite, KWin) says so in its own window(). One monitor covers the screen,
    where a backend does not list its monitors (X11's RandR, wlroots' outputs)."""

    size: tuple[int, int]

    @abstractmethod
    def region(self, rect: Rect) -> Image.Image: ...

    def monitors(self) -> list[Monitor]:
        width, height = self.size
        return [Monitor(1, "screen", Rect(0, 0, width, height))]

    def monitor(self, number: int) -> tuple[Image.Image, Monitor]:
        """The monitor's region, in its own pixels where it is scaled."""
        found = self._monitor(number)
        image = self.region(found.rect)
        if image.size != found.pixels:
            image = image.resize(found.pixels, Image.Resampling.LANCZOS)
        return image, found

    def _monitor(self, number: int) -> Monitor:
        monitors = self.monitors()
        for monitor in monitors:
            if monitor.number == number:
                return monitor
        listed = ", ".join(f"{m.number} ({m.name})" for m in monitors)
        raise MonitorError(f"no monitor {number}: this desktop has {listed}")

    def window(self, window: WindowInfo) -> tuple[Image.Image, str]:
        return self.region(window.rect), "region"


class WindowList:
    """What a display server's Windows derives from its list alike on every server: the
    active window, and a window by its id. A backend gives list_windows."""

    def list_windows(self) -> list[WindowInfo]:
        raise NotImplementedError

    def active_window(self) -> WindowInfo | None:
        return next((window for window in self.list_windows() if window.active), None)

    def above(self, xid: int) -> list[Rect] | None:
        """What lies over the window, where the session says: None where it does not."""
        return None

    def get(self, xid: int) -> WindowInfo:
        """The window with this id; WindowError naming the windows there are."""
        windows = self.list_windows()
        for window in windows:
            if window.xid == xid:
                return window
        raise WindowError(f"no window with id {xid}; windows: {describe(windows)}")

    async def _until_active(self, xid: int, timeout: float) -> WindowInfo:
        """The window once the server reports it active, after an activation was asked;
        WindowError when it is not within `timeout`."""
        await within_async(lambda: self.get(xid).active, timeout, every=WINDOW_POLL)
        window = self.get(xid)
        if not window.active:
            raise WindowError(f"window {xid} did not become active within {timeout:g} s")
        return window

    async def _until_gone(self, xid: int, timeout: float) -> bool:
        """Whether the window is gone from the list within `timeout`, after a close was asked
        (it stays when the application asks something first)."""
        await within_async(
            lambda: all(w.xid != xid for w in self.list_windows()), timeout, every=WINDOW_POLL
        )
        return all(w.xid != xid for w in self.list_windows())


class Windows(Protocol):
    """The top-level windows, as the window manager (or compositor) knows them."""

    def list_windows(self) -> list[WindowInfo]: ...

    def active_window(self) -> WindowInfo | None: ...

    def get(self, xid: int) -> WindowInfo:
        """The window with this id; WindowError naming the windows there are."""

    def viewable(self, xid: int) -> bool:
        """Whether the window is mapped and on screen, so it can be seen and focused."""

    def above(self, xid: int) -> list[Rect] | None:
        """The rectangles of what is shown over the window (other windows, menus, tooltips)
        in the session's stacking order; None where the session gives no such order."""

    async def activate(self, xid: int, timeout: float = 3.0) -> WindowInfo: ...

    async def close_window(self, xid: int, timeout: float = 3.0) -> bool:
        """True once it is gone; False when it asked something first (unsaved changes)."""

    def content(self, window: WindowInfo) -> Rect:
        """Where the window's content is on screen: the rectangle whose top-left corner is
        (0, 0) for a toolkit that places its accessible objects relative to its window
        (GTK 4, and every toolkit on Wayland). Shadows and borders drawn by the client
        are not part of it, where the server knows of them; a frame reported smaller is
        taken to sit centred in it (atspi/placement.py, the one user of this method)."""

    def close(self) -> None: ...


class PersonWatch(Protocol):
    """The person at the desktop, as the display server lets a program see them: input that
    roundhouse did not send, and a screen that takes no input from us (locked). Each
    backend says how (`route`); one that cannot tell answers None."""

    route: str  # how, for doctor: "XInput2 raw events", "none"

    def ours(self) -> None:
        """Our input has all been sent: whatever arrives from now on is someone else's."""

    def foreign(self) -> str | None:
        """What input not ours arrived since `ours` ("the pointer moved"), or None."""

    def blocked(self) -> str | None:
        """Why nothing may be typed now ("the screen is locked"), or None."""

    def close(self) -> None: ...


class NoWatch:
    """A session that shows no other input, nor a lock, to a program (a PersonWatch)."""

    route = "none: this session shows a program no input but its own"

    def ours(self) -> None:
        pass

    def foreign(self) -> str | None:
        return None

    def blocked(self) -> str | None:
        return None

    def close(self) -> None:
        pass


@dataclass
class DisplayServer(Closing):
    """One desktop's display server: what the tools act and look through."""

    kind: str  # "x11", "sway", "gnome", "kde"
    input: Input
    screen: Screen
    windows: Windows
    # What its calls raise once the server is gone (an X connection closed): the tools
    # turn them into DeviceLost.
    lost: tuple[type[BaseException], ...] = ()
    # Connections the parts share (a D-Bus connection), closed after them.
    shared: tuple[Closable, ...] = ()
    # How input and screenshots reach it, for `roundhouse doctor` ("XTest", ...).
    routes: dict[str, str] = field(default_factory=dict)
    # What the session refuses that the display works without (a person's GNOME without
    # roundhouse's extension: window positions), each with its fix, for doctor.
    missing: tuple[RouteRefused, ...] = ()
    # What an application launched now gets in its environment to be given the focus (an
    # xdg-activation token), where the session needs it.
    startup: Callable[[], dict[str, str]] | None = None
    # Input that is not ours, and a locked screen, where the session shows them.
    watch: PersonWatch = field(default_factory=NoWatch)
    # What it draws, as it draws it (X11's damage, a compositor's frames): what the settle
    # waits on and the kept reads ask; None where it tells nothing (pixels are compared).
    drawn: Changes | None = None

    def close(self) -> None:
        """Close every connection; one to a server that is gone cannot fail to close."""
        parts: list[Closable] = [self.input, self.screen, self.windows, self.watch, *self.shared]
        for part in parts:
            with contextlib.suppress(OSError, *self.lost):
                part.close()


class DisplayUnavailable(RuntimeError):
    """The desktop's display server cannot be driven: the message says why, and the fix."""


class RouteRefused(DisplayUnavailable):
    """A route the session refuses or lacks: the message says why, `fix` the one step that
    grants it (the route's record says it where the part that refused does not know), and
    `capability` which ("input", "screenshots", "windows") where it is one of them."""

    def __init__(self, message: str, fix: str = "", capability: str = "") -> None:
        super().__init__(message)
        self.fix = fix
        self.capability = capability


class PositionsUnknown(RouteRefused):
    """The session does not say where its windows are (a person's GNOME before `roundhouse
    setup gnome`): what needs a position cannot be done, and `fix` says what adds it."""

    def __init__(self, message: str, fix: str = "") -> None:
        super().__init__(message, fix, "windows")


WINDOW_POLL = 0.01  # seconds between two looks at the window list, when waiting on it


class WindowError(RuntimeError):
    """A window or application problem the model (or user) can act on; the text says what."""


def clip(rect: Rect, size: tuple[int, int]) -> Rect:
    """The part of `rect` on a screen of `size`; ValueError when none of it is."""
    width, height = size
    clipped = Rect(
        left=max(rect.left, 0),
        top=max(rect.top, 0),
        right=min(rect.right, width),
        bottom=min(rect.bottom, height),
    )
    if clipped.width <= 0 or clipped.height <= 0:
        raise ValueError(f"rectangle {rect.as_list()} is outside the {width}x{height} screen")
    return clipped


def box_rect(x: float, y: float, width: float, height: float) -> Rect:
    """The rectangle of a box as the compositors give one, (x, y, width, height), in whole
    pixels (KWin's are floats)."""
    left, top = round(x), round(y)
    return Rect(left=left, top=top, right=left + round(width), bottom=top + round(height))


def find_window(windows: Sequence[WindowInfo], title: str) -> WindowInfo:
    """Exact title first, then a case-insensitive substring of the title or application."""
    for window in windows:
        if window.title == title:
            return window
    needle = title.lower()
    for window in windows:
        if needle in window.title.lower() or needle == window.application.lower():
            return window
    raise WindowError(f"no window titled {title!r}; windows: {describe(windows)}")


def describe(windows: Sequence[WindowInfo]) -> str:
    """The windows in one line, for an error message: "12 'Untitled' (gedit); ..."."""
    listed = [f"{w.xid} {w.title!r} ({w.application})" for w in windows]
    return "; ".join(listed) or "none"


class RefusedInput(Closing):
    """The input of a session that refuses it to this program (a person's KWin before
    `roundhouse setup kde`): every call is refused at once, with why and the fix, while the
    rest of the display (the windows, the tree) works."""

    def __init__(self, refusal: RouteRefused) -> None:
        self.refusal = refusal

    def _refuse(self) -> None:
        raise RouteRefused(str(self.refusal), self.refusal.fix, "input")

    def move(self, x: int, y: int) -> None:
        self._refuse()

    def click(self, x: int, y: int, button: Button = "left", count: int = 1) -> None:
        self._refuse()

    def scroll(self, x: int, y: int, dx: int = 0, dy: int = 0) -> None:
        self._refuse()

    def drag(self, start: tuple[int, int], end: tuple[int, int], button: Button = "left") -> None:
        self._refuse()

    def type_text(self, text: str) -> None:
        self._refuse()

    def press_keys(self, keys: str) -> None:
        self._refuse()

    def button_down(self, button: Button = "left") -> None:
        self._refuse()

    def button_up(self, button: Button = "left") -> None:
        self._refuse()

    def position(self) -> tuple[int, int] | None:
        self._refuse()
        return None

    def keys_down(self, keys: str) -> None:
        self._refuse()

    def keys_up(self, keys: str) -> None:
        self._refuse()

    def close(self) -> None:
        pass
