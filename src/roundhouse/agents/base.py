"""What every agent does the same way: ask the model (with retries), ask the user, run a
command (asking first when it must), remember the step and write it down."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from roundhouse.agents.asking import Asked, ask_model
from roundhouse.agents.responses import StepAnswer
from roundhouse.agents.user import UserChannel
from roundhouse.config import Settings
from roundhouse.context import RoundContext
from roundhouse.devices.base import Command, Dispatcher, Result, ResultStatus, ToolSpec
from roundhouse.devices.shell import judge_command
from roundhouse.events import EventBus
from roundhouse.models.base import LanguageModel, ModelRequest
from roundhouse.models.pricing import PriceTable
from roundhouse.observation import PastStep
from roundhouse.record import Attachment, Post
from roundhouse.states import AgentKind, Status
from roundhouse.store import LogStore
from roundhouse.trajectory import ActionRecord, StepRecord

A = TypeVar("A", bound=StepAnswer)


@dataclass(kw_only=True)
class AgentServices:
    """What every agent is built with, passed down from the session."""

    settings: Settings
    dispatcher: Dispatcher
    user: UserChannel
    prices: PriceTable
    events: EventBus
    store: LogStore


@dataclass(kw_only=True)
class Declined:
    """A confirmation the user (or a non-interactive run) did not give."""

    result: Result


@dataclass(kw_only=True)
class AgentCore:
    model: LanguageModel
    services: AgentServices
    kind: AgentKind
    name: str
    history: list[PastStep] = field(default_factory=list)

    async def ask(
        self,
        context: RoundContext,
        request: ModelRequest,
        parse: Callable[[str], A],
        look_again: Callable[[], Awaitable[bool]] | None = None,
    ) -> Asked[A]:
        return await ask_model(
            self.model,
            request,
            parse,
            context=context,
            prices=self.services.prices,
            retries=self.services.settings.answer_retries,
            events=self.services.events,
            agent_name=self.name,
            look_again=look_again,
        )

    async def ask_user(self, context: RoundContext, question: str) -> str | None:
        reply = await self.services.user.ask(question)
        context.session.blackboard.add_question(question, reply)
        return reply

    async def run(
        self, function: str, arguments: dict[str, Any], specs: list[ToolSpec], why: str | None
    ) -> Result | Declined:
        """Run one tool; when `why` is given, only after the user said yes to it. A shell
        command also goes through the shell policy, whichever agent sends it."""
        spec = next((s for s in specs if s.name == function), None)
        command = Command(
            tool_name=function,
            parameters=arguments,
            tool_type=spec.tool_type if spec else "action",
        )
        if function == "run_shell":
            decision = judge_command(
                str(arguments.get("command", "")), self.services.settings.shell_policy
            )
            if not decision.allowed:
                error = f"refused by the shell policy 'deny': the command {decision.reason}"
                return Declined(
                    result=Result(status=ResultStatus.SKIPPED, error=error, call_id=command.call_id)
                )
            if decision.needs_confirmation:
                why = f"the command {decision.reason}"
        if why is not None:
            confirmation = await self.services.user.confirm(
                f"{self.name}: {function} {arguments}? ({why})"
            )
            if not confirmation.approved:
                if confirmation.how == "non-interactive":
                    reason = (
                        f"not run: {why}, and it needs a confirmation, but this run is not "
                        "interactive (pass --yes to allow it)"
                    )
                else:
                    reason = f"not run: the user declined ({why})"
                return Declined(
                    result=Result(
                        status=ResultStatus.SKIPPED, error=reason, call_id=command.call_id
                    )
                )
        [result] = await self.services.dispatcher.execute([command])
        return result

    async def act_or_ask(
        self, context: RoundContext, answer: StepAnswer, act: Callable[[], Awaitable[Result | None]]
    ) -> tuple[Result | None, str | None, float]:
        """A PENDING answer asks the user; any other runs its action (if it has one).
        Returns the result, the user's reply and how long it took, in ms."""
        started = time.monotonic()
        reply: str | None = None
        result: Result | None = None
        if answer.action.status is Status.PENDING:
            reply = await self.ask_user(context, answer.question or "")
        elif answer.action.function is not None:
            result = await act()
        return result, reply, (time.monotonic() - started) * 1000

    async def observe(self, function: str, **arguments: Any) -> Result:
        [result] = await self.services.dispatcher.execute(
            [Command(tool_name=function, parameters=arguments, tool_type="data_collection")]
        )
        return result

    def remember(
        self, answer: StepAnswer, result: Result | None, reply: str | None, comment: str = ""
    ) -> None:
        self.history.append(
            PastStep(
                function=answer.action.function,
                arguments=answer.action.arguments,
                status=answer.action.status.value,
                result_status=result.status.value if result else ("answered" if reply else None),
                output=result.result if result else reply,
                error=result.error if result else None,
                comment=comment,
            )
        )

    def post(
        self, context: RoundContext, answer: StepAnswer, result: Result | None, send_to: str
    ) -> None:
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
                send_from=self.name, send_to=send_to, message=answer.result, attachments=attachments
            )
        )

    def conclude(
        self,
        context: RoundContext,
        *,
        session_step: int,
        status: Status,
        answer: StepAnswer,
        asked: Asked[Any],
        result: Result | None,
        reply: str | None,
        action_ms: float,
        send_to: str,
        comment: str = "",
        **extra: Any,
    ) -> StepRecord:
        """End a step: remember it for the next prompt, post it on the round's record and
        return its response.log line."""
        self.remember(answer, result, reply, comment=comment)
        self.post(context, answer, result, send_to=send_to)
        return self.record(
            context,
            session_step=session_step,
            status=status,
            answer=answer,
            asked=asked,
            result=result,
            reply=reply,
            action_ms=action_ms,
            **extra,
        )

    def record(
        self,
        context: RoundContext,
        *,
        session_step: int,
        status: Status,
        answer: StepAnswer,
        asked: Asked[Any],
        result: Result | None,
        reply: str | None,
        action_ms: float,
        **extra: Any,
    ) -> StepRecord:
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
            question=answer.question if answer.action.status is Status.PENDING else None,
            user_reply=reply,
            retries=asked.retries,
            usage=asked.usage,
            model_ms=round(asked.model_ms, 1),
            action_ms=round(action_ms, 1),
            **extra,
        )
