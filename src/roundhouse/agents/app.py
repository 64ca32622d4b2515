"""The AppAgent: acts inside one application for the subtask the host gave it.

Each step it looks at its window (the application's dialog in front, when there is one):
the numbered control list and the annotated screenshot. The model names a control by
number and name together, and they must agree. Sensitive actions need a yes BEFORE they
run, whatever the model answered; a "no" fails the subtask and the host decides.
A window that is gone is never acted on: the subtask ends with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from roundhouse.agents.asking import Asked
from roundhouse.agents.base import AgentCore, Declined
from roundhouse.agents.prompting import app_messages
from roundhouse.agents.responses import (
    ActionAnswer,
    AppAnswer,
    answer_schema,
    check_control,
    parse_answer,
)
from roundhouse.agents.sensitive import is_closing, sensitive_reason
from roundhouse.context import RoundContext
from roundhouse.devices.base import Result, ToolSpec
from roundhouse.devices.linux.types import Control, ControlList, WindowInfo
from roundhouse.models.base import NOTHING_SPENT, ModelRequest
from roundhouse.observation import AppObservation
from roundhouse.states import AgentKind, Status
from roundhouse.trajectory import StepRecord

LOOK_AGAIN_PAUSE = 0.5  # seconds a UI gets to finish changing before an answer is re-checked
APP_FUNCTIONS = (
    "click_control",
    "click_coordinates",
    "set_text",
    "type_text",
    "press_keys",
    "scroll",
    "drag",
    "wait",
)


@dataclass(kw_only=True)
class AppAgent(AgentCore):
    window: WindowInfo
    subtask: str = ""
    kind: AgentKind = AgentKind.APP

    def assign(self, window: WindowInfo, subtask: str) -> None:
        """A (new) subtask from the host: its history starts empty, as its progress does."""
        self.window, self.subtask, self.history = window, subtask, []

    async def handle(self, context: RoundContext) -> StepRecord:
        specs = await self.services.dispatcher.tool_specs()
        found = await self._current_window()
        if found is None:
            return self._window_gone(context)
        target: WindowInfo = found
        listed = await self._controls(target)
        step_number = context.session.session_step + 1
        plain = self.services.store.path(f"action_step{step_number}.png")
        annotated = self.services.store.path(f"action_step{step_number}_annotated.png")
        shots = await self._screenshots(target, plain, annotated)
        observation = AppObservation(
            request=context.record.read_board("host") or context.request,
            subtask=self.subtask,
            application=self.name,
            window=target,
            in_dialog=target.xid != self.window.xid,
            controls=tuple(listed.controls),
            tree_available=listed.tree_available,
            note=listed.note,
            history=tuple(self.history),
            screenshot=annotated if annotated.name in shots else None,
        )
        available = {spec.name for spec in specs}
        functions = [name for name in APP_FUNCTIONS if name in available]

        def parse(text: str) -> AppAnswer:
            answer = parse_answer(text, answer_type=AppAnswer, agent=self.kind, functions=functions)
            check_control(answer.action.arguments, [(c.label, c.name) for c in listed.controls])
            return answer

        async def look_again() -> bool:
            """The UI may have changed since the observation (a dialog that opens late):
            what is there now is what the answer will act on."""
            nonlocal target, listed
            await self.observe("wait", seconds=LOOK_AGAIN_PAUSE)  # then the screen settles
            now = await self._current_window()
            if now is None:
                return False
            fresh = await self._controls(now)
            changed = now.xid != target.xid or fresh.controls != listed.controls
            target, listed = now, fresh
            return changed

        request = ModelRequest(
            agent="app",
            messages=app_messages(observation, [s for s in specs if s.name in functions]),
            observation=observation,
            response_schema=answer_schema(AppAnswer),
        )
        asked = await self.ask(context, request, parse, look_again)
        answer = asked.answer
        status = answer.action.status
        session_step = context.next_step()

        declined: list[Declined] = []

        async def act() -> Result | None:
            function = answer.action.function or ""
            if status is Status.SCREENSHOT:  # only look again
                return None
            control = _named_control(answer.action.arguments, listed)
            why = sensitive_reason(function, answer.action.arguments, control)
            if why is None and status is Status.CONFIRM:
                why = "the model asked for a confirmation"
            scale = asked.image_scales[0] if asked.image_scales else 1.0
            arguments = _tool_arguments(function, answer.action.arguments, specs, target, scale)
            ran = await self.run(function, arguments, specs, why)
            if isinstance(ran, Declined):
                declined.append(ran)
                return ran.result
            return ran

        result, reply, action_ms = await self.act_or_ask(context, answer, act)
        effective = status
        if declined:  # a "no" fails the subtask, and says why
            effective = Status.FAIL
            answer = answer.model_copy(update={"result": declined[0].result.error or "declined"})
        if answer.save_screenshot and annotated.name in shots:
            context.session.blackboard.add_screenshot(annotated.name)

        return self.conclude(
            context,
            send_to="host" if effective in (Status.FINISH, Status.FAIL) else self.name,
            comment=answer.comment,
            session_step=session_step,
            status=effective,
            answer=answer,
            asked=asked,
            result=result,
            reply=reply,
            action_ms=action_ms,
            subtask=self.subtask,
            screenshots=shots,
        )

    async def _current_window(self) -> WindowInfo | None:
        """The application's window to act in: its active dialog, else its own window."""
        listed = await self.observe("list_windows")
        if not listed.ok or not isinstance(listed.result, list):
            return None
        windows = [WindowInfo.model_validate(item) for item in listed.result]
        mine = [
            w
            for w in windows
            if w.xid == self.window.xid or (w.pid is not None and w.pid == self.window.pid)
        ]
        if not mine:
            return None
        return next((w for w in mine if w.active), None) or next(
            (w for w in mine if w.xid == self.window.xid), mine[0]
        )

    async def _screenshots(self, window: WindowInfo, plain: Path, annotated: Path) -> list[str]:
        """action_step{N}.png and its annotated twin; the names of those that were saved."""
        saved = []
        for path, annotate in ((plain, False), (annotated, True)):
            shot = await self.observe(
                "capture_window_screenshot", window_id=window.xid, path=str(path), annotate=annotate
            )
            if shot.ok:
                saved.append(path.name)
        return saved

    async def _controls(self, window: WindowInfo) -> ControlList:
        listed = await self.observe("get_controls", window_id=window.xid)
        if listed.ok:
            return ControlList.model_validate(listed.result)
        note = f"the control list could not be read ({listed.error}); use the screenshot"
        return ControlList(window=window, controls=[], tree_available=False, note=note)

    def _window_gone(self, context: RoundContext) -> StepRecord:
        """No model call: the window is gone, and acting on its old coordinates is wrong."""
        last = self.history[-1] if self.history else None
        closed = last is not None and is_closing(
            last.function, last.arguments, str(last.arguments.get("name", ""))
        )
        status = Status.FINISH if closed else Status.FAIL
        if closed:
            result = f"the {self.name} window was closed"
        else:
            title = self.window.title
            result = (
                f"the {self.name} window {title!r} disappeared (the application may have crashed)"
            )
        answer = AppAnswer(
            observation=f"The window {self.window.title!r} is no longer on the desktop.",
            thought="There is nothing left to act on.",
            action=ActionAnswer(status=status),
            result=result,
        )
        asked: Asked[AppAnswer] = Asked(answer, "", NOTHING_SPENT, 0, 0.0)
        session_step = context.next_step()
        return self.conclude(
            context,
            send_to="host",
            session_step=session_step,
            status=status,
            answer=answer,
            asked=asked,
            result=None,
            reply=None,
            action_ms=0.0,
            subtask=self.subtask,
        )


