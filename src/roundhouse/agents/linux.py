"""The single-tier Linux agent: observe → ask the model → validated answer → act → remember.

It acts through the shell tools. Destructive commands go through the shell policy and,
when it says so, need a yes from the user BEFORE they run.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from roundhouse.agents.asking import ask_model
from roundhouse.agents.prompting import linux_messages
from roundhouse.agents.responses import LinuxAnswer, answer_schema, parse_answer
from roundhouse.agents.user import UserChannel
from roundhouse.config import Settings
from roundhouse.context import RoundContext
from roundhouse.devices.base import Command, Dispatcher, Result, ResultStatus, ToolSpec
from roundhouse.devices.shell import judge_command
from roundhouse.events import EventBus
from roundhouse.models.base import LanguageModel, ModelRequest
from roundhouse.models.pricing import PriceTable
from roundhouse.observation import PastStep, ShellObservation
from roundhouse.record import Attachment, Post
from roundhouse.states import AgentKind, Status
from roundhouse.trajectory import ActionRecord, StepRecord, UsageRecord


@dataclass(kw_only=True)
class AgentServices:
    """What every agent is built with, passed down from the session."""

    settings: Settings
    dispatcher: Dispatcher
    user: UserChannel
    prices: PriceTable
    events: EventBus


@dataclass(kw_only=True)
class LinuxAgent:
    model: LanguageModel
    services: AgentServices
    kind: AgentKind = AgentKind.LINUX
    name: str = "linux"
    history: list[PastStep] = field(default_factory=list)

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
        asked = await ask_model(
            self.model,
            request,
            partial(
                parse_answer, answer_type=LinuxAnswer, agent=self.kind, functions=observation.tools
            ),
            context=context,
            prices=self.services.prices,
            retries=self.services.settings.answer_retries,
            events=self.services.events,
            agent_name=self.name,
        )
        answer = asked.answer
        status = answer.action.status
        session_step = context.next_step()

        reply: str | None = None
        result: Result | None = None
        started = time.monotonic()
        if status is Status.PENDING:
            question = answer.question or ""
            reply = await self.services.user.ask(question)
            context.session.blackboard.add_question(question, reply)
        elif answer.action.function is not None:
            result = await self._act(answer, status, specs)
        action_ms = (time.monotonic() - started) * 1000

        if status in (Status.FINISH, Status.FAIL):
            context.result = answer.result
        self._remember(answer, result, reply)
        self._post(context, answer, result)
        return StepRecord(
            session_step=session_step,
            round_id=context.round_id,
            round_step=context.round_step,
            agent=self.kind,
            agent_name=self.name,
            status=status,
            observation=answer.observation,
            thought=answer.thought,
            plan=answer.plan,
            action=ActionRecord(function=answer.action.function, arguments=answer.action.arguments),
            result=result,
            answer=answer.result,
            question=answer.question if status is Status.PENDING else None,
            user_reply=reply,
            retries=asked.retries,
            usage=UsageRecord(
                requests=asked.usage.requests,
                input_tokens=asked.usage.input_tokens,
                output_tokens=asked.usage.output_tokens,
                cost=asked.cost.dollars,
            ),
            model_ms=round(asked.model_ms, 1),
            action_ms=round(action_ms, 1),
        )

    async def _act(self, answer: LinuxAnswer, status: Status, specs: list[ToolSpec]) -> Result:
        function = answer.action.function or ""
        arguments = answer.action.arguments
        spec = next((s for s in specs if s.name == function), None)
        tool_type = spec.tool_type if spec else "action"
        command = Command(tool_name=function, parameters=arguments, tool_type=tool_type)
        needs_yes = status is Status.CONFIRM
        why = "the model asked for a confirmation"
        if function == "run_shell":
            decision = judge_command(
                str(arguments.get("command", "")), self.services.settings.shell_policy
            )
            if not decision.allowed:
                return _not_run(
                    command, f"refused by the shell policy 'deny': the command {decision.reason}"
                )
            if decision.needs_confirmation:
                needs_yes, why = True, f"the command {decision.reason}"
        if needs_yes:
            confirmation = await self.services.user.confirm(f"Run {function} {arguments}? ({why})")
            if not confirmation.approved:
                if confirmation.how == "non-interactive":
                    return _not_run(
                        command,
                        f"not run: {why} and needs a confirmation, but this run is not "
                        "interactive (pass --yes to allow it)",
                    )
                return _not_run(command, f"not run: the user declined ({why})")
        [result] = await self.services.dispatcher.execute([command])
        return result

    def _remember(self, answer: LinuxAnswer, result: Result | None, reply: str | None) -> None:
        output: Any = result.result if result else reply
        self.history.append(
            PastStep(
                function=answer.action.function,
                arguments=answer.action.arguments,
                status=answer.action.status.value,
                result_status=result.status.value if result else ("answered" if reply else None),
                output=output,
                error=result.error if result else None,
            )
        )

    def _post(self, context: RoundContext, answer: LinuxAnswer, result: Result | None) -> None:
        attachments = [
            Attachment(type="thought", content=answer.thought),
            Attachment(type="plan", content="\n".join(answer.plan)),
        ]
        if answer.action.function:
            attachments.append(
                Attachment(
                    type="action", content=f"{answer.action.function}({answer.action.arguments})"
                )
            )
        if result is not None:
            attachments.append(
                Attachment(type="result", content=result.model_dump_json(exclude={"call_id"}))
            )
        context.record.add_post(
            Post(
                send_from=self.name, send_to="user", message=answer.result, attachments=attachments
            )
        )


def _not_run(command: Command, reason: str) -> Result:
    return Result(status=ResultStatus.SKIPPED, error=reason, call_id=command.call_id)
