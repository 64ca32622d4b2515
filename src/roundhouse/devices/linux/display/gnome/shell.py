"""GNOME Shell's windows and screen, through org.gnome.Shell on the session bus.

Mutter gives clients no window positions. GNOME Shell knows them, and `Eval` runs a line
of its JavaScript, but only in unsafe mode (`gnome-shell --unsafe-mode`, what our virtual
GNOME desktops run; a person's GNOME 41+ refuses it). Each call here is one Eval that
returns JSON: the windows with their frame and buffer rectangles, an activation, a
close. Screenshots go through org.gnome.Shell.Screenshot into a file of ours.

`raw()` is not pixels: it is a count of the frames the stage has painted, kept by a
handler installed once. Mutter paints only what changed, so the count stands still exactly
when the screen does, and reading it costs an Eval (~1 ms) where a screenshot costs ~100.
`shell_paints` has another handler send a signal per frame painted: what the settle waits
on, as the frames are painted.
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
from pathlib import Path
from typing import Any

from PIL import Image

from roundhouse.devices.contract import Rect, WindowInfo
from roundhouse.devices.linux.changes import Changes
from roundhouse.devices.linux.display.base import (
    RegionScreen,
    WindowList,
    box_rect,
    clip,
    wait_until,
)
from roundhouse.devices.linux.display.wayland.dbus import DBusCallError, SyncBus
from roundhouse.devices.linux.display.wayland.toolkit import content_rect

log = logging.getLogger(__name__)

SHELL = ("org.gnome.Shell", "/org/gnome/Shell", "org.gnome.Shell")
SCREENSHOT = ("org.gnome.Shell.Screenshot", "/org/gnome/Shell/Screenshot")
SCREENSHOT_INTERFACE = "org.gnome.Shell.Screenshot"

# The windows a person switches between: normal ones and dialogs (Meta.WindowType).
_WINDOWS_JS = """
(() => {
  const kinds = [0, 3, 4, 7];  // NORMAL, DIALOG, MODAL_DIALOG, UTILITY
  const focus = global.display.focus_window;
  return global.get_window_actors().map(a => a.meta_window)
    .filter(w => kinds.includes(w.get_window_type()) && !w.is_override_redirect())
    .sort((a, b) => a.get_stable_sequence() - b.get_stable_sequence())
    .map(w => {
      const f = w.get_frame_rect(), b = w.get_buffer_rect();
      const actor = w.get_compositor_private();
      return {id: String(w.get_id()), title: w.get_title() || '', wm_class: w.get_wm_class() || '',
              pid: w.get_pid(), frame: [f.x, f.y, f.width, f.height],
              buffer: [b.x, b.y, b.width, b.height], focus: w === focus,
              shown: !!actor && actor.visible && !w.minimized && !w.is_hidden()};
    });
})()
"""
_FIND = "global.get_window_actors().map(a => a.meta_window).find(w => String(w.get_id()) === {id})"
_ACTIVATE_JS = (
    "(() => {{ const w = "
    + _FIND
    + "; if (!w) return false; "
    + ("Main.activateWindow(w); return true; }})()")
)
_CLOSE_JS = (
    "(() => {{ const w = "
    + _FIND
    + "; if (!w) return false; "
    + ("w.delete(global.get_current_time()); return true; }})()")
)
_FRAMES_JS = """
(() => {
  if (global.__roundhouseFrames === undefined) {
    global.__roundhouseFrames = 0;
    global.stage.connect('after-paint', () => { global.__roundhouseFrames += 1; });
  }
  return global.__roundhouseFrames;
})()
"""
# Each frame the stage paints, a D-Bus signal to whoever listens (see ShellPaints). Left in
# place when we go: another client of the same Shell may be listening.
PAINTS = ("/org/roundhouse/Paints", "org.roundhouse.Paints", "Painted")
_PAINTS_JS = (
    "(() => { if (global.__roundhousePaints === undefined) { const Gio = imports.gi.Gio; "
    "global.__roundhousePaints = global.stage.connect('after-paint', () => "
    f"Gio.DBus.session.emit_signal(null, {', '.join(json.dumps(part) for part in PAINTS)}, "
    "null)); } return true; })()"
)
_CLOSE_OVERVIEW_JS = "Main.overview.hide(); Main.overview.visible"
# No notification banners: as root GNOME Shell says "Logged in as a privileged user" a
# moment after it starts, over the top of the screen, and a banner is no part of a task.
_NO_BANNERS_JS = "Main.messageTray.bannerBlocked = true"


class ShellRefused(RuntimeError):
    """GNOME Shell refused Eval: it is not in unsafe mode (a person's own GNOME)."""


class Shell:
    """Eval on GNOME Shell, over one session-bus connection."""

    def __init__(self, bus: SyncBus) -> None:
        self.bus = bus

    def eval(self, script: str) -> Any:
        try:
            ok, result = self.bus.call(*SHELL, "Eval", "s", [script])
        except DBusCallError as error:
            raise ShellRefused(f"GNOME Shell's Eval failed: {error}") from None
        if not ok:
            if not result:
                raise ShellRefused(
                    "GNOME Shell refuses Eval (it is not in unsafe mode), so window positions "
                    "cannot be read on this session"
                )
            raise RuntimeError(f"GNOME Shell's script failed: {result}")
        return json.loads(result) if result else None


def pointer_position(shell: Shell) -> tuple[int, int]:
    """Where GNOME Shell has the pointer."""
    x, y = shell.eval("global.get_pointer().slice(0, 2)")
    return int(x), int(y)


class ShellWindows(WindowList):
    """The windows as GNOME Shell knows them (a display.base.Windows)."""

    def __init__(self, shell: Shell, on_activated: Callable[[], None] | None = None) -> None:
        """`on_activated` runs once a window is active (the input hands it the keyboard)."""
        self._shell = shell
        self._lock = threading.Lock()
        self.on_activated = on_activated

    def close(self) -> None:
        pass  # the bus is the server's, closed with it

    def _rows(self) -> list[dict[str, Any]]:
        with self._lock:
            rows = self._shell.eval(_WINDOWS_JS)
        return list(rows or [])

    def list_windows(self) -> list[WindowInfo]:
        return [_info(row) for row in self._rows()]

    def viewable(self, xid: int) -> bool:
        return any(int(row["id"]) == xid and row["shown"] for row in self._rows())

    async def activate(self, xid: int, timeout: float = 3.0) -> WindowInfo:
        self.get(xid)
        await wait_until(lambda: self.viewable(xid), timeout)
        with self._lock:
            self._shell.eval(_ACTIVATE_JS.format(id=json.dumps(str(xid))))
        window = await self._until_active(xid, timeout)
        if self.on_activated is not None:
            await asyncio.to_thread(self.on_activated)
        return window

    async def close_window(self, xid: int, timeout: float = 3.0) -> bool:
        self.get(xid)
        with self._lock:
            self._shell.eval(_CLOSE_JS.format(id=json.dumps(str(xid))))
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

    def __init__(self, shell: Shell, size: tuple[int, int], runtime_dir: str) -> None:
        self._shell = shell
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
            return str(self._shell.eval(_FRAMES_JS)).encode()

    def _shoot(self, member: str, signature: str, args: list[Any]) -> Image.Image:
        with self._lock:
            path = Path(self._folder) / "shot.png"
            try:
                ok, _used = self._shell.bus.call(
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


def shell_paints(shell: Shell) -> Changes | None:
    """The frames GNOME Shell's stage paints, as they are painted: a signal each, from a
    handler installed through Eval; None where the Shell refuses Eval. Mutter paints only
    what changed, and at once, where its screen cast's frames reach us 50-90 ms later (a
    GStreamer pipeline converts each): what the settle waits on and the kept reads ask."""
    painted = Changes("GNOME Shell's stage")
    path, interface, member = PAINTS
    try:
        shell.bus.on_signal(interface, member, path, lambda _body: painted.bump())
        shell.eval(_PAINTS_JS)
    except (ShellRefused, RuntimeError) as error:
        log.info("GNOME Shell reports no paints (%s): the screen cast's frames tell", error)
        return None
    return painted


def prepare_shell(shell: Shell, timeout: float = 3.0) -> None:
    """A virtual GNOME desktop's Shell: out of the Overview it starts in (windows take clicks
    and keys), and with notification banners held back."""
    shell.eval(_NO_BANNERS_JS)
    deadline = time.monotonic() + timeout
    while shell.eval(_CLOSE_OVERVIEW_JS) and time.monotonic() < deadline:
        time.sleep(0.05)
