"""The AppAgent: acts inside one application for the subtask the host gave it.

Its step is the common one (agents/base.py); what is its own: each step it looks at its
window (the application's dialog in front, when there is one): the numbered control list
and the annotated screenshot. The model names a control by number and name together, and
they must agree (checked again against a fresh look when the window may have changed).
An answer of several actions names controls of the list it was given; before each action
after the first, the control is read again and must still be there, with the same name
and role (`recheck`), else the list stops there.
Sensitive actions need a yes BEFORE they run, whatever the model answered; a "no" fails the
subtask and the host decides. A window that is gone is never acted on: the step ends
without a model call, with the reason. So is one whose application stopped answering,
once it has been given desktop.unresponsive_timeout seconds to answer again.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, ClassVar

from roundhouse.agents.action_list import Acted, target_changed
from roundhouse.agents.asking import Asked
from roundhouse.agents.base import (
    LOOK_AGAIN_PAUSE,
    AgentCore,
    Conclusion,
    Ended,
    Seen,
    answered_status,
)
from roundhouse.agents.prompting import app_messages
from roundhouse.agents.responses import ActionAnswer, AppAnswer, check_control
from roundhouse.agents.sensitive import is_closing, sensitive_reason
from roundhouse.core.commands import Result, ResultStatus
from roundhouse.core.context import RoundContext
from roundhouse.core.messages import Message
from roundhouse.core.polling import within_async
from roundhouse.core.states import AgentKind, Status
from roundhouse.devices.contract import WINDOW_ACTIONS, Control, ControlList, ToolName, WindowInfo
from roundhouse.devices.describing import ToolSpec
from roundhouse.models.observation import AppObservation, PastStep

# Seconds a window whose closing question was answered ("Save changes?": Save) is given to
# go: an editor writes its file first. The settle ends when the screen is still, and
# nothing is drawn while it writes.
CLOSING_WAIT = 3.0


@dataclass(kw_only=True)
class AppAgent(AgentCore[AppObservation, AppAnswer]):
    window: WindowInfo
    subtask: str = ""
    kind: AgentKind = AgentKind.APP
    answer_type: ClassVar = AppAnswer
    functions: ClassVar = WINDOW_ACTIONS

    def assign(self, window: WindowInfo, subtask: str, since: int) -> None:
        """A (new) subtask from the host at round step `since`: its history starts empty
        there, as its progress does."""
        self.window, self.subtask, self.since = window, subtask, since

    # --- the hooks -----------------------------------------------------------------------

    async def observe(
        self, context: RoundContext, specs: list[ToolSpec]
    ) -> Seen[AppObservation] | Ended[AppAnswer]:
        target = await self._current_window()
        if target is not None and _answered_closing(self._acted(context)):
            target = await self._closed_within(target, CLOSING_WAIT)
        if target is None:
            return Ended(self._window_gone(context))
        listed = await self._controls(target)
        if not listed.responding:
            listed = await self._wait_until_responding(target, listed)
            if not listed.responding:
                return Ended(self._not_responding(target, listed))
        step_number = context.session.session_step  # this step's, on the record already
        plain = self.services.log_folder / f"action_step{step_number}.png"
        annotated = self.services.log_folder / f"action_step{step_number}_annotated.png"
        saved = []
        for path, annotate in ((plain, False), (annotated, True)):
            shot = await self.collect(
                ToolName.CAPTURE_WINDOW_SCREENSHOT,
                window_id=target.xid,
                path=str(path),
                annotate=annotate,
                as_listed=annotate,  # the numbers of `listed`, which the model reads
            )
            if shot.ok:
                saved.append(path.name)
        asked_for = AppObservation(
            board=context.round.read_board("host") or f"Request: {context.round.request}",
            subtask=self.subtask,
            application=self.name,
            window=target,
            controls=(),
            history=self.history(context),
            screenshot=annotated if annotated.name in saved else None,
            max_actions=self.services.settings.max_actions,
        )
        return Seen(self._showing(asked_for, target, listed), tuple(saved))

    def _showing(
        self, observation: AppObservation, window: WindowInfo, listed: ControlList
    ) -> AppObservation:
        """`observation`, of `window` as `listed` shows it."""
        return replace(
            observation,
            window=window,
            in_dialog=window.xid != self.window.xid or listed.dialog is not None,
            controls=tuple(listed.controls),
            context=tuple(listed.context),
            tree_available=listed.tree_available,
            note=listed.note,
        )

    def render(self, seen: Seen[AppObservation], offered: list[ToolSpec]) -> tuple[Message, ...]:
        return app_messages(seen.observation, [as_app_tool(spec) for spec in offered])

    def check(self, seen: Seen[AppObservation], answer: AppAnswer) -> None:
        controls = [(c.label, c.name) for c in seen.observation.controls]
        for action in answer.actions:  # all of them name controls of the list it was given
            check_control(action.arguments, controls)

    async def look_again(self, seen: Seen[AppObservation]) -> Seen[AppObservation] | None:
        """The UI may have changed since the observation (a dialog that opens late): what is
        there now is what the answer is checked against, and acts on."""
        await self.collect(ToolName.WAIT, seconds=LOOK_AGAIN_PAUSE)  # then the screen settles
        now = await self._current_window()
        if now is None:
            return None
        fresh = await self._controls(now)
        before = seen.observation
        if now.xid == before.window.xid and tuple(fresh.controls) == before.controls:
            return None
        return Seen(self._showing(before, now, fresh), seen.screenshots)

    async def recheck(self, seen: Seen[AppObservation], action: ActionAnswer) -> str | None:
        """The control the action names, read again: still there, by the same name and role."""
        control = _named_control(action.arguments, seen.observation.controls)
        if control is None:
            return None
        now = await self._controls(seen.observation.window)
        if not now.tree_available:
            return f"the controls could not be read again ({now.note})"
        return target_changed(control, now.controls)

    async def act(
        self,
        context: RoundContext,
        seen: Seen[AppObservation],
        action: ActionAnswer,
        asked: Asked[AppAnswer],
        specs: list[ToolSpec],
    ) -> Result:
        function = action.function or ""
        control = _named_control(action.arguments, seen.observation.controls)
        why = sensitive_reason(function, action.arguments, control)
        if why is None and action.status is Status.CONFIRM:
            why = "the model asked for a confirmation"
        scale = asked.image_scales[0] if asked.image_scales else 1.0
        window = seen.observation.window
        arguments = _tool_arguments(function, action.arguments, specs, window, scale, control)
        return await self.run(function, arguments, specs, why)

    def conclude(
        self, context: RoundContext, seen: Seen[Any], answer: AppAnswer, acted: Acted
    ) -> Conclusion[AppAnswer]:
        status = answered_status(answer, acted)
        result = acted.last
        if result is not None and result.status is ResultStatus.SKIPPED:
            # Not run (a "no", or the shell policy): the subtask fails, saying why.
            status = Status.FAIL
            answer = answer.model_copy(update={"result": result.error or "not run"})
        annotated = [name for name in seen.screenshots if name.endswith("_annotated.png")]
        if answer.save_screenshot and annotated:
            context.session.blackboard.add_screenshot(annotated[0])
        send_to = "host" if status in (Status.FINISH, Status.FAIL) else self.name
        return Conclusion(status, send_to, answer, self.subtask)

    # --- its window ------------------------------------------------------------------------

    async def _current_window(self) -> WindowInfo | None:
        """The application's window to act in: its active dialog, else its own window."""
        return self._window_in(await self._windows())

    async def _windows(self) -> list[WindowInfo] | None:
        listed = await self.collect(ToolName.LIST_WINDOWS)
        if not listed.ok or not isinstance(listed.result, list):
            return None
        return [WindowInfo.model_validate(item) for item in listed.result]

    def _window_in(self, windows: list[WindowInfo] | None) -> WindowInfo | None:
        mine = [w for w in windows or () if w.xid == self.window.xid or self._same_application(w)]
        if not mine:
            return None
        return next((w for w in mine if w.active), None) or next(
            (w for w in mine if w.xid == self.window.xid), mine[0]
        )

    async def _closed_within(self, target: WindowInfo, seconds: float) -> WindowInfo | None:
        """The window to act in once the agent's own window has gone, another has come in
        front of `target` (a Save dialog), or `seconds` have passed."""
        now: WindowInfo | None = target

        async def moved_on() -> bool:
            nonlocal now
            windows = await self._windows()
            now = self._window_in(windows)
            gone = windows is not None and all(w.xid != self.window.xid for w in windows)
            return gone or now is None or now.xid != target.xid

        await within_async(moved_on, seconds, every=0.1, pause_first=True)
        return now

    def _acted(self, context: RoundContext) -> list[PastStep]:
        return [step for step in self.history(context) if step.ran]

    def _same_application(self, window: WindowInfo) -> bool:
        """Its process's, where the display server says whose a window is; else (labwc's
        windows come without a pid) the same application id, which a toolkit gives every
        window of its application, dialogs included."""
        if window.pid is not None and self.window.pid is not None:
            return window.pid == self.window.pid
        return bool(window.application) and window.application == self.window.application

    async def _controls(self, window: WindowInfo) -> ControlList:
        listed = await self.collect(ToolName.GET_CONTROLS, window_id=window.xid)
        if listed.ok:
            return ControlList.model_validate(listed.result)
        note = f"the control list could not be read ({listed.error}); use the screenshot"
        return ControlList(window=window, controls=[], tree_available=False, note=note)

    async def _wait_until_responding(self, window: WindowInfo, listed: ControlList) -> ControlList:
        """Look again, a second apart, until the application answers or the time is up."""

        async def answers() -> bool:
            nonlocal listed
            listed = await self._controls(window)
            return listed.responding

        wait = self.services.settings.desktop.unresponsive_timeout
        await within_async(answers, wait, every=1.0, pause_first=True)
        return listed

    def _not_responding(self, window: WindowInfo, listed: ControlList) -> AppAnswer:
        waited = self.services.settings.desktop.unresponsive_timeout
        reason = listed.truncated_reason or "not responding"
        return AppAnswer(
            observation=f"The window {window.title!r} does not answer.",
            thought="Acting on an application that does not answer would queue blind input.",
            action=[ActionAnswer(status=Status.FAIL)],
            result=f"the {self.name} window {window.title!r} is {reason}; waited {waited:g} s",
        )

    def _window_gone(self, context: RoundContext) -> AppAnswer:
        """The window is gone, and acting on its old coordinates is wrong: FINISH if the
        agent's own last action closed it, or answered the question its closing asked
        ("Save changes?": Save, Discard), else FAIL."""
        acted = self._acted(context)
        last = acted[-1] if acted else None
        closed = last is not None and (
            _closes(last) or (last.function == ToolName.CLICK_CONTROL and any(map(_closes, acted)))
        )
        title = self.window.title
        if closed:
            result = f"the {self.name} window was closed"
        else:
            result = (
                f"the {self.name} window {title!r} disappeared (the application may have crashed)"
            )
        return AppAnswer(
            observation=f"The window {title!r} is no longer on the desktop.",
            thought="There is nothing left to act on.",
            action=[ActionAnswer(status=Status.FINISH if closed else Status.FAIL)],
            result=result,
        )


