"""The desktop tools on the fake display, for unit tests: no X server, compositor or AT-SPI.

    fake = FakeDesktop()                       # display/fake.py: the screen, windows, input
    fake.open_window("Notes", controls=[FakeControl.text_field("Body", rect)])
    async with fake_tools(fake) as tools:      # the real DesktopTools
        result = await tools.type_text("hi", label=1)
    result["effect"]                           # "confirmed": the field holds "hi"

FakeTree answers what the tools ask of an accessibility tree (atspi/seam.py) from the fake
windows' controls, through the same pure reading as AT-SPI's (atspi/tree.py, controls.py:
which nodes are controls, their numbers in reading order, the states a person sees).
Without it (tree False) the tools run as on a desktop with no accessibility bus: then no
control can be named, and an action's effect is read from the window list alone.
"""

from __future__ import annotations

from roundhouse.config import Settings
from roundhouse.devices.contract import ControlList, UiNode, UiSnapshot, WindowInfo
from roundhouse.devices.linux.action.around import Around
from roundhouse.devices.linux.atspi.bus import AtspiError, NodeGone
from roundhouse.devices.linux.atspi.client import DISPLAY_ROLES
from roundhouse.devices.linux.atspi.constants import ACTION, COMPONENT, EDITABLE_TEXT, TEXT
from roundhouse.devices.linux.atspi.frames import Toolkit
from roundhouse.devices.linux.atspi.node import TreeLimits
from roundhouse.devices.linux.atspi.seam import Announcing, TextRead
from roundhouse.devices.linux.atspi.tree import select_view
from roundhouse.devices.linux.desktops.desktop import Desktop
from roundhouse.devices.linux.tools import DesktopTools
from roundhouse.testing.display import (
    TEXT_ROLES,
    FakeControl,
    FakeDesktop,
    FakeWindow,
)

__all__ = ["FakeTree", "fake_tools"]

_SHOWN = {"showing", "visible"}


def fake_tools(
    fake: FakeDesktop, settings: Settings | None = None, *, tree: bool = True
) -> DesktopTools:
    """DesktopTools on `fake`, with its FakeTree (or, without `tree`, no accessibility)."""
    width, height = fake.size
    desktop = Desktop(display="fake", env={}, width=width, height=height, virtual=False)
    accessible = FakeTree(fake) if tree else None
    return DesktopTools(
        Around(desktop, settings or Settings(), display=fake.server(), tree=accessible)
    )


