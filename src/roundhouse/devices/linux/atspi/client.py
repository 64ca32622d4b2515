"""The control tree of a window, read from AT-SPI over D-Bus in bulk, and actions on it.

    async with AtspiClient() as client:           # or: await client.connect(desktop)
        await client.connect(desktop)
        controls = await client.controls(window)  # what the agent reads every step
        await client.do_action(controls.controls[0].id)

A window (from the window manager) is matched to its AT-SPI frame by the pid owning the
application's bus name, then by title and rectangle. Node ids are "<bus name>:<object
path>", stable while the object lives. Reads are bulk (read.py, over fetch.py's calls);
choosing and numbering controls is pure (controls.py, layout.py, tree.py).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from typing import TypeVar

from dbus_fast.aio import MessageBus
from dbus_fast.errors import DBusFastError

from roundhouse.devices.base import Closing
from roundhouse.devices.contract import ControlList, Rect, UiNode, UiSnapshot, WindowInfo
from roundhouse.devices.linux.atspi.bus import (
    CONNECT_TIMEOUT,
    AtspiBus,
    AtspiError,
    AtspiTimeout,
    NodeGone,
    WindowGone,
    a11y_address,
    parse_node_id,
)
from roundhouse.devices.linux.atspi.cells import CellRefs
from roundhouse.devices.linux.atspi.constants import (
    GET_TEXT,
    REGISTER_EVENT,
    REGISTRY_BUS,
    REGISTRY_PATH,
    TEXT,
)
from roundhouse.devices.linux.atspi.controls import (
    context_needs_text,
    may_be_context,
    may_be_control,
    needs_rect,
)
from roundhouse.devices.linux.atspi.events import Announcements
from roundhouse.devices.linux.atspi.fetch import fetch_node, read_details
from roundhouse.devices.linux.atspi.frames import Frame, FrameFinder, Toolkit
from roundhouse.devices.linux.atspi.kept import KeptReads
from roundhouse.devices.linux.atspi.layout import intersection
from roundhouse.devices.linux.atspi.names import name_the_nameless, tidy_gtk4_names
from roundhouse.devices.linux.atspi.node import RawNode, TreeLimits
from roundhouse.devices.linux.atspi.on_node import OnNode
from roundhouse.devices.linux.atspi.placement import IDENTITY, Placement, place
from roundhouse.devices.linux.atspi.props import extents
from roundhouse.devices.linux.atspi.read import Structure, finish, read_structure
from roundhouse.devices.linux.atspi.seam import Announcing, TextRead
from roundhouse.devices.linux.atspi.tree import (
    build_tree,
    focused_rect,
    no_tree_note,
    select_view,
    ui_tree_json,
    walk,
)
from roundhouse.devices.linux.desktops.desktop import Desktop
from roundhouse.devices.linux.display.base import PositionsUnknown
from roundhouse.devices.linux.display.changes import Changes

log = logging.getLogger(__name__)

# Text fields whose text an action's look reads: a person sees them change (a calculator's
# display, a search field), where no name or state does. Not password fields.
DISPLAY_ROLES = frozenset({"text", "entry", "spin button"})
DISPLAYS = 8
DISPLAY_TEXT = 200  # characters

__all__ = [
    "AtspiClient",
    "AtspiError",
    "AtspiTimeout",
    "Frame",
    "NodeGone",
    "Placement",
    "TextRead",
    "TreeLimits",
    "WindowGone",
    "ui_tree_json",
]


# Where a window's content is on screen: display.base.Windows.content, the one provider.
Content = Callable[[WindowInfo], Rect]


def _window_rect(window: WindowInfo) -> Rect:
    return window.rect


_T = TypeVar("_T")


@dataclass(frozen=True)
class _Read:
    """A window's subtree as read (AtspiClient._read_frame), and the deadline the details
    that follow it keep to."""

    window: WindowInfo
    limits: TreeLimits
    structure: Structure
    frame: Frame
    placement: Placement
    deadline: float


class AtspiClient(OnNode, Closing):
    """Reads and acts on the accessible objects of a desktop's windows (a seam.AccessibleTree).
    `content` says where a window's content is on screen (the display server's
    Windows.content); without it, a window's whole rectangle stands for it (placement.py)."""

    def __init__(
        self,
        *,
        call_timeout: float = 3.0,
        max_in_flight: int = 64,
        content: Content = _window_rect,
        drawn: Changes | None = None,
    ) -> None:
        self.call_timeout = call_timeout
        self.max_in_flight = max_in_flight
        self.content = content
        self.drawn = drawn  # what the screen draws (display.base.DisplayServer.drawn)
        self._bus: AtspiBus | None = None
        self._desktop: Desktop | None = None
        self.frames = FrameFinder()
        self.screen = Rect(left=0, top=0, right=0, bottom=0)
        self.bus_restarted = False  # connected again, to a new bus: the old one died
        self._address: str | None = None
        # Table cells read in view, kept between reads of this connection (atspi_cells).
        self.cells = CellRefs()
        # What the applications announce (atspi_events), heard from connect() on, and the
        # reads kept while nothing changes (atspi_kept).
        self.announcements: Announcements | None = None
        self.kept = KeptReads(None, None, None)

    # ------------------------------------------------------------ connection

    async def connect(self, desktop: Desktop) -> None:
        """Join the desktop's AT-SPI bus and register a listener, so GTK keeps its cache."""
        if desktop.bus_address is None:
            raise AtspiError(
                f"display {desktop.display} has no D-Bus session bus "
                "(DBUS_SESSION_BUS_ADDRESS is not set), so no accessibility tree"
            )
        await self.close()
        self.announcements, self.kept = None, KeptReads(None, None, None)
        self._desktop = desktop
        address = await a11y_address(desktop.bus_address)
        self._address = address
        try:
            connection = await asyncio.wait_for(
                MessageBus(bus_address=address).connect(), CONNECT_TIMEOUT
            )
        except (OSError, TimeoutError, DBusFastError) as error:
            raise AtspiError(f"cannot reach the AT-SPI bus {address}: {error!r}") from None
        bus = AtspiBus(connection, max_in_flight=self.max_in_flight, timeout=self.call_timeout)
        self.cells = CellRefs()  # object paths mean nothing on another connection
        self.screen = Rect(left=0, top=0, right=desktop.width, bottom=desktop.height)
        # Kept for the life of the connection: GTK only fills Cache.GetItems while some
        # client listens for events.
        try:
            await bus.call(
                (REGISTRY_BUS, REGISTRY_PATH), REGISTER_EVENT, ["window:activate", [], ""]
            )
        except AtspiError:
            connection.disconnect()
            raise
        self._bus = bus
        if self.drawn is not None:
            # Heard only where the screen tells what it draws too: the settle and the kept
            # reads need both, and a single read (`roundhouse tree`) neither.
            heard = Announcements(bus)
            await heard.listen()
            self.announcements = heard
            if heard.listening:
                self.kept = KeptReads(self.drawn, heard.changes, heard.caught_up)

    async def _connected(self) -> AtspiBus:
        """The bus, connected again if the connection dropped (the next read works again)."""
        if self._bus is not None and self._bus.connected:
            return self._bus
        if self._desktop is None:
            raise AtspiError("AtspiClient is not connected: call connect(desktop) first")
        log.warning("the AT-SPI connection dropped; connecting again")
        old_address = self._address
        await self.connect(self._desktop)
        self.bus_restarted = self.bus_restarted or self._address != old_address
        return self.bus

    async def close(self) -> None:
        self.kept.forget()
        if self._bus is not None:
            self._bus.close()
            self._bus = None

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
        descend = (lambda node: node.showing) if showing_only else (lambda node: True)
        read = await self._read_frame(window, limits, descend, showing_only=showing_only)
        if read is None:
            return UiSnapshot(window=window, root=None, node_count=0, tree_available=False)
        structure, deadline = read.structure, read.deadline
        showing = [node for node in structure.nodes.values() if node.showing]
        reason = await self._details(structure, showing, limits, deadline)
        finish(structure, read.placement, read.frame.gtk4)
        return UiSnapshot(
            window=window,
            root=build_tree(structure.nodes, structure.root),
            node_count=len(structure.nodes),
            truncated=reason is not None,
            truncated_reason=reason,
            elapsed_ms=(time.monotonic() - started) * 1000,
        )

    async def controls(
        self, window: WindowInfo, limits: TreeLimits | None = None, *, fresh: bool = False
    ) -> ControlList:
        """The interactive controls a person sees in the window, numbered in reading order:
        the last read of it where nothing has changed since (atspi_kept), unless `fresh`."""
        limits = limits or TreeLimits()
        listed = await self._read_kept(
            "controls", window, limits, fresh, ControlList, self._controls_of
        )
        if listed is None:
            note = no_tree_note(window, self.bus_restarted)
            return ControlList(window=window, controls=[], tree_available=False, note=note)
        return listed

    async def _controls_of(self, read: _Read) -> tuple[ControlList, bool, Rect | None]:
        structure, frame, limits, deadline = read.structure, read.frame, read.limits, read.deadline
        root_node = structure.nodes[structure.root]
        candidates = [node for node in structure.nodes.values() if needs_rect(node)]
        # What is only read as context (a heading, a label) needs its place, nothing more,
        # unless its words are in its text alone (Firefox's nameless headings).
        context = [
            n
            for n in candidates
            if may_be_context(n) and not may_be_control(n) and not context_needs_text(n)
        ]
        # By reference, not `n not in context`: that compared whole nodes, field by field,
        # every candidate against every context node (Calc: ~600 × ~100 a read).
        context_refs = {n.ref for n in context}
        full = [n for n in candidates if n.ref not in context_refs]
        reason = await self._details(structure, [root_node, *full], limits, deadline)
        if reason is None:
            reason = await self._details(structure, context, limits, deadline, rect_only=True)
        if reason is None:
            await name_the_nameless(self.bus, [n for n in full if may_be_control(n)])
        finish(structure, read.placement, frame.gtk4)
        area = self.screen
        if root_node.rect is not None:
            area = intersection(self.screen, root_node.rect)
        view = select_view(build_tree(structure.nodes, structure.root), area)
        listed = ControlList(
            window=read.window,
            controls=view.controls,
            context=view.context,
            dialog=view.dialog,
            truncated=reason is not None,
            truncated_reason=reason,
        )
        return listed, reason is None, focused_rect(listed.controls)

    async def _read_kept(
        self,
        what: str,
        window: WindowInfo,
        limits: TreeLimits,
        fresh: bool,
        kind: type[_T],
        derive: Callable[[_Read], Awaitable[tuple[_T, bool, Rect | None]]],
    ) -> _T | None:
        """What `derive` makes of what shows of the window (the value, whether all was read,
        the focused rectangle): the last one where nothing has changed since (atspi_kept),
        unless `fresh`; a new one is kept where all was read. None where the window has no
        frame (its application exposes no tree).

        What shows is read alone: what is not showing (nor a closed menu's items) cannot
        hold a visible control, so those branches are not read; managed containers only in
        view; no descriptions (read with the details, for the controls that use them)."""
        await self._connected()
        key = (what, window.xid, limits)
        kept = None if fresh else await self.kept.get(key, window)
        if isinstance(kept, kind):
            return kept
        app = self.frames.app_of(window.xid)
        marks = self.kept.marks(app) if app is not None else None  # before the read begins
        read = await self._read_frame(
            window,
            limits,
            lambda node: node.may_show_children,
            showing_only=True,
            descriptions=False,
            in_view_only=True,
            hidden_in_full=False,
        )
        if read is None:
            return None
        if read.frame.gtk4:
            tidy_gtk4_names(read.structure.nodes.values())
        value, complete, focused = await derive(read)
        # Not kept: a window's first read (its application's witness counted only after it
        # began), nor a frame with nothing under it (GTK 4 builds its tree once asked, and
        # announces nothing when it has: GNOME Calculator's keypad stayed unseen).
        if complete and app == read.frame.app and len(read.structure.nodes) > 1:
            self.kept.keep(key, value, window, read.frame.app, marks, focused)
        return value

    async def _read_frame(
        self,
        window: WindowInfo,
        limits: TreeLimits,
        descend: Callable[[RawNode], bool],
        *,
        showing_only: bool,
        **options: bool,
    ) -> _Read | None:
        """The window's frame and its subtree (read_structure, with `options`), managed
        containers read within what of the window is on screen; its rectangles are the
        application's (see placement). None where the window has no frame."""
        deadline = time.monotonic() + limits.time_limit
        frame = await self.find_frame(window, showing_only=showing_only)
        if frame is None:
            return None
        placement = await self.placement(window, frame)
        structure = await read_structure(
            self.bus,
            frame.node,
            frame.cache,
            limits,
            descend,
            deadline,
            area=placement.to_app(intersection(self.screen, window.rect)),
            cells=self.cells,  # the cells kept from the last read: LibreOffice makes none
            get_all=frame.get_all,
            showing_from_extents=frame.showing_from_extents,
            **options,
        )
        return _Read(window, limits, structure, frame, placement, deadline)

    async def showing_nodes(
        self, window: WindowInfo, limits: TreeLimits, *, fresh: bool = False
    ) -> tuple[list[UiNode], bool] | None:
        """Every showing node of the window, flat, with role, name and states only (no
        details: cheap enough to read before and after each action), and the start of what
        the first few text fields show (a calculator's display), and whether all were read
        within `limits`. None when the application exposes no tree. The last read of it
        where nothing has changed since (atspi_kept), unless `fresh`."""
        return await self._read_kept("showing", window, limits, fresh, tuple, self._showing_of)

    async def _showing_of(self, read: _Read) -> tuple[tuple[list[UiNode], bool], bool, Rect | None]:
        structure = read.structure
        if not structure.stalled:
            await self._display_texts(structure)
        finish(structure, read.placement, read.frame.gtk4)
        tree = build_tree(structure.nodes, structure.root)
        nodes = [node for node in walk(tree) if "showing" in node.states]
        complete = structure.truncated_reason is None
        return (nodes, complete), complete, focused_rect(nodes)

    async def _display_texts(self, structure: Structure) -> None:
        """The first DISPLAY_TEXT characters of up to DISPLAYS showing text fields, into
        their `text` (pipelined: one round trip). GetText(0, n) is not read past the end by
        the toolkits whose text fields these are (LibreOffice's paragraphs are not fields)."""
        fields = [
            node
            for node in structure.nodes.values()
            if node.showing and node.role in DISPLAY_ROLES and TEXT in node.interfaces
        ][:DISPLAYS]
        texts = await asyncio.gather(
            *(self.bus.call_or_none(node.ref, GET_TEXT, [0, DISPLAY_TEXT]) for node in fields)
        )
        for node, text in zip(fields, texts, strict=True):
            node.text = str(text[0]) if text else None

    async def _details(
        self,
        structure: Structure,
        nodes: list[RawNode],
        limits: TreeLimits,
        deadline: float,
        *,
        rect_only: bool = False,
    ) -> str | None:
        """Read the details of `nodes`; why the read is incomplete, if it is."""
        if structure.stalled:
            return structure.truncated_reason  # an application that stopped is not asked more
        stopped = await read_details(self.bus, nodes, limits, deadline, rect_only=rect_only)
        return structure.truncated_reason or stopped

    async def describe(self, node_id: str, window: WindowInfo) -> UiNode:
        """One node of `window` with its rectangle (on screen), actions and text (no
        children)."""
        ref = parse_node_id(node_id)
        await self._connected()
        node = await fetch_node(self.bus, ref)
        if node is None:
            raise NodeGone(f"control {node_id} no longer exists")
        await read_details(self.bus, [node], TreeLimits(), time.monotonic() + self.call_timeout)
        frame = await self.find_frame(window, showing_only=True)
        if frame is not None:
            placement = await self.placement(window, frame)
            finish(Structure(nodes={ref: node}, root=ref), placement, frame.gtk4)
        node.children = []
        return build_tree({ref: node}, ref)

    async def placement(self, window: WindowInfo, frame: Frame) -> Placement:
        """How the rectangles `window`'s application reports map to the screen: its frame's
        rectangle against where the display server says the window's content is. The frame's
        rectangle read here is not read again by the same read."""
        node = frame.node
        if node.rect is None and not node.rect_read:
            node.rect, node.rect_read = await extents(self.bus, node.ref), True
        try:
            content = self.content(window)
        except PositionsUnknown:  # the rectangles stay the application's; pointer actions
            return IDENTITY  # on them are refused (acting.py), marks are not drawn
        return place(node.rect, content, window.rect)

    # ------------------------------------------------------------ the application

    async def toolkit(self, node_id: str) -> Toolkit:
        return await self.frames.toolkit(await self._connected(), parse_node_id(node_id)[0])

    def announcing(self, window_id: int) -> Announcing | None:
        """The application of a window read before, as the settle watches it."""
        app = self.frames.app_of(window_id)
        heard = self.announcements
        if app is None or heard is None or not heard.listening:
            return None
        return Announcing(heard.changes(app), partial(heard.settled, app))

    # ------------------------------------------------------------ finding the window

    @property
    def register_grace(self) -> float:
        """Seconds after its start an app may take to register (see FrameFinder)."""
        return self.frames.register_grace

    @register_grace.setter
    def register_grace(self, seconds: float) -> None:
        self.frames.register_grace = seconds

    async def applications(self) -> list[str]:
        """Bus names of the applications registered on the desktop."""
        return await self.frames.applications(await self._connected())

    async def find_frame(self, window: WindowInfo, *, showing_only: bool = False) -> Frame | None:
        """The window's AT-SPI frame; None when its application exposes no tree. Its
        application is called on its own socket from then on, where it offers one. With
        `showing_only`, the frame's cache may be left empty (atspi_frames.SLOW_CACHE)."""
        bus = await self._connected()
        frame = await self.frames.find(bus, window, showing_only=showing_only)
        if frame is not None:
            await bus.connect_direct(frame.app)
        return frame
