"""GNOME Shell's windows and screen, through what GNOME Shell tells other programs.

Mutter gives clients no window positions. GNOME Shell knows them, and tells another program
in one of two ways, the same JavaScript behind both (extension/core.js): `Eval`, in unsafe
mode only (`gnome-shell --unsafe-mode`, what roundhouse's virtual GNOME desktops run; a
person's GNOME 41+ refuses it), or roundhouse's own extension, which `roundhouse setup
gnome` installs in a person's session and which exports just these questions (no Eval) as
dev.roundhouse.Shell on the session bus. Each call is one round trip that returns JSON: the
windows with their frame and buffer rectangles, an activation, a close. Screenshots through
org.gnome.Shell.Screenshot (unsafe mode) go into a file of ours.

`raw()` (what settle compares) is not pixels: it is a count of the frames the stage has
painted, kept by a handler installed once. Mutter paints only what changed, so the count
stands still exactly when the screen does, and reading it costs a call (~1 ms) where a
screenshot costs ~100. `shell_paints` has another handler (through Eval) send a signal per
frame painted: what the settle waits on, as the frames are painted.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from importlib import resources
from pathlib import Path
from typing import Any, Protocol, TypeVar

from PIL import Image

from roundhouse.core.polling import within, within_async
from roundhouse.devices.contract import Rect, WindowInfo
from roundhouse.devices.linux.display.base import (
    WINDOW_POLL,
    RegionScreen,
    WindowList,
    box_rect,
    clip,
)
from roundhouse.devices.linux.display.changes import Changes
from roundhouse.devices.linux.display.wayland.dbus import DBusCallError, SyncBus
from roundhouse.devices.linux.display.wayland.toolkit import content_rect

log = logging.getLogger(__name__)
T = TypeVar("T")

SHELL = ("org.gnome.Shell", "/org/gnome/Shell", "org.gnome.Shell")
SCREENSHOT = ("org.gnome.Shell.Screenshot", "/org/gnome/Shell/Screenshot")
SCREENSHOT_INTERFACE = "org.gnome.Shell.Screenshot"
# roundhouse's extension (extension/core.js): its name, object and interface.
EXTENSION = ("dev.roundhouse.Shell", "/dev/roundhouse/Shell", "dev.roundhouse.Shell1")


def core_js() -> str:
    """The JavaScript the extension and Eval share (extension/core.js)."""
    return (resources.files(__package__) / "extension" / "core.js").read_text(encoding="utf-8")


# Each frame the stage paints, a D-Bus signal to whoever listens (see shell_paints). Left in
# place when we go: another client of the same Shell may be listening.
PAINTS = ("/org/roundhouse/Paints", "org.roundhouse.Paints", "Painted")
_PAINTS_JS = (
    "(() => { if (global.__roundhousePaints === undefined) { const Gio = imports.gi.Gio; "
    "global.__roundhousePaints = global.stage.connect('after-paint', () => "
    f"Gio.DBus.session.emit_signal(null, {', '.join(json.dumps(part) for part in PAINTS)}, "
    "null)); } return true; })()"
)


def with_shell_module(name: str, use: str) -> str:
    """A JavaScript expression for Eval that calls the function `use` with one of GNOME
    Shell's own modules ("status/keyboard") and gives what it returns. GNOME Shell 43 and
    44 load their modules as scripts (imports.ui), at once, and their Eval gives what the
    code gives; 45 and later load them as modules, by a dynamic import of the same file
    (the instance the Shell uses), and their Eval awaits a promise. Tried in that order:
    on 45 and later the script loader refuses a module's `import` lines, a SyntaxError
    before any of it runs."""
    path = name.replace("/", ".")
    url = json.dumps(f"resource:///org/gnome/shell/ui/{name}.js")
    return (
        f"((use) => {{ let module; try {{ module = imports.ui.{path}; }} catch (error) {{ "
        "if (!(error instanceof SyntaxError)) throw error; "
        f"return import({url}).then(use); }} return use(module); }})({use})"
    )


class ShellRefused(RuntimeError):
    """GNOME Shell refused: it is not in unsafe mode, and roundhouse's extension is not there."""


