"""The agent step, written once: observe, ask the model (with retries), act or ask the user,
conclude. Each agent fills in the hooks (what it sees, how it is prompted, what it checks
in an answer, how it acts, what its answer comes to); none has a copy of the step.

    step   = a StepRecord on the round's record, filled in from here on
    seen   = await self.observe(context, specs)          # hook (or the step ends here)
    prompt = self.render(seen, offered)                   # hook
    asked  = await self.ask(step, prompt, parse)          # parse = the answer type + check()
             (a FINISH right after an action of its own not seen: observed and asked once
             more, told so; a FINISH whose own last action is not seen waits a step)
    acted  = the answer's actions in turn: each act(...)  # hook; recheck(...) before each
             after the first, stop_reason(...) after each (agents/action_list.py)
             (or the user is asked: PENDING)
    end    = self.conclude(context, seen, answer, acted)  # hook: the status it comes to
    return   Concluded(step, the transition of that status)   # looked up once, here

A step is one answer: one model call (and the calls its invalid answers cost), and the
actions it held. The step record is the one record of the step: the history the next
prompts show (`history`: an entry per action), the round's posts and everything logged
are derived from it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar, Generic, TypeVar, cast

from roundhouse.agents.action_list import Acted, stop_reason, stopped_after, stopped_before
from roundhouse.agents.asking import Asked, ask_model
from roundhouse.agents.responses import ActionAnswer, StepAnswer, answer_schema, parse_answer
from roundhouse.config import Settings
from roundhouse.core.commands import Command, Result, ResultStatus
from roundhouse.core.context import RoundContext
from roundhouse.core.events import EventBus, StepAnswered
from roundhouse.core.messages import Message
from roundhouse.core.states import AgentKind, Status, Transition, transition
from roundhouse.core.trajectory import ActionRecord, StepRecord
from roundhouse.core.user import UserChannel, refusal
from roundhouse.devices.base import Dispatcher
from roundhouse.devices.contract import ToolName
from roundhouse.devices.describing import ToolSpec
from roundhouse.devices.shell import destructive_reason
from roundhouse.models.base import DOUBT, LanguageModel, ModelRequest, OfferedTool
from roundhouse.models.observation import PastStep, past_steps

Obs = TypeVar("Obs")  # what the agent observes
A = TypeVar("A", bound=StepAnswer)  # what it must answer
LOOK_AGAIN_PAUSE = 0.5  # seconds a UI gets to finish changing before it is looked at again


@dataclass(kw_only=True)
class AgentServices:
    """What every agent is built with, passed down from the session."""

    settings: Settings
    dispatcher: Dispatcher
    user: UserChannel
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


@dataclass(frozen=True)
class Concluded:
    """A step as it ended: its record, status set, and where the transition table sends the
    round from it. The table is asked once, here; the round carries the answer out."""

    step: StepRecord
    move: Transition


@dataclass(kw_only=True)
class AgentCore(Generic[Obs, A]):
    model: LanguageModel
    services: AgentServices
    kind: AgentKind
    name: str
    since: int = 0  # the round step after which this agent's history starts (its assignment)
    # The actions (round, round step, action number) whose unseen effect the model was told
    # of before its FINISH: told once each.
    told: set[tuple[int, int, int]] = field(default_factory=set)
    tell_next: tuple[int, str] | None = None  # (round id, what): for the next step to tell

    answer_type: ClassVar[type[StepAnswer]]
    functions: ClassVar[tuple[str, ...]]  # the tools this agent may call, if served
    # Whether its FINISH is the outcome of its own actions, to be asked about once after one
    # whose effect was not seen. The host's is its subtasks' (it only opened windows).
    finishes_its_actions: ClassVar[bool] = True

    # --- the step ------------------------------------------------------------------------

    async def handle(self, context: RoundContext) -> Concluded:
        round_ = context.round
        step = StepRecord(
            session_step=context.session.session_step + 1,
            round_id=round_.id,
            round_step=round_.round_step + 1,
            agent=self.kind,
            agent_name=self.name,
            started=time.time(),
        )
        round_.steps.append(step)  # on the record from now: a step cut short stays on it
        specs = await self.services.dispatcher.tool_specs()
        offered = [spec for spec in specs if spec.name in self.functions]
        told = self._told_now(context)  # a FINISH the step before did not let stand
        if told is not None:
            await self._pause(specs)  # a late effect shows in this look
        seen = await self.observe(context, specs)
        if isinstance(seen, Ended):
            return self._conclude(context, step, Seen(None), seen.answer, Acted())
        current: Seen[Obs] = seen
        step.screenshots = list(seen.screenshots)

        most = self.services.settings.max_actions

        def parse(text: str) -> A:
            names = [spec.name for spec in offered]
            answer = cast(
                A,
                parse_answer(
                    text, self.answer_type, agent=self.kind, functions=names, max_actions=most
                ),
            )
            self.check(current, answer)
            return answer

        def request_for(seen: Seen[Obs]) -> ModelRequest:
            return ModelRequest(
                agent=self.kind.value,
                messages=self.render(seen, offered),
                observation=seen.observation,
                response_schema=answer_schema(self.answer_type, most),
                tools=tuple(OfferedTool(s.name, s.description, s.parameters) for s in offered),
            )

        async def look_again() -> ModelRequest | None:
            nonlocal current
            fresh = await self.look_again(current)
            if fresh is None:
                return None
            current = fresh
            return request_for(current)

        async def ask_again(told: str) -> Asked[A] | Ended[A]:
            """The model asked once more, with a fresh look and `told` after it."""
            nonlocal current
            await self._pause(specs)  # a late effect shows in this look
            fresh = await self.observe(context, specs)
            if isinstance(fresh, Ended):
                return fresh
            current = fresh
            spent, retries = step.model_ms, step.retries
            again = await self.ask(step, _telling(request_for(current), told), parse, look_again)
            step.model_ms, step.retries = step.model_ms + spent, step.retries + retries
            return again

        asked = await self.ask(step, _telling(request_for(current), told), parse, look_again)
        unseen = self._unseen_before(context, asked.answer)
        if unseen is not None:
            # A FINISH after an action whose effect was not seen: told so once, with a fresh
            # look, before it stands. The answer given then is the step's.
            again = await ask_again(unseen)
            if isinstance(again, Ended):
                return self._conclude(context, step, Seen(None), again.answer, Acted())
            asked = again
        answer = asked.answer
        calls = to_run(answer)
        step.actions = [
            ActionRecord(function=a.function or "", arguments=a.arguments) for a in calls
        ]
        self.services.events.emit(StepAnswered(round_, step))  # checkpointed before it acts
        started = time.monotonic()
        acted = await self._act_in_turn(context, current, calls, asked, specs, step.actions)
        if answer.status is Status.PENDING and acted.stopped is None:
            step.question = answer.question or ""
            step.user_reply = await self.ask_user(context, step.question)
        step.action_ms = round((time.monotonic() - started) * 1000, 1)
        unseen = self._unseen_last(context, step, answer, acted)
        if unseen is not None:
            # Its own last action showed nothing, and the answer says FINISH: not yet. The
            # step goes on, and the next one tells the model so, with the look it takes.
            self.tell_next = (context.round.id, unseen)
            acted = Acted(acted.results, "its FINISH waits: its last effect was not seen")
        if answer.status is Status.SCREENSHOT:
            # "Look again" means after a moment: a look costs a few ms where reads are kept
            # warm, and an agent waiting for a window to close would use up its looks at once.
            await self._pause(specs)
        return self._conclude(context, step, current, answer, acted)

    async def _act_in_turn(
        self,
        context: RoundContext,
        seen: Seen[Obs],
        calls: list[ActionAnswer],
        asked: Asked[A],
        specs: list[ToolSpec],
        records: list[ActionRecord],
    ) -> Acted:
        """The answer's actions in order, each record filled in as it runs, until one shows
        that the rest must not run unseen (agents/action_list.py); those say why not."""
        results: list[Result] = []
        for number, (action, record) in enumerate(zip(calls, records, strict=True), 1):
            if number > 1:
                changed = await self.recheck(seen, action)
                if changed is not None:
                    return _stop(results, records[number - 1 :], stopped_before(number, changed))
            result = await self.act(context, seen, action, asked, specs)
            record.result = result
            results.append(result)
            why = (
                stop_reason(record.function, result, joined=action.joined_to_next)
                if number < len(calls)
                else None
            )
            if why is not None:
                return _stop(results, records[number:], stopped_after(number, record.function, why))
        return Acted(tuple(results))

    async def _pause(self, specs: list[ToolSpec]) -> None:
        """A moment for the UI to finish changing (the wait tool: a pause, then the settle)."""
        if any(spec.name == ToolName.WAIT for spec in specs):
            await self.collect(ToolName.WAIT, seconds=LOOK_AGAIN_PAUSE)

    def _told_now(self, context: RoundContext) -> str | None:
        """What the step before left to tell the model in this one's first request."""
        pending, self.tell_next = self.tell_next, None
        if pending is None or pending[0] != context.round.id:
            return None
        return pending[1]

    def _unseen_before(self, context: RoundContext, answer: A) -> str | None:
        """What the model is told when it answers FINISH, acting no more, right after an
        action of its own whose effect was not seen, and has not been told so yet."""
        if not self.finishes_its_actions or answer.status is not Status.FINISH or to_run(answer):
            return None
        for step in reversed(context.round.steps[self.since :]):
            if step.agent_name != self.name or not step.concluded or not step.ran:
                continue
            number = max(n for n, action in enumerate(step.actions, 1) if action.ran)
            return self._tell(context, step, number)
        return None

    def _unseen_last(
        self, context: RoundContext, step: StepRecord, answer: A, acted: Acted
    ) -> str | None:
        """The same, for a FINISH whose own last action ran and showed nothing."""
        if not self.finishes_its_actions or answer.status is not Status.FINISH:
            return None
        if acted.stopped is not None or not step.ran:
            return None
        return self._tell(context, step, max(n for n, a in enumerate(step.actions, 1) if a.ran))

    def _tell(self, context: RoundContext, step: StepRecord, number: int) -> str | None:
        """What to tell the model of action `number` of `step`, once: None where its effect
        was seen, or the model was told already."""
        action = step.actions[number - 1]
        output = action.result.result if action.result is not None else None
        key = (context.round.id, step.round_step, number)
        if action.function == ToolName.WAIT or key in self.told:
            return None
        if not (isinstance(output, dict) and output.get("effect") == "not seen"):
            return None
        self.told.add(key)
        call = f"{action.function}({json.dumps(action.arguments, ensure_ascii=False)})"
        return (
            f"{DOUBT} your last action, {call}, showed no effect (effect not seen:"
            f" {output.get('seen', '')}). Above is the window as it is now, looked at once"
            " more. Answer FINISH only if what the subtask asks for is there now; if it is"
            " not, act again, or answer FAIL saying which step did not work."
        )

    def _conclude(
        self,
        context: RoundContext,
        step: StepRecord,
        seen: Seen[Any],
        answered: A,
        acted: Acted,
    ) -> Concluded:
        """The step as its answer came to (the conclude hook): its status, what it did and
        said, to whom its post goes, and where the round goes from it."""
        end = self.conclude(context, seen, answered, acted)
        move = transition(self.kind, end.status)
        answer = end.answer
        if move.round_end:
            context.round.result = answer.result
        step.observation = answer.observation
        step.thought = answer.thought
        step.plan = answer.plan
        step.comment = answer.comment
        step.answer = answer.result
        step.send_to = end.send_to
        step.subtask = end.subtask
        step.status = end.status  # last: a step is concluded once it has a status
        return Concluded(step, move)

    def history(self, context: RoundContext) -> tuple[PastStep, ...]:
        """This agent's concluded steps since its assignment, as its next prompt shows them:
        an entry per action (and one for an answer that called none)."""
        return tuple(
            entry
            for step in context.round.steps[self.since :]
            if step.agent_name == self.name and step.concluded
            for entry in past_steps(step)
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

    async def recheck(self, seen: Seen[Obs], action: ActionAnswer) -> str | None:
        """Before an action after the first of a list: why its target is not there as the
        model saw it (None: it is, or it names none)."""
        return None

    async def act(
        self,
        context: RoundContext,
        seen: Seen[Obs],
        action: ActionAnswer,
        asked: Asked[A],
        specs: list[ToolSpec],
    ) -> Result:
        """Run one of the answer's actions: by default as given, asking first when it is
        CONFIRM."""
        why = "the model asked for a confirmation" if action.status is Status.CONFIRM else None
        return await self.run(action.function or "", action.arguments, specs, why)

    def conclude(
        self, context: RoundContext, seen: Seen[Any], answer: A, acted: Acted
    ) -> Conclusion[A]:
        """What the answer comes to: by default its own status, posted to the user."""
        return Conclusion(answered_status(answer, acted), "user", answer)

    # --- what the hooks use ----------------------------------------------------------------

    async def ask(
        self,
        step: StepRecord,
        prompt: ModelRequest,
        parse: Callable[[str], A],
        look_again: Callable[[], Awaitable[ModelRequest | None]] | None = None,
    ) -> Asked[A]:
        return await ask_model(
            self.model,
            prompt,
            parse,
            asker=step,
            retries=self.services.settings.answer_retries,
            events=self.services.events,
            look_again=look_again,
        )

    async def ask_user(self, context: RoundContext, question: str) -> str | None:
        reply = await self.services.user.ask(question)
        context.session.blackboard.add_question(question, reply)
        return reply

    async def run(
        self, function: str, arguments: dict[str, Any], specs: list[ToolSpec], why: str | None
    ) -> Result:
        """Run one tool; when `why` is given, only after the user said yes to it. What is
        not run is a SKIPPED result that says why. A destructive shell command is asked
        about where it runs (devices/shell.py, whichever agent or client sent it), so not
        twice here."""
        spec = next((s for s in specs if s.name == function), None)
        command = Command(
            tool_name=function,
            parameters=arguments,
            tool_type=spec.tool_type if spec else "action",
        )
        if function == ToolName.RUN_SHELL and destructive_reason(str(arguments.get("command"))):
            why = None
        if why is not None:
            refused = await refusal(self.services.user, f"{self.name}: {function} {arguments}", why)
            if refused is not None:
                return Result(status=ResultStatus.SKIPPED, error=refused, call_id=command.call_id)
        [result] = await self.services.dispatcher.execute([command])
        return result

    async def collect(self, function: str, **arguments: Any) -> Result:
        """Call a data-collection tool."""
        [result] = await self.services.dispatcher.execute(
            [Command(tool_name=function, parameters=arguments, tool_type="data_collection")]
        )
        return result


def _telling(request: ModelRequest, told: str | None) -> ModelRequest:
    """`request` with `told` said after it, if anything is to be told."""
    if told is None:
        return request
    return replace(request, messages=(*request.messages, Message("user", told)))


def to_run(answer: StepAnswer) -> list[ActionAnswer]:
    """The actions of an answer that are meant to run: every one of a list but its last,
    and the last unless its status runs nothing (SCREENSHOT looks again, PENDING asks)."""
    last = answer.last
    runs = last.function is not None and last.status not in (Status.SCREENSHOT, Status.PENDING)
    return [*answer.actions[:-1], *([last] if runs else [])]


def answered_status(answer: StepAnswer, acted: Acted) -> Status:
    """The answer's status, or CONTINUE when its list stopped early: the model is asked
    again, seeing what ran, before anything its answer meant for the end."""
    return Status.CONTINUE if acted.stopped is not None else answer.status


def _stop(results: list[Result], rest: list[ActionRecord], why: str) -> Acted:
    for record in rest:
        record.not_run = why
    return Acted(tuple(results), why)
