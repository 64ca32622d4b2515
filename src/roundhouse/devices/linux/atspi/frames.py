"""Matching a window manager's window to its AT-SPI frame.

The application is the one whose bus name belongs to the window's pid; among its top-level
objects the frame is the one whose title (and rectangle) match. A match is remembered per X
window id, so later reads skip the search while the frame lives.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

from roundhouse.core.polling import within_async
from roundhouse.devices.contract import Rect, WindowInfo
from roundhouse.devices.linux.atspi.bus import AtspiBus, NodeGone, Ref, WindowGone
from roundhouse.devices.linux.atspi.constants import (
    APPLICATION,
    GET_CHILDREN,
    GET_PROPERTY,
    REGISTRY_BUS,
    ROOT_PATH,
)
from roundhouse.devices.linux.atspi.fetch import fetch_node, load_cache, read_details
from roundhouse.devices.linux.atspi.layout import intersection
from roundhouse.devices.linux.atspi.node import RawNode, TreeLimits
from roundhouse.devices.linux.atspi.placement import place
from roundhouse.devices.linux.system.procfs import process_age

REGISTER_GRACE = 5.0  # seconds after its start an app may still be registering
# An application whose cache takes longer than SLOW_CACHE to list more than BIG_CACHE
# objects is walked instead, on reads of what shows: LibreOffice lists ~1,100 objects (its
# closed menus' items among them) in ~150 ms of its CPU, where a walk of the ~250 that show
# costs it ~75 ms (Writer 247 -> 130 ms a read, Calc 427 -> 246). GTK's and Chromium's
# caches answer in under 10 ms, and beat the walk (gedit 15 against 19 ms).
SLOW_CACHE = 0.04  # seconds
BIG_CACHE = 500  # objects
# Toolkits whose cache holds their interface, not a document: only theirs is asked on reads
# of what shows. Chromium's holds every object of the page it has handed out: 25,000 for
# a table of 2,500 rows, ~1 s to list, where what shows of it is read in ~100 ms.
CACHED_TOOLKITS = frozenset({"gtk"})  # GTK 3 (at-spi2-atk, LibreOffice's too) and GTK 4
TOP_ROLES = frozenset({"frame", "window", "dialog", "alert"})  # a top-level's roles


@dataclass
class Frame:
    """A window's top-level accessible object, with its application's cache."""

    app: str  # the application's bus name
    node: RawNode
    cache: dict[Ref, RawNode]  # empty where the application's is walked instead
    # It implements Properties.GetAll: it speaks ATK, which fills a cache (Qt does neither).
    # A walk then asks name, description and child count in one call, not three.
    get_all: bool
    # Its objects never say "showing" (GTK 4.8 marks every object "visible" and only its
    # windows "showing"): what shows is what has a rectangle of some size (read_structure).
    showing_from_extents: bool = False
    gtk4: bool = False  # its names need tidying (atspi_names.gtk4_name)


@dataclass(frozen=True)
class Toolkit:
    """What an application's Application interface says it is built with."""

    name: str  # "gtk" (GTK 3's bridge), "GTK" (GTK 4), "Qt", "Chromium", ...
    version: str

    @property
    def gtk4(self) -> bool:
        """GTK 4 places its objects relative to its window, whatever coordinates are asked
        for: 4.8 answers the screen's as the window's, later versions (0, 0) for every
        object. It is asked for its window's (atspi_props.coord_type)."""
        return self.name.lower() == "gtk" and self.version.split(".", 1)[0] == "4"