class ShellSilent(RuntimeError):
    """GNOME Shell did not answer by a deadline (the message says what it was asked)."""


class ShellAccess(Protocol):
    """What roundhouse asks GNOME Shell (extension/core.js), by whichever way it answers."""

    name: str  # the route, as doctor shows it

    def windows(self) -> list[dict[str, Any]]: ...

    def activate(self, window_id: str) -> bool: ...

    def close(self, window_id: str) -> bool: ...

    def frames(self) -> int: ...

    def prepare(self, timeout: float) -> bool:
        """Close the Overview and hold banners back (a virtual desktop's Shell); whether the
        Overview still shows. TimeoutError when the Shell does not answer within `timeout`."""
        ...

    def dialogs(self) -> list[str]:
        """The Shell's own modal dialogs that show (polkit's, a portal's, the session's),
        each by its first label ("Authentication Required")."""
        ...


class EvalShell:
    """core.js through Eval: GNOME Shell in unsafe mode."""

    name = "GNOME Shell Eval (unsafe mode)"

    def __init__(self, bus: SyncBus) -> None:
        self.bus = bus
        self._core = core_js()

    def _call(self, call: str, timeout: float | None = None) -> Any:
        # The object lives on between calls (global.__roundhouse): its frame counter does.
        script = (
            f"(() => {{ {self._core}\n"
            "const rh = (global.__roundhouse = global.__roundhouse || roundhouseShell(Main));\n"
            f"return rh.{call}; }})()"
        )
        try:
            ok, result = self.bus.call(*SHELL, "Eval", "s", [script], timeout=timeout)
        except DBusCallError as error:
            raise ShellRefused(f"GNOME Shell's Eval failed: {error}") from None
        if not ok:
            if not result:
                raise ShellRefused(
                    "GNOME Shell refuses Eval (it is not in unsafe mode), and roundhouse's "
                    "extension is not running, so window positions cannot be read here"
                )
            raise RuntimeError(f"GNOME Shell's script failed: {result}")
        return json.loads(result) if result else None

    def windows(self) -> list[dict[str, Any]]:
        return list(self._call("windows()") or [])

    def activate(self, window_id: str) -> bool:
        return bool(self._call(f"activate({json.dumps(window_id)})"))

    def close(self, window_id: str) -> bool:
        return bool(self._call(f"close({json.dumps(window_id)})"))

    def frames(self) -> int:
        return int(self._call("frames()"))

    def prepare(self, timeout: float) -> bool:
        return bool(self._call("prepare()", timeout))

    def dialogs(self) -> list[str]:
        return [str(title) for title in self._call("dialogs()") or []]


class ExtensionShell:
    """core.js through roundhouse's extension (dev.roundhouse.Shell on the session bus)."""

    name = "roundhouse's GNOME Shell extension (D-Bus)"

    def __init__(self, bus: SyncBus) -> None:
        self.bus = bus

    def _call(
        self, member: str, signature: str = "", *args: object, timeout: float | None = None
    ) -> list[Any]:
        try:
            return self.bus.call(*EXTENSION, member, signature, list(args), timeout=timeout)
        except DBusCallError as error:
            raise ShellRefused(f"roundhouse's GNOME Shell extension failed: {error}") from None

    def windows(self) -> list[dict[str, Any]]:
        (text,) = self._call("Windows")
        return list(json.loads(text))

    def activate(self, window_id: str) -> bool:
        return bool(self._call("Activate", "s", window_id)[0])

    def close(self, window_id: str) -> bool:
        return bool(self._call("Close", "s", window_id)[0])

    def frames(self) -> int:
        return int(self._call("Frames")[0])

    def prepare(self, timeout: float) -> bool:
        return bool(self._call("Prepare", timeout=timeout)[0])

    def dialogs(self) -> list[str]:
        (text,) = self._call("Dialogs")
        return [str(title) for title in json.loads(text)]


