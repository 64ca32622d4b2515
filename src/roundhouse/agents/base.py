"""The agent step, written once: observe, ask the model (with retries), act or ask the user,
conclude. Each agent fills in the hooks (what it sees, how it is prompted, what it checks
in an answer, how it acts, what its answer comes to); none has a copy of the step.

    seen   = await self.observe(context, specs)          # hook (or the step ends here)
    prompt = self.render(seen, offered)                   # hook
    asked  = await self.ask(context, prompt, parse)       # parse = the answer type + check()
    result = await self.act(context, seen, answer, ...)   # hook, or the user is asked (PENDING)
    end    = self.conclude(context, seen, answer, result) # hook: the status it comes to
    return   the StepRecord (remembered, posted on the round's record)
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Generic, TypeVar, cast

from roundhouse.agents.asking import Asked, ask_model
from roundhouse.agents.responses import StepAnswer, answer_schema, parse_answer
from roundhouse.agents.user import UserChannel
from roundhouse.config import Settings
from roundhouse.core.commands import Command, Result, ResultStatus
from roundhouse.core.context import RoundContext
from roundhouse.core.events import EventBus
from roundhouse.core.messages import Message
from roundhouse.core.record import Attachment, Post
from roundhouse.core.states import AgentKind, Status, transition
from roundhouse.core.trajectory import ActionRecord, StepRecord
from roundhouse.core.usage import NOTHING_SPENT
from roundhouse.devices.base import Dispatcher
from roundhouse.devices.contract import ToolName
from roundhouse.devices.describing import ToolSpec
from roundhouse.devices.shell import judge_command
from roundhouse.models.base import LanguageModel, ModelRequest, OfferedTool
from roundhouse.models.observation import PastStep
from roundhouse.models.pricing import PriceTable

Obs = TypeVar("Obs")  # what the agent observes
A = TypeVar("A", bound=StepAnswer)  # what it must answer


@dataclass(kw_only=True)
class AgentServices:
    """What every agent is built with, passed down from the session."""

    settings: Settings
    dispatcher: Dispatcher
    user: UserChannel
    prices: PriceTable
    events: EventBus
    log_folder: Path  # where the step screenshots go (the recorder writes everything else)


@dataclass(frozen=True)
class Seen(Generic[Obs]):
    """What an agent observed for one step."""

    observation: Obs
    screenshots: tuple[str, ...] = ()  # file names in the log folder


@dataclass(frozen=True)
class Ended(Generic[A]):
    """A step that ends without asking the model (the AppAgent's window is gone)."""

    answer: A


@dataclass(frozen=True)
class Conclusion(Generic[A]):
    """What an answer came to: the status the round moves on, and to whom it is posted."""

    status: Status
    send_to: str
    answer: A  # as answered, or with the reason it did not stand (a declined action)
    subtask: str | None = None


@dataclass(kw_only=True)
class AgentCore(Generic[Obs, A]):
    model: LanguageModel
    services: AgentServices
    kind: AgentKind
    name: str
    history: list[PastStep] = field(default_factory=list)

    answer_type: ClassVar[type[StepAnswer]]
    functions: ClassVar[tuple[str, ...]]  # the tools this agent may call, if served

    # --- the step ------------------------------------------------------------------------

    async def handle(self, context: RoundContext) -> StepRecord:
        specs = await self.services.dispatcher.tool_specs()
        offered = [spec for spec in specs if spec.name in self.functions]
        seen = await self.observe(context, specs)
        if isinstance(seen, Ended):
            asked: Asked[A] = Asked(seen.answer, "", NOTHING_SPENT, 0, 0.0)
            return self._conclude(context, Seen(None), asked, None, None, 0.0)
        current: Seen[Obs] = seen

        def parse(text: str) -> A:
            names = [spec.name for spec in offered]
            answer = cast(A, parse_answer(text, self.answer_type, agent=self.kind, functions=names))
            self.check(current, answer)
            return answer

        def request_for(seen: Seen[Obs]) -> ModelRequest:
            return ModelRequest(
                agent=self.kind.value,
                messages=self.render(seen, offered),
                observation=seen.observation,
                response_schema=answer_schema(self.answer_type),
                tools=tuple(OfferedTool(s.name, s.description, s.parameters) for s in offered),
            )

        async def look_again() -> ModelRequest | None:
            nonlocal current
            fresh = await self.look_again(current)
            if fresh is None:
                return None
            current = fresh
            return request_for(current)

        prompt = request_for(current)
        asked = await self.ask(context, prompt, parse, look_again)
        answer = asked.answer
        context.next_step()
        started = time.monotonic()
        result: Result | None = None
        reply: str | None = None
        if answer.action.status is Status.PENDING:
            reply = await self.ask_user(context, answer.question or "")
        elif answer.action.function is not None and answer.action.status is not Status.SCREENSHOT:
            result = await self.act(context, current, answer, asked, specs)  # SCREENSHOT: look
        action_ms = (time.monotonic() - started) * 1000
        return self._conclude(context, current, asked, result, reply, action_ms)

    def _conclude(
        self,
        context: RoundContext,
        seen: Seen[Any],
        asked: Asked[A],
        result: Result | None,
        reply: str | None,
        action_ms: float,
    ) -> StepRecord:
        """Remember the step for the next prompt, post it on the round's record, and give
        its response.log line."""
        end = self.conclude(context, seen, asked.answer, result)
        answer = end.answer
        if transition(self.kind, end.status).round_end:
            context.result = answer.result
        self._remember(answer, result, reply)
        self._post(context, answer, result, end.send_to)
        return StepRecord(
            session_step=context.session.session_step,
            round_id=context.round_id,
            round_step=context.round_step,
            agent=self.kind,
            agent_name=self.name,
            status=end.status,
            observation=answer.observation,
            thought=answer.thought,
            plan=answer.plan,
            action=ActionRecord(function=answer.action.function, arguments=answer.action.arguments),
            result=result,
            answer=answer.result,
            subtask=end.subtask,
            question=answer.question if answer.action.status is Status.PENDING else None,
            user_reply=reply,
            retries=asked.retries,
            usage=asked.usage,
            model_ms=round(asked.model_ms, 1),
            action_ms=round(action_ms, 1),
            screenshots=list(seen.screenshots),
        )

    # --- the hooks -----------------------------------------------------------------------

    async def observe(self, context: RoundContext, specs: list[ToolSpec]) -> Seen[Obs] | Ended[A]:
        raise NotImplementedError

    def render(self, seen: Seen[Obs], offered: list[ToolSpec]) -> tuple[Message, ...]:
        raise NotImplementedError

    def check(self, seen: Seen[Obs], answer: A) -> None:
        """Refuse (InvalidAnswer) what the answer type alone cannot: it goes back to the model."""

    async def look_again(self, seen: Seen[Obs]) -> Seen[Obs] | None:
        """A fresh view, when what the answer was checked against may have changed since
        (None: nothing changed, or nothing to look at)."""
        return None

    async def act(
        self,
        context: RoundContext,
        seen: Seen[Obs],
        answer: A,
        asked: Asked[A],
        specs: list[ToolSpec],
    ) -> Result:
        """Run the answer's action: by default as given, asking first when it is CONFIRM."""
        why = (
            "the model asked for a confirmation" if answer.action.status is Status.CONFIRM else None
        )
        return await self.run(answer.action.function or "", answer.action.arguments, specs, why)

    def conclude(
        self, context: RoundContext, seen: Seen[Any], answer: A, result: Result | None
    ) -> Conclusion[A]:
        """What the answer comes to: by default its own status, posted to the user."""
        return Conclusion(answer.action.status, "user", answer)

    # --- what the hooks use ----------------------------------------------------------------

    async def ask(
        self,
        context: RoundContext,
        prompt: ModelRequest,
        parse: Callable[[str], A],
        look_again: Callable[[], Awaitable[ModelRequest | None]] | None = None,
    ) -> Asked[A]:
        return await ask_model(
            self.model,
            prompt,
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
    ) -> Result:
        """Run one tool; when `why` is given, only after the user said yes to it. A shell
        command also goes through the shell policy, whichever agent sends it. What is not
        run is a SKIPPED result that says why."""
        spec = next((s for s in specs if s.name == function), None)
        command = Command(
            tool_name=function,
            parameters=arguments,
            tool_type=spec.tool_type if spec else "action",
        )
        if function == ToolName.RUN_SHELL:
            decision = judge_command(
                str(arguments.get("command", "")), self.services.settings.shell_policy
            )
            if not decision.allowed:
                error = f"refused by the shell policy 'deny': the command {decision.reason}"
                return Result(status=ResultStatus.SKIPPED, error=error, call_id=command.call_id)
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
                return Result(status=ResultStatus.SKIPPED, error=reason, call_id=command.call_id)
        [result] = await self.services.dispatcher.execute([command])
        return result

    async def collect(self, function: str, **arguments: Any) -> Result:
        """Call a data-collection tool."""
        [result] = await self.services.dispatcher.execute(
            [Command(tool_name=function, parameters=arguments, tool_type="data_collection")]
        )
        return result

    def _remember(self, answer: StepAnswer, result: Result | None, reply: str | None) -> None:
        self.history.append(
            PastStep(
                function=answer.action.function,
                arguments=answer.action.arguments,
                status=answer.action.status.value,
                result_status=result.status.value if result else ("answered" if reply else None),
                output=result.result if result else reply,
                error=result.error if result else None,
                comment=answer.comment,
            )
        )

    def _post(
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