class FrameFinder:
    def __init__(self, register_grace: float = REGISTER_GRACE) -> None:
        self.register_grace = register_grace
        self._pids: dict[str, int | None] = {}  # unique bus names are never reused
        self._frames: dict[int, tuple[str, Ref]] = {}  # X window id -> (app, frame)
        self.walked: set[str] = set()  # apps whose cache costs more than walking them
        self._toolkits: dict[str, Toolkit] = {}
        # Apps whose objects never say "showing" (see Frame), decided from a whole cache.
        self._unmarked: dict[str, bool] = {}

    def app_of(self, xid: int) -> str | None:
        """The bus name of the application whose frame window `xid` was matched to."""
        known = self._frames.get(xid)
        return None if known is None else known[0]

    async def applications(self, bus: AtspiBus) -> list[str]:
        """Bus names of the applications registered on the desktop."""
        (children,) = await bus.call((REGISTRY_BUS, ROOT_PATH), GET_CHILDREN)
        return [str(child[0]) for child in children]

    async def app_pid(self, bus: AtspiBus, app: str) -> int | None:
        if app not in self._pids:
            self._pids[app] = await bus.name_pid(app)
        return self._pids[app]

    async def find(
        self, bus: AtspiBus, window: WindowInfo, *, showing_only: bool = False
    ) -> Frame | None:
        """The window's AT-SPI frame; None when its application exposes no tree. For a read
        of what shows only, an application whose cache is slow to list is not asked it."""
        known = await self._known(bus, window, showing_only)
        if known is not None:
            return known
        frame = await self._search(bus, window, showing_only)
        if frame is not None:
            self._frames[window.xid] = (frame.app, frame.node.ref)
        return frame

    async def cache_of(self, bus: AtspiBus, app: str, showing_only: bool) -> dict[Ref, RawNode]:
        """The application's cache; none on a read of what shows where it is slow to list,
        or where its toolkit keeps a document's objects in it (CACHED_TOOLKITS): a new
        process's first read of a long page reads what is in view, not the page."""
        if showing_only and app in self.walked:
            return {}
        if showing_only and (await self.toolkit(bus, app)).name.lower() not in CACHED_TOOLKITS:
            return {}
        started = time.monotonic()
        cache = await load_cache(bus, app)
        if time.monotonic() - started > SLOW_CACHE and len(cache) > BIG_CACHE:
            self.walked.add(app)
        return cache

    async def _known(self, bus: AtspiBus, window: WindowInfo, showing_only: bool) -> Frame | None:
        """The frame matched to this X window before, if it still exists: one GetItems
        (or one node read) instead of a search through every application."""
        remembered = self._frames.get(window.xid)
        if remembered is None:
            return None
        app, ref = remembered
        try:
            if self._pids.get(app) != window.pid:
                raise NodeGone("another process")
            cache = await self.cache_of(bus, app, showing_only)
            node = cache.get(ref) or await fetch_node(bus, ref)
        except (WindowGone, NodeGone):
            node = None
        if node is None:
            del self._frames[window.xid]
            return None
        return await self._frame(bus, app, node, cache, await self._get_all(bus, app, cache))

    async def _frame(
        self, bus: AtspiBus, app: str, node: RawNode, cache: dict[Ref, RawNode], get_all: bool
    ) -> Frame:
        """The frame, with what its application's toolkit needs: GTK 4 is asked for its
        window's coordinates, and where it marks nothing "showing", shows by extents."""
        toolkit = await self.toolkit(bus, app)
        unmarked = False
        if toolkit.gtk4:
            bus.window_coords.add(app)
            if app not in self._unmarked and cache:
                inner = (item for item in cache.values() if item.role not in TOP_ROLES)
                self._unmarked[app] = not any("showing" in item.states for item in inner)
            unmarked = self._unmarked.get(app, True)
        return Frame(app, node, cache, get_all, showing_from_extents=unmarked, gtk4=toolkit.gtk4)

    async def _get_all(self, bus: AtspiBus, app: str, cache: dict[Ref, RawNode]) -> bool:
        """Whether the application implements Properties.GetAll: those that fill a cache
        speak ATK, which does, and so do Chromium's and GTK 4's bridges; Qt's does not."""
        if cache or app in self.walked:
            return True
        return (await self.toolkit(bus, app)).name.lower() not in {"qt", ""}

    async def toolkit(self, bus: AtspiBus, app: str) -> Toolkit:
        """The application's toolkit, asked once."""
        if app not in self._toolkits:
            root = (app, ROOT_PATH)
            name, version = await asyncio.gather(
                bus.call_or_none(root, GET_PROPERTY, [APPLICATION, "ToolkitName"]),
                bus.call_or_none(root, GET_PROPERTY, [APPLICATION, "Version"]),
            )
            self._toolkits[app] = Toolkit(
                str(name[0].value) if name else "", str(version[0].value) if version else ""
            )
        return self._toolkits[app]

    async def _search(self, bus: AtspiBus, window: WindowInfo, showing_only: bool) -> Frame | None:
        mine = await self._applications_of(bus, window.pid)
        best: tuple[int, tuple[str, RawNode, dict[Ref, RawNode]]] | None = None
        seen_titles: list[str] = []
        for app in mine:
            try:
                cache, tops, toolkit = await asyncio.gather(
                    self.cache_of(bus, app, showing_only),
                    _top_levels(bus, app),
                    self.toolkit(bus, app),
                )
            except WindowGone:
                if window.pid is not None:
                    raise
                continue  # another application closed while we looked
            if toolkit.gtk4:
                bus.window_coords.add(app)  # before its frames' rectangles are read
            nodes = await asyncio.gather(*(_top_node(bus, top, cache) for top in tops))
            for node in nodes:
                if node is None:
                    continue
                seen_titles.append(node.name)
                score = match_score(node, window)
                if score > 0 and (best is None or score > best[0]):
                    best = (score, (app, node, cache))
        if best is not None:
            app, node, cache = best[1]
            # (its rectangle, read to match it, is the application's: see atspi_placement)
            return await self._frame(bus, app, node, cache, await self._get_all(bus, app, cache))
        if not mine or window.pid is None:
            return None
        raise WindowGone(
            f"no accessible window matches {window.title!r} (pid {window.pid}); "
            f"its application shows: {seen_titles or 'no windows'}"
        )

    async def _applications_of(self, bus: AtspiBus, pid: int | None) -> list[str]:
        """The applications owning windows of `pid` (all of them when pid is unknown).

        An app registers with AT-SPI while it starts: a window of a process younger than
        `register_grace` seconds gets until then to appear, so a just-launched app is not
        mistaken for one without a tree.
        """

        async def registered() -> list[str] | None:
            apps = await self.applications(bus)
            if pid is None:
                return apps
            pids = await asyncio.gather(*(self.app_pid(bus, app) for app in apps))
            mine = [app for app, owner in zip(apps, pids, strict=True) if owner == pid]
            if mine:
                return mine
            age = process_age(pid)
            if age is None:
                raise WindowGone(f"the window's process {pid} has exited")
            return [] if age > self.register_grace else None  # (older: it has no tree)

        return await within_async(registered, self.register_grace, every=0.05) or []