def _closes(step: PastStep) -> bool:
    return is_closing(step.function, step.arguments, str(step.arguments.get("name", "")))


def _answered_closing(acted: list[PastStep]) -> bool:
    """Whether the last action was a click right after a closing one: the answer to the
    question the closing asked."""
    return len(acted) >= 2 and acted[-1].function == ToolName.CLICK_CONTROL and _closes(acted[-2])


def _named_control(arguments: dict[str, Any], controls: tuple[Control, ...]) -> Control | None:
    if "id" not in arguments:
        return None
    label = int(arguments["id"])
    return next((c for c in controls if c.label == label), None)


# Coordinates the model gives are pixels of the window screenshot it saw (shrunk by
# `scale` for a vision model); the tools take screen pixels.
_X_ARGUMENTS = ("x", "start_x", "end_x")
_Y_ARGUMENTS = ("y", "start_y", "end_y")


# What the AppAgent's model names a control by, instead of a tool's label or control_id.
_NAMED_CONTROL: dict[str, Any] = {"id": {"type": "integer"}, "name": {"type": "string"}}
_FILLED_IN = ("label", "control_id", "window_id")  # from id, or the window observed
# Tools that act on the focused control when none is named.
_CONTROL_OPTIONAL = (ToolName.TYPE_TEXT,)


