"""The desktop's accessibility tree as OSWorld's VM server writes it (its /accessibility),
read with roundhouse's bulk reader.

OSWorld's format, in our words: a root element `desktop-frame` holding one element per
application; every accessible object is an element named, and read, by OSWorld's tree rules
(tree_rules.py: its tag, states, text, where it is placed, how deep and wide the walk goes).
It carries:
- `name`; each state as st:NAME="true"; each object attribute as attr:KEY;
- for an object placed on screen that has a Component, cp:screencoord "(x, y)" and
  cp:size "(w, h)";
- image="true" / selection="true" for those interfaces; a Value's val:value, val:min,
  val:max, val:step; an Action's act:NAME_desc and act:NAME_kb per action;
- its text as the element's text. Where OSWorld walks one call
at a time (with pyatspi), here the structure comes from each application's cache and the
details are asked pipelined; a container that manages its descendants (a Calc sheet) is
read where it is in view, as OSWorld reads only a sheet's showing cells.
"""

from __future__ import annotations

import asyncio
import re
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from typing import Any

from roundhouse.devices.contract import Rect
from roundhouse.devices.linux.atspi.bus import AtspiBus, AtspiTimeout, Ref, WindowGone, answered
from roundhouse.devices.linux.atspi.client import AtspiClient
from roundhouse.devices.linux.atspi.constants import (
    ACTION,
    COMPONENT,
    COORD_SCREEN,
    GET_ACTIONS,
    GET_ATTRIBUTES,
    GET_CHILDREN,
    GET_EXTENTS,
    GET_PROPERTY,
    REGISTRY_BUS,
    ROOT_PATH,
    SELECTION,
    TEXT,
    VALUE,
)
from roundhouse.devices.linux.atspi.fetch import fetch_node, load_cache
from roundhouse.devices.linux.atspi.node import RawNode, TreeLimits
from roundhouse.devices.linux.atspi.props import read_text
from roundhouse.devices.linux.atspi.read import read_structure
from roundhouse.osworld.namespaces import NS
from roundhouse.osworld.tree_rules import MAX_DEPTH, MAX_WIDTH, placed, shown_text, state_name, tag

IMAGE = "org.a11y.atspi.Image"
LIMITS = TreeLimits(max_depth=MAX_DEPTH, max_nodes=50_000, time_limit=20.0, text_limit=10**7)
# Characters XML 1.0 cannot hold (OSWorld's lxml refuses them): dropped.
NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")

for _prefix, _uri in NS.items():
    ET.register_namespace(_prefix, _uri)


# Applications that stand in for the VM's, named as the VM's are: Chromium runs for Google
# Chrome, and OSWorld's evaluators select "application[name=Google\ Chrome]".
STAND_INS = {"Chromium": "Google Chrome"}


@dataclass
class Details:
    attributes: dict[str, str]
    extents: tuple[int, int, int, int] | None
    text: str
    values: dict[str, str]
    actions: list[tuple[str, str, str]]


async def desktop_xml(client: AtspiClient, screen: Rect) -> str:
    """The whole desktop's tree, as OSWorld's /accessibility answers it (its "AT" value)."""
    bus = client.bus
    root = ET.Element("desktop-frame")
    (children,) = await bus.call((REGISTRY_BUS, ROOT_PATH), GET_CHILDREN)
    apps = [str(child[0]) for child in children]
    trees = await asyncio.gather(*(_app_xml(bus, app, screen) for app in apps))
    for tree in trees:
        if tree is not None:
            if tree.get("name") in STAND_INS:
                tree.set("name", STAND_INS[tree.get("name", "")])
            root.append(tree)
    return ET.tostring(root, encoding="unicode")


async def _app_xml(bus: AtspiBus, app: str, screen: Rect) -> ET.Element | None:
    try:
        await bus.connect_direct(app)
        cache = await load_cache(bus, app)
        ref = (app, ROOT_PATH)
        top = cache.get(ref) or await fetch_node(bus, ref)
        if top is None:
            return None
        structure = await read_structure(
            bus,
            top,
            cache,
            LIMITS,
            lambda node: True,
            time.monotonic() + LIMITS.time_limit,
            area=screen,
        )
        nodes = structure.nodes
        details = await asyncio.gather(*(_details(bus, node) for node in nodes.values()))
    except (WindowGone, AtspiTimeout):
        return None  # an application that left (or froze) while the desktop was read
    known = dict(zip(nodes, details, strict=True))
    return _element(nodes, known, structure.root, depth=1)


