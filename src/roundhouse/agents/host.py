"""The HostAgent: looks at the desktop, picks the application for the next subtask
(selects an open window or launches one), writes the request and plan on the round's
board, and ASSIGNs an AppAgent. After each subtask it continues, finishes or fails."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from roundhouse.agents.base import AgentCore, Declined
from roundhouse.agents.prompting import host_messages
from roundhouse.agents.responses import HostAnswer, answer_schema, check_host, parse_answer
from roundhouse.context import RoundContext
from roundhouse.devices.base import Result
from roundhouse.devices.linux.types import WindowInfo
from roundhouse.models.base import ModelRequest
from roundhouse.observation import HostObservation, SubtaskView
from roundhouse.states import AgentKind, Status
from roundhouse.trajectory import StepRecord

HOST_FUNCTIONS = ("select_window", "launch_application", "run_shell", "get_system_info")


@dataclass(frozen=True)
class Assignment:
    window: WindowInfo
    subtask: str


@dataclass(kw_only=True)
class HostAgent(AgentCore):
    kind: AgentKind = AgentKind.HOST
    name: str = "host"
    assignment: Assignment | None = None

    async def handle(self, context: RoundContext) -> StepRecord:
        specs = await self.services.dispatcher.tool_specs()
        available = {spec.name for spec in specs}
        step_number = context.session.session_step + 1
        screenshot = self.services.store.path(f"action_step{step_number}.png")
        shot = await self.observe("capture_desktop_screenshot", path=str(screenshot))
        observation = HostObservation(
            request=context.request,
            windows=await self._windows(),
            applications=await self._applications(available),
            subtasks=tuple(
                SubtaskView(s.agent_name, s.subtask, s.status, s.result)
                for s in context.previous_subtasks
            ),
            history=tuple(self.history),
            blackboard=context.session.blackboard.render(),
            screenshot=screenshot if shot.ok else None,
        )
        functions = [name for name in HOST_FUNCTIONS if name in available]
        request = ModelRequest(
            agent="host",
            messages=host_messages(observation, [s for s in specs if s.name in functions]),
            observation=observation,
            response_schema=answer_schema(HostAnswer),
        )
        parse = partial(parse_answer, answer_type=HostAnswer, agent=self.kind, functions=functions)
        asked = await self.ask(context, request, lambda text: check_host(parse(text)))
        answer = asked.answer
        status = answer.action.status
        session_step = context.next_step()

        async def act() -> Result:
            ran = await self.run(answer.action.function or "", answer.action.arguments, specs, None)
            return ran.result if isinstance(ran, Declined) else ran

        result, reply, action_ms = await self.act_or_ask(context, answer, act)

        effective = status
        send_to = "user"
        if status is Status.ASSIGN:
            if result is not None and result.ok:
                window = WindowInfo.model_validate(result.result)
                self.assignment = Assignment(window, answer.current_subtask)
                context.current_application = window.application
                send_to = window.application
                context.record.write_board("host", self._board(context, answer, window))
            else:
                # No window to hand over: the host decides again, seeing the failure.
                effective = Status.CONTINUE
        if status in (Status.FINISH, Status.FAIL):
            context.result = answer.result
        return self.conclude(
            context,
            send_to=send_to,
            session_step=session_step,
            status=effective,
            answer=answer,
            asked=asked,
            result=result,
            reply=reply,
            action_ms=action_ms,
            subtask=answer.current_subtask or None,
            screenshots=[screenshot.name] if shot.ok else [],
        )

    async def _windows(self) -> tuple[WindowInfo, ...]:
        listed = await self.observe("list_windows")
        if not listed.ok or not isinstance(listed.result, list):
            return ()
        return tuple(WindowInfo.model_validate(item) for item in listed.result)

    async def _applications(self, available: set[str]) -> tuple[str, ...]:
        if "list_applications" not in available:
            return ()
        listed = await self.observe("list_applications")
        return (
            tuple(str(name) for name in listed.result)
            if listed.ok and isinstance(listed.result, list)
            else ()
        )

    @staticmethod
    def _board(context: RoundContext, answer: HostAnswer, window: WindowInfo) -> str:
        plan = "\n".join(f"- {item}" for item in answer.plan) or "- (no plan given)"
        return (
            f"Request: {context.request}\nPlan:\n{plan}\n"
            f"Current subtask for {window.application} ({window.title!r}): {answer.current_subtask}"
        )
