"""The routes an action takes to a control: its accessibility action, EditableText, Value
and GrabFocus where it offers them, the pointer where it holds a press first (pointing.py)
or offers nothing else, and text the layout cannot type inserted at the caret. Each says
whether it got there, or logs why not, so acting.py falls back to the next."""

from __future__ import annotations

import asyncio
import logging
from typing import Literal

from roundhouse.core.polling import within_async
from roundhouse.devices.contract import Control, WindowInfo
from roundhouse.devices.linux.action.around import Around, Sight
from roundhouse.devices.linux.action.observing import Observing, brief
from roundhouse.devices.linux.action.pointing import holds_press, pointer_refusal
from roundhouse.devices.linux.atspi.bus import AtspiError
from roundhouse.devices.linux.atspi.constants import COMPONENT, TEXT
from roundhouse.devices.linux.display.base import PositionsUnknown
from roundhouse.devices.linux.display.keys import LayoutError

log = logging.getLogger(__name__)

FOCUS_WAIT = 1.0  # seconds type_text waits for the control it clicked to take the focus
CARET_WAIT = 0.5  # seconds it waits for the click to move the caret of a text


class Routes:
    """The routes to a control, on `around`'s tree and pointer; `observing` names the
    focused control where text is inserted without one."""

    def __init__(self, around: Around, observing: Observing) -> None:
        self.around = around
        self.observing = observing

    async def pointer_first(self, control: Control, window: WindowInfo, sight: Sight) -> bool:
        """Whether the pointer clicks the control in place of its action: where the action
        holds a press first and the pointer is sure to land on it (pointing.py)."""
        if (
            not self.around.pointer_clicks
            or self.around.tree is None
            or not self.around.positions_known()
        ):
            return False
        try:
            toolkit = await self.around.tree.toolkit(control.id)
        except AtspiError as error:
            log.info("%s: toolkit not known (%s); its action clicks", brief(control), error)
            return False
        if not holds_press(toolkit.name, toolkit.version):
            return False
        above = await asyncio.to_thread(self.around.windows.above, window.xid)
        refused = pointer_refusal(control, window, sight.listed(), self.around.screen.size, above)
        if refused is not None:
            log.info("%s: clicked by its action: %s", brief(control), refused)
        return refused is None

    async def do_action(self, control: Control, action: str) -> bool:
        """Whether the control's named action was done; one it refuses (or lacks) is
        logged, and the pointer clicks instead."""
        if self.around.tree is None:
            return False
        try:
            return await self.around.tree.do_action(control.id, action)
        except AtspiError as error:
            log.info("%s: action %r failed (%s); clicking instead", brief(control), action, error)
            return False

    async def insert(self, sight: Sight, text: str, control: Control | None) -> str:
        """Text the session's keyboard layout cannot type (a Wayland session reads keys
        with its own keymap), inserted at the caret of the control (else of the focused
        one) through the accessibility tree: the route taken. LayoutError again where
        there is none."""
        if control is None and self.around.tree is not None:
            listed = await self.observing.read_controls(sight.window(None))
            control = next((c for c in listed.controls if "focused" in c.states), None)
        if control is None or self.around.tree is None:
            raise LayoutError(
                f"the keyboard layout cannot type {text!r}, and no focused text field takes "
                "it otherwise: name the field, or use set_text"
            )
        try:
            inserted = await self.around.tree.insert_text(control.id, text)
        except AtspiError as error:
            raise LayoutError(
                f"the keyboard layout cannot type {text!r}, and {brief(control)} takes no "
                f"inserted text ({error}): use set_text"
            ) from None
        if not inserted:
            raise LayoutError(f"{brief(control)} refused the text {text!r}: use set_text")
        return "editable-text"

    async def interfaces(self, control: Control) -> frozenset[str]:
        if self.around.tree is None:
            return frozenset()
        try:
            return await self.around.tree.interfaces(control.id)
        except AtspiError as error:
            log.info("%s: interfaces not read (%s)", brief(control), error)
            return frozenset()

    async def set_editable(self, control: Control, text: str) -> bool:
        assert self.around.tree is not None  # (it had interfaces)
        try:
            return await self.around.tree.set_text(control.id, text)
        except AtspiError as error:
            log.info("%s: EditableText refused (%s); typing instead", brief(control), error)
            return False

    async def set_value(self, control: Control, value: float) -> bool:
        assert self.around.tree is not None  # (it had interfaces)
        try:
            await self.around.tree.set_value(control.id, value)
        except AtspiError as error:
            log.info("%s: Value not set (%s); typing instead", brief(control), error)
            return False
        return True

    async def focus(self, control: Control, found: frozenset[str]) -> Literal["focus", "pointer"]:
        """Give the control the keyboard focus: none to give where it has it already (the
        caret stays where it is, and no pointer is needed: a person's GNOME before `setup`
        has none), through Component.GrabFocus where it offers it and then says it is
        focused (the caret stays where it was), else with a click on its centre (GTK 4
        refuses GrabFocus)."""
        if await self._has_focus(control):
            return "focus"
        if self.around.tree is not None and COMPONENT in found:
            try:
                grabbed = await self.around.tree.grab_focus(control.id)
            except AtspiError as error:
                log.info("%s: GrabFocus refused (%s); clicking it", brief(control), error)
                grabbed = False
            if grabbed and await self._focus_taken(control):
                return "focus"
        caret = await self._caret(control) if TEXT in found else None
        await asyncio.to_thread(self.around.input.click, *self.position(control))
        await self._focus_taken(control)
        if caret is not None:
            await self._caret_moved(control, caret)
        return "pointer"

    def position(self, control: Control) -> tuple[int, int]:
        """Where the pointer acts on a control: its centre on the screen. Refused at once,
        naming the fix, where the session does not say where its windows are (a person's
        GNOME before `roundhouse setup gnome`): the rectangle is then the application's
        own, and a click there would land anywhere."""
        for missing in self.around.display.missing:
            if isinstance(missing, PositionsUnknown):
                raise PositionsUnknown(
                    f"{brief(control)} cannot be clicked by the pointer: {missing} (its "
                    "accessibility action, set_text and keys still work)",
                    missing.fix,
                )
        return control.rect.center

    async def _caret(self, control: Control) -> int | None:
        assert self.around.tree is not None  # (it had interfaces)
        try:
            return await self.around.tree.caret(control.id)
        except AtspiError as error:
            log.info("%s: no caret to watch (%s)", brief(control), error)
            return None

    async def _caret_moved(self, control: Control, before: int) -> None:
        """Wait (up to CARET_WAIT s) for a click in a text to move its caret: GTK 4 places it
        a moment after the click, and keys typed at once went where it was before ("more"
        typed into GNOME Text Editor became "m" at the start and "ore" at the end). A click
        where the caret already was moves nothing: then the time is up."""

        async def moved() -> bool:
            return await self._caret(control) != before

        await within_async(moved, CARET_WAIT)

    async def _has_focus(self, control: Control) -> bool:
        if self.around.tree is None:
            return False
        try:
            return "focused" in await self.around.tree.states(control.id)
        except AtspiError:
            return False  # then it is given the focus, as a control that never says so is

    async def _focus_taken(self, control: Control) -> bool:
        """Wait (up to FOCUS_WAIT s) for a control given the focus to say it has it: whether
        it did. Chromium moves the focus a moment after the click: keys typed at once went
        to the field focused before ("Ada" lost its "Ad"). A control that never says so (or
        has no states to ask) is typed into when the time is up."""
        tree = self.around.tree
        if tree is None:
            return False

        async def said() -> Literal["focused", "unknown"] | None:
            try:
                return "focused" if "focused" in await tree.states(control.id) else None
            except AtspiError as error:
                log.info("typing into %s without knowing its focus: %s", brief(control), error)
                return "unknown"  # asking again would not tell

        return await within_async(said, FOCUS_WAIT) == "focused"
