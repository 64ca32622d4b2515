"""KWin's windows and screen, over the session bus.

Windows: a KWin script per question (org.kde.kwin.Scripting: load, run, unload; ~3 ms),
which lists the windows with their frame and buffer rectangles, activates or closes one,
and hands its answer back by calling a method we serve on our own connection
(`callDBus` is how a KWin script talks to the world). The same script runs on Plasma 5.27
and 6 (their scripting APIs name windows differently: clientList/windowList).

Screen: org.kde.KWin.ScreenShot2 writes raw pixels into a pipe of ours (no PNG), and can
take one window's own pixels even where another covers it. A person's Plasma answers
only programs whose desktop file lists the interface in X-KDE-DBUS-Restricted-Interfaces;
our virtual KDE desktops run KWin with KWIN_SCREENSHOT_NO_PERMISSION_CHECKS.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import tempfile
import threading
import time
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

from dbus_fast import Variant
from dbus_fast.annotations import DBusSignature, DBusStr
from dbus_fast.service import ServiceInterface, method
from PIL import Image

from roundhouse.core.polling import within_async
from roundhouse.devices.contract import Rect, WindowInfo
from roundhouse.devices.linux.display.base import (
    WINDOW_POLL,
    Monitor,
    RegionScreen,
    RouteRefused,
    WindowList,
    box_rect,
    clip,
)
from roundhouse.devices.linux.display.changes import Changes
from roundhouse.devices.linux.display.kde.outputs import read_monitors
from roundhouse.devices.linux.display.wayland.dbus import BusGone, DBusCallError, SyncBus
from roundhouse.devices.linux.display.wayland.toolkit import content_rect

KWIN = "org.kde.KWin"
SCRIPTING = ("/Scripting", "org.kde.kwin.Scripting")
SCRIPT_INTERFACE = "org.kde.kwin.Script"
SCREENSHOT = ("/org/kde/KWin/ScreenShot2", "org.kde.KWin.ScreenShot2")
SINK_PATH = "/org/roundhouse/KWinSink"
SINK_INTERFACE = "org.roundhouse.KWinSink"
# KWin 6 serves screenshots (ScreenShot2, screen casts) only from its OpenGL compositor,
# which needs a GPU's render node; without one (a headless machine, Debian 13's KWin 6.3
# here) it composites with QPainter and serves none. No permission would help.
NO_GPU_FIX = (
    "give KWin a GPU render node (/dev/dri/renderD*), or use a session that serves "
    "screenshots without one: --session sway or --session gnome"
)
# What a person runs once for KWin to trust roundhouse with fake input and ScreenShot2.
SETUP_FIX = "roundhouse setup kde (once; no log-out)"
# QImage formats KWin sends: RGB32, ARGB32 and its premultiplied form are 0xAARRGGBB words.
RAW_MODES = {4: "BGRX", 5: "BGRX", 6: "BGRX"}  # alpha dropped: the screen is opaque

_PRELUDE = """
const windows = (workspace.windowList ? workspace.windowList() : workspace.clientList())
  .filter(w => (w.normalWindow || w.dialog) && !w.deleted);
const find = id => windows.find(w => String(w.internalId) === id);
const row = w => {
  const f = w.frameGeometry, b = w.bufferGeometry;
  return {id: String(w.internalId), title: w.caption || '', cls: w.resourceClass || '',
          pid: w.pid, frame: [f.x, f.y, f.width, f.height], buffer: [b.x, b.y, b.width, b.height],
          active: w.active, shown: !w.minimized && w.width > 0};
};
const answer = value => callDBus(%(service)s, %(path)s, %(interface)s, 'Put', %(token)s,
                                 JSON.stringify(value === undefined ? null : value));
"""
_LIST = "answer(windows.map(row));"
_ACTIVATE = """
const w = find(%(id)s);
if (w) { if (workspace.activeWindow !== undefined) workspace.activeWindow = w;
         else workspace.activeClient = w; }