class FakeTree:
    """The fake windows' controls as an accessibility tree (a seam.AccessibleTree): each
    window a frame, its controls the frame's children."""

    def __init__(self, desktop: FakeDesktop) -> None:
        self._desktop = desktop

    # ------------------------------------------------------------ reading

    async def ui_tree(
        self, window: WindowInfo, limits: TreeLimits | None = None, *, showing_only: bool = False
    ) -> UiSnapshot:
        root = self._root(window)
        if root is None:
            return UiSnapshot(window=window, root=None, node_count=0, tree_available=False)
        return UiSnapshot(window=window, root=root, node_count=1 + len(root.children))

    async def controls(
        self, window: WindowInfo, limits: TreeLimits | None = None, *, fresh: bool = False
    ) -> ControlList:
        root = self._root(window)
        if root is None:
            note = f"{window.application} exposes no accessibility tree"
            return ControlList(window=window, controls=[], tree_available=False, note=note)
        view = select_view(root, window.rect)
        return ControlList(
            window=window, controls=view.controls, context=view.context, dialog=view.dialog
        )

    async def showing_nodes(
        self, window: WindowInfo, limits: TreeLimits, *, fresh: bool = False
    ) -> tuple[list[UiNode], bool] | None:
        root = self._root(window)
        if root is None:
            return None
        # As AT-SPI's read (atspi/client.py): a text only where a field shows one, not a
        # paragraph's.
        shown = [
            child if child.role in DISPLAY_ROLES else child.model_copy(update={"text": None})
            for child in root.children
        ]
        return [root.model_copy(update={"children": []}), *shown], True

    async def describe(self, node_id: str, window: WindowInfo) -> UiNode:
        return _node(self._control(node_id))

    async def read_text(self, node_id: str, limit: int) -> TextRead:
        control = self._control(node_id)
        if TEXT not in await self.interfaces(node_id):
            raise AtspiError(f"control {node_id} has no Text")
        return TextRead(control.text[:limit], 0, len(control.text), control.caret)

    async def caret(self, node_id: str) -> int:
        return self._control(node_id).caret

    async def states(self, node_id: str) -> list[str]:
        return _node(self._control(node_id)).states

    async def interfaces(self, node_id: str) -> frozenset[str]:
        control = self._control(node_id)
        found = {COMPONENT}
        if control.actions:
            found.add(ACTION)
        if control.role in TEXT_ROLES and control.readable:
            found.add(TEXT)
        if control.editable_text:
            found.add(EDITABLE_TEXT)
        return frozenset(found)

    async def toolkit(self, node_id: str) -> Toolkit:
        xid = int(node_id.split("/")[1])
        return Toolkit(*next(w.toolkit for w in self._desktop.windows if w.xid == xid))

    def announcing(self, window_id: int) -> Announcing | None:
        return None  # the fake applications announce nothing: the settle compares pixels

    # ------------------------------------------------------------ acting

    async def do_action(self, node_id: str, action: str | None = None) -> bool:
        control = self._control(node_id)
        if not control.actions or (action is not None and action not in control.actions):
            raise AtspiError(f"control {node_id} has no action {action!r}")
        if control.on_press is not None:
            control.on_press()
        self._desktop.drew()
        return True

    async def set_text(self, node_id: str, text: str) -> bool:
        control = self._editable(node_id)
        control.text, control.caret = text, len(text)
        self._desktop.drew()
        return True

    async def insert_text(self, node_id: str, text: str) -> bool:
        control = self._editable(node_id)
        at = control.caret
        control.text = control.text[:at] + text + control.text[at:]
        control.caret = at + len(text)
        self._desktop.drew()
        return True

    async def set_value(self, node_id: str, value: float) -> None:
        raise AtspiError(f"control {node_id} has no Value")

    async def grab_focus(self, node_id: str) -> bool:
        control = self._control(node_id)
        if control.grabs_focus:
            self._desktop.focus(control)
            self._desktop.drew()
        return control.grabs_focus

    async def close(self) -> None:
        pass

    # ------------------------------------------------------------ finding

    def _root(self, info: WindowInfo) -> UiNode | None:
        window = self._window(info.xid)
        if window is None or not window.accessible:
            return None
        states = ["showing", "visible", "enabled"]
        if info.active:
            states.append("active")
        return UiNode(
            id=f"fake:/{window.xid}",
            role="frame",
            name=window.title,
            states=states,
            rect=window.rect,
            children=[_node(control) for control in window.controls],
        )

    def _window(self, xid: int) -> FakeWindow | None:
        return next((window for window in self._desktop.windows if window.xid == xid), None)

    def _control(self, node_id: str) -> FakeControl:
        for window in self._desktop.windows:
            for control in window.controls:
                if control.id == node_id:
                    return control
        raise NodeGone(f"control {node_id} no longer exists")

    def _editable(self, node_id: str) -> FakeControl:
        control = self._control(node_id)
        if not control.editable_text:
            raise AtspiError(f"control {node_id} has no EditableText")
        return control


def _node(control: FakeControl) -> UiNode:
    return UiNode(
        id=control.id,
        role=control.role,
        name=control.name,
        states=sorted(control.states | _SHOWN),
        rect=control.rect,
        actions=list(control.actions),
        text=control.text if control.role in TEXT_ROLES and control.readable else None,
    )
