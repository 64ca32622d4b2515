"""The control tree of a window, read from AT-SPI over D-Bus in bulk, and actions on it.

    async with AtspiClient() as client:           # or: await client.connect(desktop)
        await client.connect(desktop)
        controls = await client.controls(window)  # what the agent reads every step
        await client.do_action(controls.controls[0].id)

A window (from the window manager) is matched to its AT-SPI frame by the pid owning the
application's bus name, then by title and rectangle. Node ids are "<bus name>:<object
path>", stable while the object lives. Reads are bulk (atspi_read); choosing and numbering
controls is pure (atspi_tree).
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from dbus_fast import Message, MessageType
from dbus_fast.aio import MessageBus

from roundhouse.devices.linux.atspi_bus import (
    AtspiBus,
    AtspiError,
    AtspiTimeout,
    NodeGone,
    Ref,
    WindowGone,
    node_id,
    parse_node_id,
)
from roundhouse.devices.linux.atspi_constants import (
    ACCESSIBLE,
    ACTION,
    COMPONENT,
    EDITABLE_TEXT,
    REGISTRY_BUS,
    REGISTRY_PATH,
    ROOT_PATH,
    TEXT,
)
from roundhouse.devices.linux.atspi_read import (
    RawNode,
    TreeLimits,
    fetch_node,
    load_cache,
    read_details,
    read_structure,
)
from roundhouse.devices.linux.atspi_tree import (
    build_tree,
    intersection,
    needs_rect,
    select_controls,
    ui_tree_json,
)
from roundhouse.devices.linux.desktop import Desktop, process_age
from roundhouse.devices.linux.types import ControlList, Rect, UiNode, UiSnapshot, WindowInfo

log = logging.getLogger(__name__)

CONNECT_TIMEOUT = 5.0
REGISTER_GRACE = 5.0  # seconds after its start an app may still be registering

__all__ = [
    "AtspiClient",
    "AtspiError",
    "AtspiTimeout",
    "NodeGone",
    "TreeLimits",
    "WindowGone",
    "ui_tree_json",
]


def no_tree_note(window: WindowInfo) -> str:
    name = window.application or window.title or "this application"
    return f"{name} exposes no accessibility tree; use screenshots and coordinates"


@dataclass
class Frame:
    """A window's top-level accessible object, with its application's cache."""

    app: str  # the application's bus name
    node: RawNode
    cache: dict[Ref, RawNode]


class AtspiClient:
    def __init__(self, *, call_timeout: float = 3.0, max_in_flight: int = 64) -> None:
        self.call_timeout = call_timeout
        self.max_in_flight = max_in_flight
        self._bus: AtspiBus | None = None
        self._desktop: Desktop | None = None
        self.register_grace = REGISTER_GRACE
        self._pids: dict[str, int | None] = {}  # unique bus names are never reused
        self._frames: dict[int, tuple[str, Ref]] = {}  # X window id -> (app, frame)
        self.screen = Rect(left=0, top=0, right=0, bottom=0)

    # ------------------------------------------------------------ connection

    async def connect(self, desktop: Desktop) -> None:
        """Join the desktop's AT-SPI bus and register a listener, so GTK keeps its cache."""
        if desktop.bus_address is None:
            raise AtspiError(
                f"display {desktop.display} has no D-Bus session bus "
                "(DBUS_SESSION_BUS_ADDRESS is not set), so no accessibility tree"
            )
        self._desktop = desktop
        address = await _a11y_address(desktop.bus_address)
        try:
            connection = await asyncio.wait_for(
                MessageBus(bus_address=address).connect(), CONNECT_TIMEOUT
            )
        except (OSError, TimeoutError) as error:
            raise AtspiError(f"cannot reach the AT-SPI bus {address}: {error!r}") from None
        bus = AtspiBus(connection, max_in_flight=self.max_in_flight, timeout=self.call_timeout)
        self.screen = Rect(left=0, top=0, right=desktop.width, bottom=desktop.height)
        # Kept for the life of the connection: GTK only fills Cache.GetItems while some
        # client listens for events.
        await bus.call(
            (REGISTRY_BUS, REGISTRY_PATH),
            "org.a11y.atspi.Registry",
            "RegisterEvent",
            "sass",
            ["window:activate", [], ""],
        )
        self._bus = bus

    async def _connected(self) -> AtspiBus:
        """The bus, connected again if the connection dropped (the next read works again)."""
        if self._bus is not None and self._bus.connected:
            return self._bus
        if self._desktop is None:
            raise AtspiError("AtspiClient is not connected: call connect(desktop) first")
        log.warning("the AT-SPI connection dropped; connecting again")
        await self.connect(self._desktop)
        return self.bus

    async def close(self) -> None:
        if self._bus is not None:
            self._bus.bus.disconnect()
            self._bus = None

    async def __aenter__(self) -> AtspiClient:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.close()

    @property
    def bus(self) -> AtspiBus:
        if self._bus is None:
            raise AtspiError("AtspiClient is not connected: call connect(desktop) first")
        return self._bus

    # ------------------------------------------------------------ reading

    async def ui_tree(
        self, window: WindowInfo, limits: TreeLimits | None = None, *, showing_only: bool = False
    ) -> UiSnapshot:
        """The window's tree; details (rectangle, actions, text) for showing nodes."""
        await self._connected()
        limits = limits or TreeLimits()
        started = time.monotonic()
        deadline = started + limits.time_limit
        frame = await self.find_frame(window)
        if frame is None:
            return UiSnapshot(window=window, root=None, node_count=0, tree_available=False)
        structure = await read_structure(
            self.bus,
            frame.node,
            frame.cache,
            limits,
            (lambda node: node.showing) if showing_only else (lambda node: True),
            deadline,
        )
        showing = [node for node in structure.nodes.values() if node.showing]
        complete = await read_details(self.bus, showing, limits, deadline)
        reason = structure.truncated_reason or (None if complete else "time limit")
        return UiSnapshot(
            window=window,
            root=build_tree(structure.nodes, structure.root),
            node_count=len(structure.nodes),
            truncated=reason is not None,
            truncated_reason=reason,
            elapsed_ms=(time.monotonic() - started) * 1000,
        )

    async def controls(self, window: WindowInfo, limits: TreeLimits | None = None) -> ControlList:
        """The interactive controls a person sees in the window, numbered in reading order."""
        await self._connected()
        limits = limits or TreeLimits()
        deadline = time.monotonic() + limits.time_limit
        frame = await self.find_frame(window)
        if frame is None:
            return ControlList(
                window=window, controls=[], tree_available=False, note=no_tree_note(window)
            )
        # What is not showing cannot hold a visible control: those branches are not read.
        structure = await read_structure(
            self.bus,
            frame.node,
            frame.cache,
            limits,
            lambda node: node.showing,
            deadline,
            descriptions=False,  # read with the details, for the controls that use them
        )
        root_node = structure.nodes[structure.root]
        wanted = [node for node in structure.nodes.values() if needs_rect(node)]
        complete = await read_details(self.bus, [root_node, *wanted], limits, deadline)
        reason = structure.truncated_reason or (None if complete else "time limit")
        area = self.screen
        if root_node.rect is not None:
            area = intersection(self.screen, root_node.rect)
        root = build_tree(structure.nodes, structure.root)
        return ControlList(
            window=window,
            controls=select_controls(root, area),
            truncated=reason is not None,
            truncated_reason=reason,
        )

    async def describe(self, node_id_: str) -> UiNode:
        """One node with its rectangle, actions and text (no children)."""
        ref = parse_node_id(node_id_)
        await self._connected()
        node = await fetch_node(self.bus, ref)
        if node is None:
            raise NodeGone(f"control {node_id_} no longer exists")
        await read_details(self.bus, [node], TreeLimits(), time.monotonic() + self.call_timeout)
        node.children = []
        return build_tree({ref: node}, ref)

    # ------------------------------------------------------------ acting

    async def do_action(self, node_id_: str, action: str | None = None) -> bool:
        """Perform the node's named action (default: its first, e.g. "click" or "press")."""
        ref = parse_node_id(node_id_)
        reply = await self._on_node(ref, ACTION, "GetActions")
        names = [str(item[0]) for item in reply[0]]
        if not names:
            raise AtspiError(f"control {node_id_} has no actions")
        index = 0
        if action is not None:
            lowered = [name.lower() for name in names]
            if action.lower() not in lowered:
                raise AtspiError(f"control {node_id_} has no action {action!r}; it has {names}")
            index = lowered.index(action.lower())
        (done,) = await self._on_node(ref, ACTION, "DoAction", "i", [index])
        return bool(done)

    async def set_text(self, node_id_: str, text: str) -> bool:
        """Replace the node's whole text through EditableText (any Unicode, no keyboard)."""
        (done,) = await self._on_node(
            parse_node_id(node_id_), EDITABLE_TEXT, "SetTextContents", "s", [text]
        )
        return bool(done)

    async def get_text(self, node_id_: str) -> str:
        ref = parse_node_id(node_id_)
        bus = await self._connected()
        try:
            count = await bus.get_property(ref, TEXT, "CharacterCount")
        except NodeGone as error:
            raise NodeGone(f"control {node_id_} has no text or no longer exists") from error
        (text,) = await self._on_node(ref, TEXT, "GetText", "ii", [0, int(count)])
        return str(text)

    async def grab_focus(self, node_id_: str) -> bool:
        (done,) = await self._on_node(parse_node_id(node_id_), COMPONENT, "GrabFocus")
        return bool(done)

    async def _on_node(
        self,
        ref: Ref,
        interface: str,
        member: str,
        signature: str = "",
        body: list[Any] | None = None,
    ) -> list[Any]:
        bus = await self._connected()
        try:
            return await bus.call(ref, interface, member, signature, body or [])
        except NodeGone as error:
            kind = interface.rsplit(".", 1)[-1]
            raise NodeGone(
                f"control {node_id(ref)} no longer exists or has no {kind} interface"
            ) from error

    # ------------------------------------------------------------ finding the window

    async def applications(self) -> list[str]:
        """Bus names of the applications registered on the desktop."""
        (children,) = await self.bus.call((REGISTRY_BUS, ROOT_PATH), ACCESSIBLE, "GetChildren")
        return [str(child[0]) for child in children]

    async def app_pid(self, app: str) -> int | None:
        if app not in self._pids:
            self._pids[app] = await self.bus.name_pid(app)
        return self._pids[app]

    async def find_frame(self, window: WindowInfo) -> Frame | None:
        """The window's AT-SPI frame; None when its application exposes no tree."""
        known = await self._known_frame(window)
        if known is not None:
            return known
        frame = await self._search_frame(window)
        if frame is not None:
            self._frames[window.xid] = (frame.app, frame.node.ref)
        return frame

    async def _known_frame(self, window: WindowInfo) -> Frame | None:
        """The frame matched to this X window before, if it still exists: one GetItems
        (or one node read) instead of a search through every application."""
        remembered = self._frames.get(window.xid)
        if remembered is None:
            return None
        app, ref = remembered
        try:
            if self._pids.get(app) != window.pid:
                raise NodeGone("another process")
            cache = await load_cache(self.bus, app)
            node = cache.get(ref) or await fetch_node(self.bus, ref)
        except (WindowGone, NodeGone):
            node = None
        if node is None:
            del self._frames[window.xid]
            return None
        return Frame(app, node, cache)

    async def _search_frame(self, window: WindowInfo) -> Frame | None:
        mine = await self._applications_of(window.pid)
        best: tuple[int, Frame] | None = None
        seen_titles: list[str] = []
        for app in mine:
            try:
                cache, tops = await asyncio.gather(load_cache(self.bus, app), self._top_levels(app))
            except WindowGone:
                if window.pid is not None:
                    raise
                continue  # another application closed while we looked
            nodes = await asyncio.gather(*(self._top_node(top, cache) for top in tops))
            for node in nodes:
                if node is None:
                    continue
                seen_titles.append(node.name)
                score = _match_score(node, window)
                if score > 0 and (best is None or score > best[0]):
                    best = (score, Frame(app, node, cache))
        if best is not None:
            return best[1]
        if not mine:
            return None
        if window.pid is None:
            return None
        raise WindowGone(
            f"no accessible window matches {window.title!r} (pid {window.pid}); "
            f"its application shows: {seen_titles or 'no windows'}"
        )

    async def _applications_of(self, pid: int | None) -> list[str]:
        """The applications owning windows of `pid` (all of them when pid is unknown).

        An app registers with AT-SPI while it starts: a window of a process younger than
        `register_grace` seconds gets until then to appear, so a just-launched app is not
        mistaken for one without a tree.
        """
        while True:
            apps = await self.applications()
            if pid is None:
                return apps
            pids = await asyncio.gather(*(self.app_pid(app) for app in apps))
            mine = [app for app, owner in zip(apps, pids, strict=True) if owner == pid]
            if mine:
                return mine
            age = process_age(pid)
            if age is None:
                raise WindowGone(f"the window's process {pid} has exited")
            if age > self.register_grace:
                return []
            await asyncio.sleep(0.05)

    async def _top_node(self, ref: Ref, cache: dict[Ref, RawNode]) -> RawNode | None:
        node = cache.get(ref) or await fetch_node(self.bus, ref)
        if node is not None:
            await read_details(self.bus, [node], TreeLimits(), time.monotonic() + self.call_timeout)
        return node

    async def _top_levels(self, app: str) -> list[Ref]:
        reply = await self.bus.call((app, ROOT_PATH), ACCESSIBLE, "GetChildren")
        return [(str(bus), str(path)) for bus, path in reply[0]]


