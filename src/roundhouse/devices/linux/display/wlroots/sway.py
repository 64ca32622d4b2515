"""sway's windows through its IPC socket (SWAYSOCK; i3's protocol): the tree of
containers with each window's rectangle, focus, and commands to focus or close one.

A window is a container that holds a view (it has a pid); its id is sway's container id,
stable while the window lives. Its rectangle is where its content is drawn: the
container's `rect` (borders and title bar included) moved by `window_rect`.
"""

from __future__ import annotations

import json
import socket
import struct
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from roundhouse.devices.contract import Rect, WindowInfo
from roundhouse.devices.linux.display.base import Closing, WindowList, box_rect
from roundhouse.devices.linux.display.wayland.wire import TIMEOUT

MAGIC = b"i3-ipc"
HEADER = struct.Struct("=6sII")
RUN_COMMAND, GET_TREE = 0, 4


class SwayError(RuntimeError):
    """sway's IPC socket is missing, or sway refused a command."""


class SwayGone(SwayError):
    """sway's IPC connection is gone: sway exited."""


def sway_socket(env: Mapping[str, str]) -> Path:
    """sway's IPC socket: SWAYSOCK, else the one sway made in XDG_RUNTIME_DIR."""
    if env.get("SWAYSOCK"):
        return Path(env["SWAYSOCK"])
    runtime = Path(env.get("XDG_RUNTIME_DIR") or "/nonexistent")
    found = sorted(runtime.glob("sway-ipc.*.sock"))
    if not found:
        raise SwayError(
            "no sway IPC socket (SWAYSOCK is not set and none is in XDG_RUNTIME_DIR): the "
            "windows of a wlroots session come from sway's IPC, and Hyprland, labwc and river "
            "are not driven yet"
        )
    return found[-1]


class SwayIpc:
    """One connection to sway's IPC socket; each call is one request and its reply."""

    def __init__(self, path: Path, timeout: float = TIMEOUT) -> None:
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
        self._sock.settimeout(timeout)
        self._lock = threading.Lock()
        try:
            self._sock.connect(str(path))
        except OSError as error:
            self._sock.close()
            raise SwayError(f"cannot connect to sway at {path}: {error}") from None

    def close(self) -> None:
        self._sock.close()

    def call(self, kind: int, payload: str = "") -> Any:
        data = payload.encode()
        with self._lock:
            try:
                self._sock.sendall(HEADER.pack(MAGIC, len(data), kind) + data)
                magic, size, _ = HEADER.unpack(self._read(HEADER.size))
                if magic != MAGIC:
                    raise SwayError("sway's IPC socket answered something else than i3-ipc")
                return json.loads(self._read(size))
            except TimeoutError:
                raise SwayError("sway did not answer within its timeout") from None
            except OSError as error:
                raise SwayGone(f"sway's IPC connection broke: {error}") from None

    def command(self, text: str) -> None:
        for outcome in self.call(RUN_COMMAND, text):
            if not outcome.get("success"):
                raise SwayError(f"sway refused {text!r}: {outcome.get('error', 'no reason')}")

    def _read(self, size: int) -> bytes:
        data = b""
        while len(data) < size:
            chunk = self._sock.recv(size - len(data))
            if not chunk:
                raise SwayGone("sway closed its IPC connection")
            data += chunk
        return data


def views(tree: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The containers that hold a window, tiled and floating, in tree order."""
    for child in [*tree.get("nodes", []), *tree.get("floating_nodes", [])]:
        if child.get("pid") and child.get("type") in ("con", "floating_con"):
            yield child
        else:
            yield from views(child)


def window_info(node: Mapping[str, Any]) -> WindowInfo:
    outer, inner = node["rect"], node["window_rect"]
    left, top = outer["x"] + inner["x"], outer["y"] + inner["y"]
    properties = node.get("window_properties") or {}
    return WindowInfo(
        xid=int(node["id"]),
        title=node.get("name") or "",
        application=node.get("app_id") or properties.get("class") or "",
        pid=node.get("pid"),
        rect=box_rect(left, top, inner["width"], inner["height"]),
        active=bool(node.get("focused")),
    )


def laid_out(node: Mapping[str, Any]) -> bool:
    """Whether sway has applied a window's first layout. sway lists a new window at once,
    but draws it only once the application has drawn at the size it was given (or sway
    gave up waiting): until then its decoration, which the tree gives as applied,
    is still the empty one, "none" 0 pixels wide, and the window sits higher than where it
    is drawn (by the title bar sway then adds: 25 pixels). A gedit read then and clicked
    at once was clicked on the title bar (test_monitors). A border of "none" 0 pixels wide
    is also what a sway configured so shows for good (`default_border none`, a person's
    choice): SwayWindows.viewable waits for it LAYOUT_WAIT seconds at most."""
    return not (node.get("border") == "none" and node.get("current_border_width") == 0)


# sway lays a window out at the latest when its transaction times out (200 ms by default):
# a window still without a border after this long has none by its configuration.
LAYOUT_WAIT = 1.0


class SwayWindows(WindowList, Closing):
    """The windows as sway knows them (a display.base.Windows)."""

    def __init__(self, env: Mapping[str, str], timeout: float = TIMEOUT) -> None:
        self._ipc = SwayIpc(sway_socket(env), timeout)
        self._unlaid_since: dict[int, float] = {}  # window id -> when first seen not laid out

    def close(self) -> None:
        self._ipc.close()

    def _nodes(self) -> list[dict[str, Any]]:
        return list(views(self._ipc.call(GET_TREE)))

    def list_windows(self) -> list[WindowInfo]:
        return [window_info(node) for node in self._nodes()]

    def viewable(self, xid: int) -> bool:
        """Whether sway shows the window (on a visible workspace, not in a hidden tab), its
        application has drawn it, and sway has laid it out (laid_out)."""
        node = next((node for node in self._nodes() if node["id"] == xid), None)
        if node is None or not node.get("visible") or node["rect"]["width"] <= 0:
            return False
        if laid_out(node):
            return True
        since = self._unlaid_since.setdefault(xid, time.monotonic())
        return time.monotonic() - since >= LAYOUT_WAIT

    async def activate(self, xid: int, timeout: float = 3.0) -> WindowInfo:
        self.get(xid)
        self._ipc.command(f"[con_id={xid}] focus")
        return await self._until_active(xid, timeout)

    async def close_window(self, xid: int, timeout: float = 3.0) -> bool:
        self.get(xid)
        self._ipc.command(f"[con_id={xid}] kill")
        return await self._until_gone(xid, timeout)

    def content(self, window: WindowInfo) -> Rect:
        """The window's geometry: what the application draws as its window, without the
        shadow GTK 3 draws around a floating one. sway does not say how wide that shadow
        is; the reader centres a larger reported frame in this (atspi placement)."""
        return self.get(window.xid).rect