def _named_control(arguments: dict[str, Any], listed: ControlList) -> Control | None:
    if "id" not in arguments:
        return None
    label = int(arguments["id"])
    return next((c for c in listed.controls if c.label == label), None)


# Coordinates the model gives are pixels of the window screenshot it saw (shrunk by
# `scale` for a vision model); the tools take screen pixels.
_X_ARGUMENTS = ("x", "start_x", "end_x")
_Y_ARGUMENTS = ("y", "start_y", "end_y")


def _tool_arguments(
    function: str,
    arguments: dict[str, Any],
    specs: list[ToolSpec],
    window: WindowInfo,
    scale: float = 1.0,
) -> dict[str, Any]:
    """The model's {id, name, ...} as the tool's arguments: id is the control's label, and
    screenshot coordinates become screen coordinates."""
    spec = next((s for s in specs if s.name == function), None)
    accepted = set(spec.parameters.get("properties", {})) if spec else set()
    converted = {k: v for k, v in arguments.items() if k not in ("id", "name")}
    for axis, origin in ((_X_ARGUMENTS, window.rect.left), (_Y_ARGUMENTS, window.rect.top)):
        for key in axis:
            if isinstance(converted.get(key), int | float):
                converted[key] = origin + round(converted[key] / scale)
    if "id" in arguments and "label" in accepted:
        converted["label"] = int(arguments["id"])
    if "window_id" in accepted and "window_id" not in converted:
        converted["window_id"] = window.xid
    return converted