def _element(
    nodes: dict[Ref, RawNode], details: dict[Ref, Details], ref: Ref, depth: int
) -> ET.Element:
    node, about = nodes[ref], details[ref]
    attrib = {"name": _xml(node.name)}
    for state in node.states:
        attrib[f"{{{NS['st']}}}{state_name(state)}"] = "true"
    for key, value in about.attributes.items():
        if key and _is_name(key):
            attrib[f"{{{NS['attr']}}}{key}"] = _xml(value)
    if about.extents is not None:
        x, y, width, height = about.extents
        attrib[f"{{{NS['cp']}}}screencoord"] = f"({x}, {y})"
        attrib[f"{{{NS['cp']}}}size"] = f"({width}, {height})"
    if IMAGE in node.interfaces:
        attrib["image"] = "true"
    if SELECTION in node.interfaces:
        attrib["selection"] = "true"
    for key, value in about.values.items():
        attrib[f"{{{NS['val']}}}{key}"] = value
    for name, description, binding in about.actions:
        action = name.replace(" ", "-")
        if _is_name(action + "_desc"):
            attrib[f"{{{NS['act']}}}{action}_desc"] = _xml(description)
            attrib[f"{{{NS['act']}}}{action}_kb"] = _xml(binding)
    element = ET.Element(tag(node.role), attrib)
    if about.text:
        element.text = _xml(about.text)
    if depth < LIMITS.max_depth:
        for child in (node.children or [])[:MAX_WIDTH]:
            if child in nodes:
                element.append(_element(nodes, details, child, depth + 1))
    return element


async def _details(bus: AtspiBus, node: RawNode) -> Details:
    interfaces = node.interfaces or await bus.interfaces(node.ref) or frozenset()
    node.interfaces = interfaces
    shown = placed(node.states)
    attributes, extents, text, values, actions = await asyncio.gather(
        bus.ask(node.ref, GET_ATTRIBUTES, (), _first_dict),
        bus.ask(node.ref, GET_EXTENTS, [COORD_SCREEN], _tuple)
        if shown and COMPONENT in interfaces
        else answered(None),
        read_text(bus, node.ref, LIMITS.text_limit) if TEXT in interfaces else answered(None),
        _values(bus, node.ref) if VALUE in interfaces else answered(None),
        bus.ask(node.ref, GET_ACTIONS, (), _actions) if ACTION in interfaces else answered(None),
    )
    return Details(
        attributes=attributes or {},
        extents=extents,
        text=shown_text(text or ""),
        values=values or {},
        actions=actions or [],
    )


def _first_dict(body: list[Any]) -> dict[str, str]:
    return {str(k): str(v) for k, v in body[0].items()}


def _tuple(body: list[Any]) -> tuple[int, int, int, int]:
    x, y, width, height = body[0]
    return int(x), int(y), int(width), int(height)


VALUE_KEYS = (
    ("value", "CurrentValue"),
    ("min", "MinimumValue"),
    ("max", "MaximumValue"),
    ("step", "MinimumIncrement"),
)


async def _values(bus: AtspiBus, ref: Ref) -> dict[str, str]:
    """The Value interface's numbers, each asked alone (as pyatspi, under OSWorld's server,
    asks them): Chromium's bridge aborts the whole browser on a GetAll of this interface
    (it writes a malformed a{sv} answer, which libdbus refuses by aborting)."""
    asked = await asyncio.gather(
        *(bus.ask(ref, GET_PROPERTY, [VALUE, theirs], _number) for _, theirs in VALUE_KEYS)
    )
    return {ours: str(n) for (ours, _), n in zip(VALUE_KEYS, asked, strict=True) if n is not None}


def _number(body: list[Any]) -> float:
    value = body[0]
    return float(getattr(value, "value", value))


def _actions(body: list[Any]) -> list[tuple[str, str, str]]:
    return [(str(a[0]), str(a[1]), str(a[2])) for a in body[0]]


def _xml(text: str) -> str:
    return NOT_XML.sub("", text)


_NAME = re.compile(r"^[A-Za-z_][\w.-]*$")


def _is_name(key: str) -> bool:
    """Whether it can be an XML attribute's name (OSWorld's lxml would refuse others)."""
    return bool(_NAME.match(key))


# GNOME Terminal's name on the accessibility bus: its server's program name in 3.46
# (Debian 12), its application id in 3.56 (Debian 13).
TERMINAL_APPS = frozenset({"gnome-terminal-server", "org.gnome.Terminal"})


def terminal_text(tree: str) -> str | None:
    """What OSWorld's /terminal answers: the text of the focused terminal in GNOME Terminal's
    active window, right-stripped; None when there is no such window or not one terminal."""
    root = ET.fromstring(tree)
    active = f"{{{NS['st']}}}active"
    focused = f"{{{NS['st']}}}focused"
    found = [
        terminal
        for app in root.iter("application")
        if app.get("name") in TERMINAL_APPS
        for frame in app.findall("frame")
        if frame.get(active) == "true"
        for terminal in frame.iter("terminal")
        if terminal.get(focused) == "true"
    ]
    return (found[0].text or "").rstrip() if len(found) == 1 else None
