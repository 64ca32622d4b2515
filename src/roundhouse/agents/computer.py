"""The computer agent: one computer-use model drives the whole round by pixels, as UFO's
single-tier agent does (`--agent computer`, with `anthropic:MODEL` or
`openai-computer:MODEL`).

Its step is the common one (agents/base.py): it observes a screenshot of the whole desktop
and what the last answer's actions did; the model's client (models/anthropic/) sends that
screenshot shrunk to the vendor's size as the result of those actions, and answers with
roundhouse's tool calls, their points already on the desktop (models/computer/screen.py);
they run through the dispatcher as every agent's do. A final text with no action is
FINISH, with the text as the round's result; a refusal is FAIL, named. An action the
vendor flagged with a safety check comes as CONFIRM: the person is asked first (--yes says
yes), and a no ends the round FAIL, naming the check.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from roundhouse.agents.action_list import Acted
from roundhouse.agents.asking import Asked
from roundhouse.agents.base import AgentCore, Conclusion, Ended, Seen, answered_status
from roundhouse.agents.prompting import (
    blackboard_text,
    describe_output,
    describe_step,
    template,
)
from roundhouse.agents.responses import ActionAnswer, StepAnswer
from roundhouse.core.commands import Result, ResultStatus
from roundhouse.core.context import RoundContext
from roundhouse.core.messages import Message
from roundhouse.core.states import AgentKind, Status
from roundhouse.core.trajectory import StepRecord
from roundhouse.devices.contract import Rect, ToolName
from roundhouse.devices.describing import ToolSpec
from roundhouse.models.computer.observation import (
    PIXEL_ACTIONS,
    ComputerObservation,
    Outcome,
    Screenshot,
)

# roundhouse's own tools on the controls of the window in front, beside the pixels.
IN_A_WINDOW = (ToolName.GET_CONTROLS, ToolName.CLICK_CONTROL, ToolName.SET_TEXT)

OUTPUT_LIMIT = 4000  # characters of a tool's result said back to the model


class ComputerAnswer(StepAnswer):
    """What the model's client makes of its answer: actions, or FINISH / FAIL with a result.
    safety_checks: what the vendor asks the person to confirm before the CONFIRM actions."""

    safety_checks: list[str] = []


@dataclass(kw_only=True)
class ComputerAgent(AgentCore[ComputerObservation, ComputerAnswer]):
    kind: AgentKind = AgentKind.COMPUTER
    name: str = "computer"
    answer_type: ClassVar = ComputerAnswer
    # The pixel tools the vendors' computer actions become, and roundhouse's own beside
    # them (a model that takes custom tools is offered those: models/anthropic/).
    functions: ClassVar[tuple[str, ...]] = (
        *PIXEL_ACTIONS,
        ToolName.LAUNCH_APPLICATION,
        ToolName.SELECT_WINDOW,
        ToolName.LIST_WINDOWS,
        *IN_A_WINDOW,
        ToolName.RUN_SHELL,
    )

    async def observe(
        self, context: RoundContext, specs: list[ToolSpec]
    ) -> Seen[ComputerObservation] | Ended[ComputerAnswer]:
        path = self.services.log_folder / f"computer_step{context.session.session_step}.png"
        shot = await self.collect(ToolName.CAPTURE_DESKTOP_SCREENSHOT, path=str(path))
        if not shot.ok or not isinstance(shot.result, dict):
            return Ended(failed(f"the desktop's screenshot could not be taken: {shot.error}"))
        left, top, right, bottom = shot.result["rect"]
        pixels = (int(shot.result["width"]), int(shot.result["height"]))
        steps = context.round.steps[self.since :]  # since its assignment (an AppAgent's)
        mine = [s for s in steps if s.agent_name == self.name and s.concluded]
        observation = ComputerObservation(
            conversation=self.conversation(context),
            screenshot=Screenshot(path, Rect(left, top, right, bottom), pixels),
            outcomes=outcomes(mine[-1]) if mine else (),
            request=self.request(context),
            blackboard=blackboard_text(context),
            history=self.history(context),
        )
        return Seen(observation, (path.name,))

    def conversation(self, context: RoundContext) -> str:
        """The client's transcript this step belongs to: one per round."""
        return f"round-{context.round.id}"

    def request(self, context: RoundContext) -> str:
        """What the model is asked to do: the person's request."""
        return context.round.request

    def render(
        self, seen: Seen[ComputerObservation], offered: list[ToolSpec]
    ) -> tuple[Message, ...]:
        shown = seen.observation
        steps = "\n".join(describe_step(i, s) for i, s in enumerate(shown.history, 1))
        knows = shown.blackboard
        user = template("computer_user.txt").substitute(
            request=shown.request,
            blackboard=f"What this session already knows:\n{knows}\n" if knows else "",
            history=f"Steps so far (the screen shows where they led):\n{steps}\n" if steps else "",
        )
        system = template("computer_system.txt").substitute()
        return (
            Message("system", system.strip()),
            Message("user", user.strip(), (shown.screenshot.file,)),
        )

    async def act(
        self,
        context: RoundContext,
        seen: Seen[ComputerObservation],
        action: ActionAnswer,
        asked: Asked[ComputerAnswer],
        specs: list[ToolSpec],
    ) -> Result:
        """As given; a CONFIRM action only after the person's yes to the vendor's checks."""
        why = None
        if action.status is Status.CONFIRM:
            checks = "; ".join(asked.answer.safety_checks) or "the model asked for a confirmation"
            why = f"the model's safety check: {checks}"
        return await self.run(action.function or "", action.arguments, specs, why)

    def conclude(
        self, context: RoundContext, seen: Seen[Any], answer: ComputerAnswer, acted: Acted
    ) -> Conclusion[ComputerAnswer]:
        """The answer's status; FAIL, saying why, when the person declined an action (a
        vendor's safety check, or a shell command the policy asked about), as the AppAgent's
        subtask does."""
        declined = next((r for r in acted.results if r.status is ResultStatus.SKIPPED), None)
        if declined is not None:
            result = f"declined: {declined.error}"
            return Conclusion(Status.FAIL, "user", answer.model_copy(update={"result": result}))
        return Conclusion(answered_status(answer, acted), "user", answer)


def said_of(output: Any) -> str:
    """A tool's result as its outcome says it: an action's effect, a data tool's data."""
    if output is None:
        return "done"
    text = describe_output(output)
    return text if len(text) <= OUTPUT_LIMIT else text[: OUTPUT_LIMIT - 1] + "…"


def failed(why: str) -> ComputerAnswer:
    return ComputerAnswer(
        observation="", thought="", action=[ActionAnswer(status=Status.FAIL)], result=why
    )


def outcomes(step: StepRecord) -> tuple[Outcome, ...]:
    """What each action of a step did, in the order its answer gave them."""
    said = []
    for action in step.actions:
        if action.result is None:
            said.append(Outcome(action.function, False, f"not run: {action.not_run or 'stopped'}"))
        elif action.result.status is ResultStatus.SKIPPED:
            why = action.result.error or "declined"
            said.append(Outcome(action.function, False, why, declined=True))
        elif action.result.ok:
            output = action.result.result
            said.append(Outcome(action.function, True, said_of(output), output=output))
        else:
            said.append(Outcome(action.function, False, action.result.error or "failed"))
    return tuple(said)
