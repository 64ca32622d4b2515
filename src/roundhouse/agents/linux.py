"""The single-tier Linux agent: observe → ask the model → validated answer → act → remember.

It acts through the shell tools. Destructive commands go through the shell policy and,
when it says so, need a yes from the user BEFORE they run.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from roundhouse.agents.base import AgentCore, Declined
from roundhouse.agents.prompting import linux_messages
from roundhouse.agents.responses import LinuxAnswer, answer_schema, parse_answer
from roundhouse.context import RoundContext
from roundhouse.devices.base import Result
from roundhouse.models.base import ModelRequest
from roundhouse.observation import ShellObservation
from roundhouse.states import AgentKind, Status
from roundhouse.trajectory import StepRecord


@dataclass(kw_only=True)
class LinuxAgent(AgentCore):
    kind: AgentKind = AgentKind.LINUX
    name: str = "linux"

    async def handle(self, context: RoundContext) -> StepRecord:
        specs = await self.services.dispatcher.tool_specs()
        observation = ShellObservation(
            request=context.request,
            history=tuple(self.history),
            blackboard=context.session.blackboard.render(),
            tools=tuple(spec.name for spec in specs),
            workdir=str(self.services.settings.workdir or "."),
        )
        request = ModelRequest(
            agent="linux",
            messages=linux_messages(observation, specs),
            observation=observation,
            response_schema=answer_schema(LinuxAnswer),
        )
        parse = partial(
            parse_answer, answer_type=LinuxAnswer, agent=self.kind, functions=observation.tools
        )
        asked = await self.ask(context, request, parse)
        answer = asked.answer
        status = answer.action.status
        session_step = context.next_step()

        async def act() -> Result:
            why = "the model asked for a confirmation" if status is Status.CONFIRM else None
            ran = await self.run(answer.action.function or "", answer.action.arguments, specs, why)
            return ran.result if isinstance(ran, Declined) else ran

        result, reply, action_ms = await self.act_or_ask(context, answer, act)

        if status in (Status.FINISH, Status.FAIL):
            context.result = answer.result
        return self.conclude(
            context,
            send_to="user",
            session_step=session_step,
            status=status,
            answer=answer,
            asked=asked,
            result=result,
            reply=reply,
            action_ms=action_ms,
        )
