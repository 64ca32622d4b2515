"""The HostAgent: looks at the desktop, picks the application for the next subtask
(selects an open window or launches one), writes the request and plan on the round's
board, and ASSIGNs an AppAgent. After each subtask it continues, finishes or fails.

Its step is the common one (agents/base.py); what is its own: it observes the desktop (a
screenshot, the windows, the applications), an ASSIGN must name the application and the
subtask, and an ASSIGN whose window could not be had is a CONTINUE (the host decides again).
An ASSIGN may say the subtask is all that is left (`finish_with_subtask`): when it FINISHes,
the host's step that follows FINISHes the round without asking the model, as the answer of
several actions that it is (ASSIGN, then FINISH once the subtask has).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from roundhouse.agents.action_list import Acted
from roundhouse.agents.base import AgentCore, Conclusion, Ended, Seen, answered_status
from roundhouse.agents.prompting import blackboard_text, host_messages
from roundhouse.agents.responses import ActionAnswer, HostAnswer, check_host
from roundhouse.core.context import RoundContext
from roundhouse.core.messages import Message
from roundhouse.core.states import AgentKind, Status
from roundhouse.devices.contract import ToolName, WindowInfo
from roundhouse.devices.describing import ToolSpec
from roundhouse.models.observation import HostObservation, SubtaskView


@dataclass(frozen=True)
class Assignment:
    window: WindowInfo
    subtask: str
    finish_with_subtask: bool = False  # its FINISH is the round's


@dataclass(kw_only=True)
class HostAgent(AgentCore[HostObservation, HostAnswer]):
    kind: AgentKind = AgentKind.HOST
    name: str = "host"
    assignment: Assignment | None = None
    answer_type: ClassVar = HostAnswer
    finishes_its_actions: ClassVar = False  # its FINISH is its subtasks' outcome
    functions: ClassVar = (
        ToolName.SELECT_WINDOW,
        ToolName.LAUNCH_APPLICATION,
        ToolName.RUN_SHELL,
        ToolName.GET_SYSTEM_INFO,
    )

    async def observe(
        self, context: RoundContext, specs: list[ToolSpec]
    ) -> Seen[HostObservation] | Ended[HostAnswer]:
        finished = self._finished_with_subtask(context)
        if finished is not None:
            return Ended(finished)
        step_number = context.session.session_step  # this step's, on the record already
        screenshot = self.services.log_folder / f"action_step{step_number}.png"
        shot = await self.collect(ToolName.CAPTURE_DESKTOP_SCREENSHOT, path=str(screenshot))
        available = {spec.name for spec in specs}
        observation = HostObservation(
            request=context.round.request,
            windows=await self._windows(),
            applications=await self._applications(available),
            subtasks=tuple(
                SubtaskView(s.agent_name, s.subtask, s.status, s.result)
                for s in context.round.subtasks
            ),
            history=self.history(context),
            blackboard=blackboard_text(context),
            screenshot=screenshot if shot.ok else None,
            max_actions=self.services.settings.max_actions,
        )
        return Seen(observation, (screenshot.name,) if shot.ok else ())

    def render(self, seen: Seen[HostObservation], offered: list[ToolSpec]) -> tuple[Message, ...]:
        return host_messages(seen.observation, offered)

    def check(self, seen: Seen[HostObservation], answer: HostAnswer) -> None:
        check_host(answer)

    def conclude(
        self, context: RoundContext, seen: Seen[Any], answer: HostAnswer, acted: Acted
    ) -> Conclusion[HostAnswer]:
        subtask = answer.current_subtask or None
        status = answered_status(answer, acted)  # CONTINUE: the list stopped before its ASSIGN
        if status is not Status.ASSIGN:
            return Conclusion(status, "user", answer, subtask)
        result = acted.last
        if result is None or not result.ok:
            # No window to hand over: the host decides again, seeing the failure.
            return Conclusion(Status.CONTINUE, "user", answer, subtask)
        window = WindowInfo.model_validate(result.result)
        self.assignment = Assignment(window, answer.current_subtask, answer.finish_with_subtask)
        context.round.write_board("host", self._board(context, answer))
        return Conclusion(Status.ASSIGN, window.application, answer, subtask)

    def _finished_with_subtask(self, context: RoundContext) -> HostAnswer | None:
        """The round's FINISH, when the subtask assigned last was to end it and has FINISHed
        (the one the host hears of now: it is asked only once that subtask has ended)."""
        done = context.round.subtasks
        if self.assignment is None or not self.assignment.finish_with_subtask or not done:
            return None
        if done[-1].status != Status.FINISH:
            return None  # a FAIL: the host decides what now, as after any subtask
        return HostAnswer(
            observation=f"{done[-1].agent_name} finished its subtask: {done[-1].subtask}",
            thought="It was all that was left of the request, as the ASSIGN said.",
            action=[ActionAnswer(status=Status.FINISH)],
            result="; ".join(f"{s.agent_name}: {s.result}" for s in done),
        )

    async def _windows(self) -> tuple[WindowInfo, ...]:
        listed = await self.collect(ToolName.LIST_WINDOWS)
        if not listed.ok or not isinstance(listed.result, list):
            return ()
        return tuple(WindowInfo.model_validate(item) for item in listed.result)

    async def _applications(self, available: set[str]) -> tuple[str, ...]:
        if ToolName.LIST_APPLICATIONS not in available:
            return ()
        listed = await self.collect(ToolName.LIST_APPLICATIONS)
        return (
            tuple(str(name) for name in listed.result)
            if listed.ok and isinstance(listed.result, list)
            else ()
        )

    @staticmethod
    def _board(context: RoundContext, answer: HostAnswer) -> str:
        """The request and the plan, for every AppAgent of the round. Not the subtask nor
        the window: the AppAgent's prompt gives its own under labels of their own."""
        plan = "\n".join(f"- {item}" for item in answer.plan) or "- (no plan given)"
        return f"Request: {context.round.request}\nPlan:\n{plan}"