def _match_score(node: RawNode, window: WindowInfo) -> int:
    """How well an AT-SPI top-level matches a window manager's window (0: not at all)."""
    score = 0
    title, name = window.title.strip(), node.name.strip()
    if title and name == title:
        score += 4
    elif title and name and (name in title or title in name):
        score += 2
    if node.rect is not None and _overlap(node.rect, window.rect) > 0.8:
        score += 3
    if score and node.showing:
        score += 1
    return score


def _overlap(first: Rect, second: Rect) -> float:
    """Intersection over union of two rectangles."""
    shared = intersection(first, second)
    if shared.width <= 0 or shared.height <= 0:
        return 0.0
    area = shared.width * shared.height
    union = first.width * first.height + second.width * second.height - area
    return area / union if union > 0 else 0.0


async def _a11y_address(session_address: str) -> str:
    try:
        session = await asyncio.wait_for(
            MessageBus(bus_address=session_address).connect(), CONNECT_TIMEOUT
        )
    except (OSError, TimeoutError) as error:
        raise AtspiError(f"cannot reach the session bus {session_address}: {error}") from None
    try:
        reply = await asyncio.wait_for(
            session.call(
                Message(
                    destination="org.a11y.Bus",
                    path="/org/a11y/bus",
                    interface="org.a11y.Bus",
                    member="GetAddress",
                )
            ),
            CONNECT_TIMEOUT,
        )
    except TimeoutError:
        raise AtspiTimeout("the AT-SPI bus launcher did not answer GetAddress") from None
    finally:
        session.disconnect()
    if reply is None or reply.message_type is MessageType.ERROR:
        raise AtspiError(
            "no AT-SPI bus on this session bus (is at-spi2-core installed?): "
            f"{reply.body if reply is not None else 'no reply'}"
        )
    return str(reply.body[0])