async def _top_node(bus: AtspiBus, ref: Ref, cache: dict[Ref, RawNode]) -> RawNode | None:
    node = cache.get(ref) or await fetch_node(bus, ref)
    if node is not None:
        await read_details(bus, [node], TreeLimits(), time.monotonic() + bus.timeout)
    return node


async def _top_levels(bus: AtspiBus, app: str) -> list[Ref]:
    reply = await bus.call((app, ROOT_PATH), GET_CHILDREN)
    return [(str(name), str(path)) for name, path in reply[0]]


def match_score(node: RawNode, window: WindowInfo) -> int:
    """How well an AT-SPI top-level matches a window manager's window (0: not at all)."""
    score = 0
    title, name = window.title.strip(), node.name.strip()
    if title and name == title:
        score += 4
    elif title and name and (name in title or title in name):
        score += 2
    if node.rect is not None and _overlap(_placed(node.rect, window), window.rect) > 0.8:
        score += 3
    if score and node.showing:
        score += 1
    return score


def _placed(frame: Rect, window: WindowInfo) -> Rect:
    """Where a frame would be on screen: one at (0, 0) may report its window's coordinates
    (GTK 4: a nameless "Replace?" dialog matches by its size, not its title)."""
    if frame.left != 0 or frame.top != 0:
        return frame
    return place(frame, window.rect, window.rect).to_screen(frame)


def _overlap(first: Rect, second: Rect) -> float:
    """Intersection over union of two rectangles."""
    shared = intersection(first, second)
    if shared.width <= 0 or shared.height <= 0:
        return 0.0
    area = shared.width * shared.height
    union = first.width * first.height + second.width * second.height - area
    return area / union if union > 0 else 0.0