def shell_access(bus: SyncBus) -> ShellAccess:
    """roundhouse's extension where it runs, else Eval (refused outside unsafe mode: the
    first call says so)."""
    return ExtensionShell(bus) if bus.has_name(EXTENSION[0]) else EvalShell(bus)


class ShellWindows(WindowList):
    """The windows as GNOME Shell knows them (a display.base.Windows)."""

    def __init__(self, shell: ShellAccess, on_activated: Callable[[], None] | None = None) -> None:
        """`on_activated` runs once a window is active (the input hands it the keyboard)."""
        self._shell = shell
        self._lock = threading.Lock()
        self.on_activated = on_activated

    def close(self) -> None:
        pass  # the bus is the server's, closed with it

    def _rows(self) -> list[dict[str, Any]]:
        with self._lock:
            return self._shell.windows()

    def list_windows(self) -> list[WindowInfo]:
        return [_info(row) for row in self._rows()]

    def viewable(self, xid: int) -> bool:
        return any(int(row["id"]) == xid and row["shown"] for row in self._rows())

    async def activate(self, xid: int, timeout: float = 3.0) -> WindowInfo:
        self.get(xid)
        await within_async(lambda: self.viewable(xid), timeout, every=WINDOW_POLL)
        with self._lock:
            self._shell.activate(str(xid))
        window = await self._until_active(xid, timeout)
        if self.on_activated is not None:
            await asyncio.to_thread(self.on_activated)
        return window

    async def close_window(self, xid: int, timeout: float = 3.0) -> bool:
        self.get(xid)
        with self._lock:
            self._shell.close(str(xid))
        return await self._until_gone(xid, timeout)

    def content(self, window: WindowInfo) -> Rect:
        """The frame (the window without its shadow); for GTK 3, which places its objects
        relative to its whole surface, the buffer (shadow included)."""
        row = next((row for row in self._rows() if int(row["id"]) == window.xid), None)
        if row is None:
            return window.rect
        return content_rect(
            row.get("pid"), frame=box_rect(*row["frame"]), buffer=box_rect(*row["buffer"])
        )


def _info(row: Mapping[str, Any]) -> WindowInfo:
    return WindowInfo(
        xid=int(row["id"]),
        title=row["title"],
        application=row["wm_class"],
        pid=row["pid"] if row.get("pid", -1) > 0 else None,
        rect=box_rect(*row["frame"]),
        active=bool(row["focus"]),
    )


class ShellScreen(RegionScreen):
    """The screen through org.gnome.Shell.Screenshot (a display.base.Screen)."""

    def __init__(
        self, shell: ShellAccess, bus: SyncBus, size: tuple[int, int], runtime_dir: str
    ) -> None:
        self._shell = shell
        self._bus = bus
        self.size = size
        self._lock = threading.Lock()
        base = runtime_dir if os.path.isdir(runtime_dir) else None
        self._folder = tempfile.mkdtemp(prefix="roundhouse-shots-", dir=base)

    def close(self) -> None:
        shutil.rmtree(self._folder, ignore_errors=True)

    def desktop(self) -> Image.Image:
        return self._shoot("Screenshot", "bbs", [False, False])

    def region(self, rect: Rect) -> Image.Image:
        clipped = clip(rect, self.size)
        box = [clipped.left, clipped.top, clipped.width, clipped.height]
        return self._shoot("ScreenshotArea", "iiiibs", [*box, False])

    def raw(self, rect: Rect | None = None) -> bytes:
        """How many frames the stage has painted (see the module docstring): the same
        while nothing on screen changes. `rect` is not narrowed to: any paint counts."""
        with self._lock:
            return str(self._shell.frames()).encode()

    def _shoot(self, member: str, signature: str, args: list[Any]) -> Image.Image:
        with self._lock:
            path = Path(self._folder) / "shot.png"
            try:
                ok, _used = self._bus.call(
                    *SCREENSHOT, SCREENSHOT_INTERFACE, member, signature, [*args, str(path)]
                )
            except DBusCallError as error:
                if "AccessDenied" in error.name:
                    raise ShellRefused(
                        "GNOME Shell refuses screenshots to other programs (it is not in unsafe "
                        "mode): use the desktop portal's Screenshot"
                    ) from None
                raise
            if not ok:
                raise RuntimeError(f"GNOME Shell could not take the screenshot ({member})")
            with Image.open(path) as shot:
                image = shot.convert("RGB")
            path.unlink(missing_ok=True)
        return image