answer(!!w);
"""
_CLOSE = "const w = find(%(id)s); if (w) w.closeWindow(); answer(!!w);"
_MOVE = """
const w = find(%(id)s), to = JSON.parse(%(rect)s);
if (w) w.frameGeometry = {x: to[0], y: to[1], width: to[2], height: to[3]};
answer(w ? row(w) : null);
"""


class KWinRefused(RuntimeError):
    """KWin refused a request (scripting off, or a screenshot a person's Plasma forbids)."""


# A method that answers nothing: dbus-fast reads the return annotation as a signature.
Nothing = Annotated[None, DBusSignature("")]


class _Sink(ServiceInterface):
    """Where KWin scripts put their answers (called on the bus's loop thread), and where the
    damage script (kde/damage.py) says what KWin drew."""

    def __init__(self) -> None:
        super().__init__(SINK_INTERFACE)
        self.answers: dict[str, str] = {}
        self.arrived = threading.Condition()
        self.drawn = Changes("KWin's windows")

    @method()
    def Put(self, token: DBusStr, text: DBusStr) -> Nothing:  # noqa: N802 (a D-Bus name)
        with self.arrived:
            self.answers[token] = text
            self.arrived.notify_all()

    @method()
    def Drawn(self, box: DBusStr) -> Nothing:  # noqa: N802 (a D-Bus name)
        """A window was damaged: its frame, as JSON [x, y, width, height]."""
        try:
            x, y, width, height = (float(value) for value in json.loads(box))
        except (ValueError, TypeError):
            self.drawn.bump()
            return
        self.drawn.bump(box_rect(x, y, width, height))


class KWinScripts:
    """Runs one KWin script at a time and waits for its answer."""

    def __init__(self, bus: SyncBus) -> None:
        self.bus = bus
        self.timeout = bus.timeout
        self._sink = _Sink()
        bus.export(SINK_PATH, self._sink)
        self._folder = tempfile.mkdtemp(prefix="roundhouse-kwin-")
        self._lock = threading.Lock()

    def close(self) -> None:
        shutil.rmtree(self._folder, ignore_errors=True)

    @property
    def drawn(self) -> Changes:
        """What KWin drew, as the damage script (`keep`) reports it."""
        return self._sink.drawn

    def run(self, body: str, **values: str) -> Any:
        token = uuid.uuid4().hex
        with self._lock:
            plugin, path = self._load(body, token, values)
            try:
                return self._answer(token)
            finally:
                path.unlink(missing_ok=True)
                self.unload(plugin)

    def keep(self, body: str) -> str:
        """Load and run a script that stays (it answers nothing): its plugin name, for
        `unload`."""
        with self._lock:
            plugin, path = self._load(body, uuid.uuid4().hex, {})
            path.unlink(missing_ok=True)
            return plugin

    def unload(self, plugin: str) -> None:
        try:
            self.bus.call(KWIN, *SCRIPTING, "unloadScript", "s", [plugin])
        except (DBusCallError, BusGone):
            pass  # it unloaded itself, or KWin is gone (the next call says so)

    def _load(self, body: str, token: str, values: Mapping[str, str]) -> tuple[str, Path]:
        names = {
            "service": self.bus.unique_name,
            "path": SINK_PATH,
            "interface": SINK_INTERFACE,
            "token": token,
        }
        quoted = {key: json.dumps(value) for key, value in {**names, **values}.items()}
        script = (_PRELUDE + body) % quoted
        path = Path(self._folder) / f"{token}.js"
        path.write_text(script)
        plugin = f"roundhouse-{token}"
        try:
            (number,) = self.bus.call(KWIN, *SCRIPTING, "loadScript", "ss", [str(path), plugin])
            if number < 0:
                raise KWinRefused("KWin did not load the script (is scripting disabled?)")
            self._start(int(number))
        except BaseException:
            path.unlink(missing_ok=True)
            self.unload(plugin)
            raise
        return plugin, path

    def _start(self, number: int) -> None:
        # Plasma 6 serves a loaded script at /Scripting/ScriptN, Plasma 5 at /N.
        for path in (f"/Scripting/Script{number}", f"/{number}"):
            try:
                self.bus.call(KWIN, path, SCRIPT_INTERFACE, "run")
                return
            except DBusCallError as error:
                if "UnknownObject" not in error.name:
                    raise
        raise KWinRefused(f"KWin loaded script {number} but serves no object to run it")

    def _answer(self, token: str) -> Any:
        deadline = time.monotonic() + self.timeout
        with self._sink.arrived:
            while token not in self._sink.answers:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError(f"KWin's script did not answer within {self.timeout:g} s")
                self._sink.arrived.wait(remaining)
            return json.loads(self._sink.answers.pop(token))


class KWinWindows(WindowList):
    """The windows as KWin knows them (a display.base.Windows). KWin names a window by a
    UUID; its `xid` here is the UUID's first 48 bits (a number JSON keeps exact)."""

    def __init__(self, scripts: KWinScripts) -> None:
        self._scripts = scripts
        self._uuids: dict[int, str] = {}

    def close(self) -> None:
        self._scripts.close()

    def _rows(self) -> list[dict[str, Any]]:
        rows = list(self._scripts.run(_LIST) or [])
        for row in rows:
            self._uuids[_number(row["id"])] = row["id"]
        return rows

    def list_windows(self) -> list[WindowInfo]:
        return [_info(row) for row in self._rows()]

    def uuid(self, xid: int) -> str:
        if xid not in self._uuids:
            self.get(xid)
        return self._uuids[xid]

    def viewable(self, xid: int) -> bool:
        return any(_number(row["id"]) == xid and row["shown"] for row in self._rows())

    async def activate(self, xid: int, timeout: float = 3.0) -> WindowInfo:
        window_id = self.uuid(xid)
        await within_async(lambda: self.viewable(xid), timeout, every=WINDOW_POLL)
        self._scripts.run(_ACTIVATE, id=window_id)
        return await self._until_active(xid, timeout)

    async def close_window(self, xid: int, timeout: float = 3.0) -> bool:
        self._scripts.run(_CLOSE, id=self.uuid(xid))
        return await self._until_gone(xid, timeout)

    def move(self, xid: int, rect: Rect) -> None:
        """Put the window's frame at `rect` (on another monitor, say), as a person drags
        and sizes it."""
        box = json.dumps([rect.left, rect.top, rect.width, rect.height])
        self._scripts.run(_MOVE, id=self.uuid(xid), rect=box)

    def content(self, window: WindowInfo) -> Rect:
        """The frame; for GTK 3, which places its objects relative to its whole surface,
        the buffer (the shadow it draws included)."""
        row = next((row for row in self._rows() if _number(row["id"]) == window.xid), None)
        if row is None:
            return window.rect
        return content_rect(
            row.get("pid"), frame=box_rect(*row["frame"]), buffer=box_rect(*row["buffer"])
        )


def _number(window_id: str) -> int:
    return int(window_id.strip("{}").replace("-", "")[:12], 16)


def _info(row: Mapping[str, Any]) -> WindowInfo:
    pid = row.get("pid")
    return WindowInfo(
        xid=_number(row["id"]),
        title=row["title"],
        application=row["cls"],
        pid=pid if isinstance(pid, int) and pid > 0 else None,
        rect=box_rect(*row["frame"]),
        active=bool(row["active"]),
    )


class KWinScreen(RegionScreen):
    """The screen through KWin's ScreenShot2 (a display.base.Screen). The desktop, its
    regions and a window come in the desktop's logical pixels (KWin shrinks what lies on a
    scaled output); a monitor in its own."""

    def __init__(self, bus: SyncBus, windows: KWinWindows, env: Mapping[str, str]) -> None:
        self._bus = bus
        self._windows = windows
        self._env = dict(env)
        monitors = self.monitors()
        self.size = (max(m.rect.right for m in monitors), max(m.rect.bottom for m in monitors))
        self._lock = threading.Lock()

    def close(self) -> None:
        pass  # the bus is the server's

    def monitors(self) -> list[Monitor]:
        """KWin's outputs (asked each time, as a person may plug one in)."""
        return read_monitors(self._env)

    def monitor(self, number: int) -> tuple[Image.Image, Monitor]:
        """The output's own pixels."""
        found = self._monitor(number)
        return self._capture("CaptureScreen", "sa{sv}h", [found.name], native=True), found

    def desktop(self) -> Image.Image:
        return self._capture("CaptureWorkspace", "a{sv}h", [])

    def region(self, rect: Rect) -> Image.Image:
        clipped = clip(rect, self.size)
        box = [clipped.left, clipped.top, clipped.width, clipped.height]
        return self._capture("CaptureArea", "iiuua{sv}h", box)

    def raw(self, rect: Rect | None = None) -> bytes:
        return (self.desktop() if rect is None else self.region(rect)).tobytes()

    def window(self, window: WindowInfo) -> tuple[Image.Image, str]:
        """The window's own pixels (KWin draws them even where another window covers it),
        frame included."""
        image = self._capture("CaptureWindow", "sa{sv}h", [self._windows.uuid(window.xid)])
        return image, "composite"

    def _capture(
        self, member: str, signature: str, args: list[Any], native: bool = False
    ) -> Image.Image:
        # Not `native`: in logical pixels (a region across a 1.5 output comes 1.5 times its
        # size in its pixels otherwise, the whole desktop included).
        options = {
            "include-cursor": Variant("b", False),
            "native-resolution": Variant("b", native),
        }
        if member == "CaptureWindow":
            options["include-decoration"] = Variant("b", True)
        read_end, write_end = os.pipe()
        chunks: list[bytes] = []
        deadline = time.monotonic() + self._bus.timeout
        reader = threading.Thread(target=_drain, args=(read_end, chunks, deadline), daemon=True)
        reader.start()
        try:
            with self._lock:
                try:
                    (results,) = self._bus.call(
                        KWIN, *SCREENSHOT, member, signature, [*args, options, 0],
                        unix_fds=[write_end],
                    )  # fmt: skip
                except DBusCallError as error:
                    if "ServiceUnknown" in error.name or "UnknownObject" in error.name:
                        raise RouteRefused(
                            "KWin offers no ScreenShot2: it serves screenshots only with its "
                            "OpenGL compositor, and composites with QPainter here (KWin 6 "
                            "needs a GPU render node, /dev/dri/renderD*, for OpenGL)",
                            NO_GPU_FIX,
                        ) from None
                    if "NoAuthorized" in error.name:
                        raise RouteRefused(
                            "KWin refuses screenshots to a program no desktop file vouches "
                            f"for ({error.text or error.name})",
                            SETUP_FIX,
                        ) from None
                    raise KWinRefused(f"KWin refused the screenshot: {error}") from None
        finally:
            os.close(write_end)
        reader.join(max(deadline - time.monotonic(), 0) + 0.1)
        if reader.is_alive() or not chunks or chunks[-1] is _CUT:
            raise TimeoutError(f"KWin did not finish writing the screenshot ({member})")
        width, height = results["width"].value, results["height"].value
        stride, fmt = results["stride"].value, results["format"].value
        if fmt not in RAW_MODES:
            raise KWinRefused(f"KWin sent the screenshot in QImage format {fmt}, not RGB32")
        data = b"".join(chunks)
        return Image.frombuffer(
            "RGB", (width, height), data, "raw", RAW_MODES[fmt], stride, 1
        ).copy()


_CUT = b""  # the last chunk of a screenshot KWin did not finish in time


def _drain(fd: int, chunks: list[bytes], deadline: float) -> None:
    """Read the pipe to its end, or until `deadline` (then the last chunk is _CUT)."""
    try:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
                chunks.append(_CUT)
                return
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                return
            chunks.append(chunk)
    finally:
        os.close(fd)
