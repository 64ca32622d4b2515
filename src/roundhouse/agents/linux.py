"""The single-tier Linux agent: observe → ask the model → validated answer → act → remember.

It acts through the shell tools. Destructive commands go through the shell policy and,
when it says so, need a yes from the user BEFORE they run.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import partial

from roundhouse.agents.base import AgentCore, Declined
from roundhouse.agents.prompting import linux_messages
from roundhouse.agents.responses import LinuxAnswer, answer_schema, parse_answer
from roundhouse.context import RoundContext
from roundhouse.devices.base import Result, ResultStatus
from roundhouse.devices.shell import judge_command
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

        reply: str | None = None
        result: Result | None = None
        started = time.monotonic()
        if status is Status.PENDING:
            reply = await self.ask_user(context, answer.question or "")
        elif answer.action.function is not None:
            why = "the model asked for a confirmation" if status is Status.CONFIRM else None
            if answer.action.function == "run_shell":
                command = str(answer.action.arguments.get("command", ""))
                decision = judge_command(command, self.services.settings.shell_policy)
                if not decision.allowed:
                    error = f"refused by the shell policy 'deny': the command {decision.reason}"
                    result = Result(status=ResultStatus.SKIPPED, error=error)
                elif decision.needs_confirmation:
                    why = f"the command {decision.reason}"
            if result is None:
                ran = await self.run(answer.action.function, answer.action.arguments, specs, why)
                result = ran.result if isinstance(ran, Declined) else ran
        action_ms = (time.monotonic() - started) * 1000

        if status in (Status.FINISH, Status.FAIL):
            context.result = answer.result
        self.remember(answer, result, reply)
        self.post(context, answer, result, send_to="user")
        return self.record(
            context,
            session_step=session_step,
            status=status,
            answer=answer,
            asked=asked,
            result=result,
            reply=reply,
            action_ms=action_ms,
        )
