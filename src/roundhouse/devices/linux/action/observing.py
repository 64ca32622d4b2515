"""What the desktop tools see: the data-collection tools (screenshots, the tree, the windows,
the controls), over the connections of around.py; and the controls last listed per window,
by which acting.py finds the control a label names."""

from __future__ import annotations

import asyncio
import base64
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from roundhouse.devices.contract import Control, ControlList, UiNode, WindowInfo
from roundhouse.devices.linux.action.around import Around
from roundhouse.devices.linux.action.screenshots import (
    Screenshot,
    capture_desktop_png,
    capture_monitor_png,
    capture_window_png,
)
from roundhouse.devices.linux.apps.launcher import Applications, application_list
from roundhouse.devices.linux.atspi.bus import AtspiError, AtspiTimeout
from roundhouse.devices.linux.atspi.node import TreeLimits
from roundhouse.devices.linux.atspi.tree import keep_numbers, ui_tree_json

log = logging.getLogger(__name__)
Shot = TypeVar("Shot")
T = TypeVar("T")

_MAX_LISTED = 60  # controls named in an error message


class ToolError(RuntimeError):
    """A bad request from the model; the message says what exists instead."""


class Observing:
    """The data-collection tools, over the connections of `around`."""

    def __init__(self, around: Around) -> None:
        self.around = around
        self._controls: dict[int, ControlList] = {}  # the latest get_controls per window
        # Screenshots are grabbed, marked and encoded here, one at a time: off the event
        # loop (an MCP server's other requests go on), but not side by side (each holds a
        # screen's pixels; 20 clients at once grew the server by 74 MB in threads of its
        # own each).
        self._shooter = ThreadPoolExecutor(max_workers=1, thread_name_prefix="roundhouse-shot")

    def close(self) -> None:
        self._shooter.shutdown(wait=True)

    # ------------------------------------------------------------ data collection

    async def capture_desktop_screenshot(
        self, path: str | None = None, annotate: bool = False, monitor: int | None = None
    ) -> dict[str, Any]:
        """Take a PNG screenshot of the whole desktop, or of one monitor.

        annotate: draw a numbered box on each control of the active window (the labels
        of get_controls, which this reads afresh).
        path: file to write the PNG to; without it the PNG is returned as base64.
        monitor: a monitor's number (1, 2, ... left to right), for its own pixels; the
        result lists the monitors, where each is on the desktop and its scale.
        """
        controls: list[Control] = []
        if annotate and self.around.positions_known():
            controls = (await self.read_controls(self.around.sight().window(None))).controls
        # A monitor's own pixels, or the whole desktop's (in the pixels windows speak).
        if monitor is None:
            result = await self._shoot(
                lambda: _shot_result(capture_desktop_png(self.around.screen, controls), path)
            )
        else:
            shot, shown = await self._shoot(
                lambda: capture_monitor_png(self.around.screen, monitor, controls)
            )
            result = {**_shot_result(shot, path), "scale": shown.scale}
        result["monitors"] = [one.as_json() for one in self.around.screen.monitors()]
        if annotate:
            result["annotated_controls"] = len(controls)
        return result

    async def capture_window_screenshot(
        self,
        window_id: int | None = None,
        path: str | None = None,
        annotate: bool = False,
        as_listed: bool = False,
    ) -> dict[str, Any]:
        """Take a PNG screenshot of one window (default: the active window).

        annotate: draw a numbered box on each control; the numbers are the labels of
        get_controls, which this reads afresh for the window, or with as_listed those of
        the last get_controls of the window (the list a model was given).
        path: file to write the PNG to; without it the PNG is returned as base64.
        """
        window = self.around.sight().window(window_id)
        controls: list[Control] = []
        if annotate and self.around.positions_known():
            # A window still filling its toolbar (Writer at start) renumbers between two
            # reads: the boxes must carry the numbers of the list the model reads.
            listed = self.last_listed(window) if as_listed else None
            controls = (listed or await self.read_controls(window)).controls
        result = await self._shoot(
            lambda: _shot_result(capture_window_png(self.around.screen, window, controls), path)
        )
        result["window_id"] = window.xid
        if annotate:
            result["annotated_controls"] = len(controls)
        return result

    async def _shoot(self, shot: Callable[[], Shot]) -> Shot:
        return await asyncio.get_running_loop().run_in_executor(self._shooter, shot)

    async def get_ui_tree(self, window_id: int | None = None, max_nodes: int = 5000) -> Any:
        """Read the accessibility tree of a window (default: the active one) as JSON.

        Its shape: {"root": {control_type, name, automation_id, bounding_box, children, ...}}.
        """
        window = self.around.sight().window(window_id)
        if self.around.tree is None:
            raise ToolError("no accessibility bus on this desktop; use screenshots")
        snapshot = await self.around.tree.ui_tree(window, TreeLimits(max_nodes=max_nodes))
        return ui_tree_json(snapshot)

    async def list_applications(self) -> list[str]:
        """List the applications launch_application can start, as people know them, with
        what each is for: "gedit — Text Editor".

        Launch one by its name (before the dash) or by what it is ("text editor").
        """
        apps = await asyncio.to_thread(Applications.load, self.around.desktop.env)
        return application_list(apps)

    async def list_windows(self) -> list[dict[str, Any]]:
        """List the top-level windows with their id, title, application, pid, rectangle and
        whether each is active."""
        return [window.model_dump(mode="json") for window in self.around.windows.list_windows()]

    async def get_controls(self, window_id: int | None = None) -> dict[str, Any]:
        """List the interactive controls a person sees in a window (default: the active one),
        numbered by `label` in reading order, with role, name, rectangle and actions."""
        window = self.around.sight().window(window_id)
        return (await self.read_controls(window)).model_dump(mode="json")

    # ------------------------------------------------------------ controls

    def last_listed(self, window: WindowInfo) -> ControlList | None:
        """The window's controls as last listed (what a model was given), if they were."""
        return self._controls.get(window.xid)

    async def read_controls(self, window: WindowInfo) -> ControlList:
        if self.around.tree is None:
            note = "no accessibility bus on this desktop; use screenshots and coordinates"
            listed = ControlList(window=window, controls=[], tree_available=False, note=note)
        else:
            try:
                listed = keep_numbers(
                    self._controls.get(window.xid),
                    await self.around.tree.controls(window, fresh=not self.around.witnessed),
                )
            except AtspiTimeout as error:
                # A hung application: say so, as what was seen, rather than fail the look.
                name = window.application or window.title or "the application"
                reason = f"not responding: {name} did not answer ({error})"
                listed = ControlList(
                    window=window,
                    controls=[],
                    truncated=True,
                    truncated_reason=reason,
                    responding=False,
                )
        self._controls[window.xid] = listed
        return listed

    async def control(
        self, label: int | None, control_id: str | None, window: WindowInfo
    ) -> Control:
        """The control of `window` named by its label in the last get_controls (read now if
        there was none) or by its node id."""
        if (label is None) == (control_id is None):
            raise ToolError("give exactly one of label (from get_controls) or control_id")
        listed = self.last_listed(window) or await self.read_controls(window)
        for control in listed.controls:
            if control.label == label or control.id == control_id:
                return control
        if control_id is not None and self.around.tree is not None:
            # A node id from get_ui_tree need not be among the numbered controls.
            try:
                node = await self.around.tree.describe(control_id, window)
            except AtspiError as error:  # gone, or not an id at all: list what exists
                log.info("control %s: %s", control_id, error)
            else:
                return _placed(node, window)
        wanted = f"label {label}" if label is not None else f"id {control_id!r}"
        raise ToolError(
            f"no control with {wanted} in window {window.xid} {window.title!r}; "
            f"controls: {_list_controls(listed)}"
        )


def _placed(node: UiNode, window: WindowInfo) -> Control:
    if node.rect is None:
        raise ToolError(f"control {node.id} ({node.role}) is not on screen in {window.title!r}")
    return Control(
        label=0,
        id=node.id,
        role=node.role,
        name=node.name,
        rect=node.rect,
        actions=node.actions,
        text=node.text,
    )


def brief(control: Control) -> str:
    return f"{control.label} {control.name!r} ({control.role})"


def _list_controls(listed: ControlList) -> str:
    if not listed.controls:
        return listed.note or "none"
    shown = [brief(control) for control in listed.controls[:_MAX_LISTED]]
    more = len(listed.controls) - len(shown)
    return "; ".join(shown) + (f"; and {more} more" if more > 0 else "")


def _shot_result(shot: Screenshot, path: str | None) -> dict[str, Any]:
    result: dict[str, Any] = {
        "width": shot.width,
        "height": shot.height,
        "rect": shot.rect.as_list(),
        "method": shot.method,
    }
    if path is not None:
        result["path"] = str(shot.save(Path(path)))
    else:
        result["png_base64"] = base64.b64encode(shot.png).decode("ascii")
    return result