def as_app_tool(spec: ToolSpec) -> ToolSpec:
    """The tool as this agent's model calls it, which _tool_arguments takes back: a control
    by `id` (its number in the list) and `name` together, no window_id (always the window
    observed)."""
    given: dict[str, Any] = spec.parameters.get("properties", {})
    if not any(key in given for key in _FILLED_IN):
        return spec
    needs_control = "label" in given and spec.name not in _CONTROL_OPTIONAL
    properties = dict(_NAMED_CONTROL) if needs_control else {}
    for key, schema in given.items():
        if key == "label" and not needs_control:  # optional: where the label was
            properties |= {
                name: {"anyOf": [one, {"type": "null"}], "default": None}
                for name, one in _NAMED_CONTROL.items()
            }
        elif key not in _FILLED_IN:
            properties[key] = schema
    required = [*_NAMED_CONTROL] if needs_control else []
    required += [key for key in spec.parameters.get("required", ()) if key in properties]
    parameters = {**spec.parameters, "properties": properties, "required": required}
    return spec.model_copy(update={"parameters": parameters})


def _tool_arguments(
    function: str,
    arguments: dict[str, Any],
    specs: list[ToolSpec],
    window: WindowInfo,
    scale: float = 1.0,
    control: Control | None = None,
) -> dict[str, Any]:
    """The model's {id, name, ...} as the tool's arguments: id is the control's label, and
    screenshot coordinates become screen coordinates. The control the model saw under that
    number (`control`) is named by its node id: the tool's own list may have been read again
    since (the annotated screenshot reads it), and a window still filling its toolbar
    numbers it otherwise by then (Writer's document became "Insert Cross-reference")."""
    spec = next((s for s in specs if s.name == function), None)
    accepted = set(spec.parameters.get("properties", {})) if spec else set()
    converted = {k: v for k, v in arguments.items() if k not in ("id", "name")}
    for axis, origin in ((_X_ARGUMENTS, window.rect.left), (_Y_ARGUMENTS, window.rect.top)):
        for key in axis:
            if isinstance(converted.get(key), int | float):
                converted[key] = origin + round(converted[key] / scale)
    if "id" in arguments and control is not None and "control_id" in accepted:
        converted["control_id"] = control.id
    elif "id" in arguments and "label" in accepted:
        converted["label"] = int(arguments["id"])
    if "window_id" in accepted and "window_id" not in converted:
        converted["window_id"] = window.xid
    return converted
