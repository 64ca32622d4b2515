"""Reading a Look (effects.py) off the desktop: the window list, and through AT-SPI the
showing nodes of one window and the text of one control.

It runs twice for every action, so it is bounded: a node and time limit on the tree, a
stretch of text around the caret. What cannot be read (no bus, an application that does
not answer, a control gone) is left out of the look and logged; the action still stands.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace

from roundhouse.devices.contract import WindowInfo
from roundhouse.devices.linux.action.effects import Look, NodeSeen, TextSeen
from roundhouse.devices.linux.atspi.bus import AtspiError
from roundhouse.devices.linux.atspi.node import TreeLimits
from roundhouse.devices.linux.atspi.seam import AccessibleTree, TextRead

log = logging.getLogger(__name__)

# A look must not slow every action down: what a window shows past these is not compared.
LOOK_LIMITS = TreeLimits(max_nodes=2000, time_limit=1.0)
# Finding the window's frame is outside those limits: a hung application would hold each
# look for the bus's whole call timeout. Past this, the look goes without the tree.
LOOK_TIMEOUT = 1.5
TEXT_LIMIT = 2000  # characters of a control's text read, around its caret
_SECRET_ROLES = frozenset({"password text"})


@dataclass(frozen=True)
class TextOf:
    """The control whose text a look reads."""

    node: str
    control: str  # how a line names it: "'Your name' (text)"
    secret: bool = False

    @classmethod
    def seen(cls, text: TextSeen) -> TextOf:
        return cls(text.node, text.control, text.secret)

    def holding(self, read: TextRead) -> TextSeen:
        return TextSeen(self.node, self.control, read.text, read.start, read.length, self.secret)

    @classmethod
    def of(cls, node: str, role: str, name: str) -> TextOf:
        return cls(node, NodeSeen(role, name).brief(), role in _SECRET_ROLES)


async def look(
    listed: Sequence[WindowInfo],
    tree: AccessibleTree | None,
    window: WindowInfo | None,
    *,
    text_of: TextOf | None = None,
    focused_text: bool = False,
    text_limit: int = TEXT_LIMIT,
    controls: bool = True,
    fresh: bool = False,
) -> Look:
    """The windows `listed` (the caller lists them, once for all that needs them); the
    showing nodes of `window` (default: the active one), unless not `controls`; and the
    text of `text_of`. With `focused_text`, the text of the focused control when it is
    editable, where no `text_of` is given or its text cannot be read: Writer's document
    has no text of its own, and what is typed into it goes into its focused paragraph.
    The showing nodes are those read last where nothing changed since, unless `fresh`."""
    if window is None:
        window = next((w for w in listed if w.active), None)
    if window is None or tree is None or not controls:
        return Look(tuple(listed), window.xid if window else None)
    seen = Look(tuple(listed), window.xid, *await _nodes(tree, window, fresh))
    if text_of is not None:
        text = await _text(tree, text_of, text_limit)
        if text is not None or not focused_text:
            return replace(seen, text=text)
    focused = seen.focused
    if not focused_text or seen.nodes is None or focused is None:
        return seen
    node = seen.nodes[focused]
    if "editable" not in node.states or (text_of is not None and text_of.node == focused):
        return seen
    return replace(
        seen, text=await _text(tree, TextOf.of(focused, node.role, node.name), text_limit)
    )


async def _nodes(
    tree: AccessibleTree, window: WindowInfo, fresh: bool
) -> tuple[dict[str, NodeSeen] | None, bool]:
    try:
        async with asyncio.timeout(LOOK_TIMEOUT):
            read = await tree.showing_nodes(window, LOOK_LIMITS, fresh=fresh)
    except TimeoutError:
        log.info("effect: the controls of %r took over %g s", window.title, LOOK_TIMEOUT)
        return None, False
    except AtspiError as error:
        log.info("effect: the controls of %r could not be read: %s", window.title, error)
        return None, False
    if read is None:
        return None, False  # no tree: only the window list can show an effect
    nodes, complete = read
    seen = {
        node.id: NodeSeen(node.role, node.name, frozenset(node.states), node.text) for node in nodes
    }
    return seen, complete


async def _text(tree: AccessibleTree, text_of: TextOf, limit: int) -> TextSeen | None:
    try:
        async with asyncio.timeout(LOOK_TIMEOUT):
            read = await tree.read_text(text_of.node, limit)
    except TimeoutError:
        log.info("effect: the text of %s took over %g s", text_of.control, LOOK_TIMEOUT)
        return None
    except AtspiError as error:
        log.info("effect: the text of %s could not be read: %s", text_of.control, error)
        return None
    return text_of.holding(read)