def shell_paints(shell: EvalShell) -> Changes | None:
    """The frames GNOME Shell's stage paints, as they are painted: a signal each, from a
    handler installed through Eval; None where the Shell refuses it. Mutter paints only what
    changed, and at once, where its screen cast's frames reach us 50-90 ms later (a GStreamer
    pipeline converts each): what the settle waits on and the kept reads ask."""
    painted = Changes("GNOME Shell's stage")
    path, interface, member = PAINTS
    try:
        shell.bus.on_signal(interface, member, path, lambda _body: painted.bump())
        ok, result = shell.bus.call(*SHELL, "Eval", "s", [_PAINTS_JS])
    except (DBusCallError, TimeoutError) as error:
        log.info("GNOME Shell reports no paints (%s): the screen cast's frames tell", error)
        return None
    if not ok:
        log.info("GNOME Shell reports no paints (%s): the screen cast's frames tell", result)
        return None
    return painted


def prepare_shell(
    shell: ShellAccess, deadline: float, unstick: Callable[[], None] = lambda: None
) -> None:
    """A virtual GNOME desktop's Shell: out of the Overview it starts in (windows take clicks
    and keys), and with notification banners held back; ShellSilent when the Shell has not
    answered by `deadline` (time.monotonic()). `unstick`: see `answered`."""
    what = f"closing the Overview, through {shell.name},"

    def closed() -> bool:
        return not answered(shell.prepare, deadline, what, unstick)

    if not within(closed, deadline - time.monotonic(), every=0.05):
        log.warning("GNOME Shell's Overview still shows at the deadline (%s)", shell.name)


def answered(
    ask: Callable[[float], T],
    deadline: float,
    what: str,
    unstick: Callable[[], None] = lambda: None,
) -> T:
    """`ask(timeout)`'s answer, asked again while the deadline lasts should GNOME Shell not
    answer within ATTEMPT seconds; ShellSilent, saying `what` went unanswered, once it has
    passed. The Shell answers on the thread it composites with, after whatever that thread
    is busy with, so an unanswered call may be answered late (and is then dropped): only
    questions that may be asked twice are asked here. `unstick` runs after each attempt
    left unanswered, before the next (GnomeShell.ready frees a Shell held by its own fork)."""
    started = time.monotonic()
    attempts = 0
    while True:
        attempts += 1
        try:  # a question asked at the deadline still gets ATTEMPT_LEAST seconds
            return ask(max(min(ATTEMPT, deadline - time.monotonic()), ATTEMPT_LEAST))
        except TimeoutError:
            log.info("GNOME Shell has not answered %s (attempt %d)", what, attempts)
            unstick()
        if time.monotonic() >= deadline:
            raise ShellSilent(
                f"GNOME Shell did not answer {what} in {time.monotonic() - started:.0f} s "
                f"(asked {attempts} time{'s' if attempts > 1 else ''}): its main loop is "
                "held up"
            )


ATTEMPT = 10.0  # seconds an attempt waits for GNOME Shell before it asks again
ATTEMPT_LEAST = 1.0  # seconds an attempt waits at the least
