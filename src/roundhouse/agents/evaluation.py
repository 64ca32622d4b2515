"""The EvaluationAgent: a model judges a round (or a session) from its evidence.

It reads the request, every step's thought, action and result, the annotated screenshots
of the steps (capped) and the final screenshots. The round's own FINISH is never taken as
proof; the prompt says so.

It asks as the agents do (agents/asking.py): an invalid answer goes back to the model with
the error, up to `retries` times, its prompts go to request.log, and every call is counted,
priced by the model pool. If the model still gives none (or cannot be reached, or the
session's limits allow it no request), the verdict is "unsure" with the reason why: judging
is advice about a round that has already ended, so it never fails the round, and "unsure"
is never mistaken for success.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from roundhouse.agents.asking import ask_model
from roundhouse.agents.parsing import AnswerFormatError, extract_json_object
from roundhouse.agents.prompting import template
from roundhouse.agents.responses import InvalidAnswer
from roundhouse.core.evaluation import Evaluation, SubScore, Verdict
from roundhouse.core.events import EventBus
from roundhouse.core.limits import LimitReached
from roundhouse.core.messages import Message
from roundhouse.core.record import RoundRecord
from roundhouse.core.trajectory import StepRecord
from roundhouse.core.usage import NOTHING_SPENT, Usage
from roundhouse.models.base import LanguageModel, ModelError, ModelRequest, NoValidAnswer

log = logging.getLogger(__name__)

FIELD_LIMIT = 1000  # characters of one step field shown to the judge (shell output is long)


class EvaluationAnswer(BaseModel):
    """What the judge must answer."""

    model_config = ConfigDict(extra="ignore")

    reason: str
    sub_scores: list[SubScore] = []
    complete: Verdict

    # "Yes" and "YES " mean yes: not worth a retry.
    @field_validator("complete", mode="before")
    @classmethod
    def _lower(cls, value: Any) -> Any:
        return _lower(value)

    @field_validator("sub_scores", mode="before")
    @classmethod
    def _lower_sub_scores(cls, value: Any) -> Any:
        if not isinstance(value, list):
            return value
        return [
            {**item, "evaluation": _lower(item.get("evaluation"))}
            if isinstance(item, dict)
            else item
            for item in value
        ]


def _lower(value: Any) -> Any:
    return value.strip().lower() if isinstance(value, str) else value


# ------------------------------------ the evidence (pure but for checking files exist)


@dataclass(frozen=True)
class Evidence:
    text: str
    images: tuple[Path, ...]


def _clip(text: str, limit: int = FIELD_LIMIT) -> str:
    text = text.strip()
    return text if len(text) <= limit else f"{text[:limit]} … [{len(text) - limit} more characters]"


def render_step(step: StepRecord) -> str:
    lines = [f"Step {step.round_step} — {step.agent_name} ({step.agent}), status {step.status}"]
    if step.thought:
        lines.append(f"  thought: {_clip(step.thought)}")
    for action in step.actions:
        arguments = json.dumps(action.arguments, ensure_ascii=False)
        lines.append(f"  action: {action.function}({_clip(arguments)})")
        if action.result is not None:
            outcome = action.result.error if action.result.error else action.result.result
            shown = outcome if isinstance(outcome, str) else json.dumps(outcome, default=str)
            lines.append(f"  result: {action.result.status}: {_clip(shown)}")
        else:
            lines.append(f"  not run: {action.not_run or 'the step ended first'}")
    if step.answer:
        lines.append(f"  answer: {_clip(step.answer)}")
    if step.question:
        lines.append(f"  asked the user: {_clip(step.question)} — reply: {step.user_reply}")
    return "\n".join(lines)


def render_round(round_: RoundRecord) -> str:
    outcome = f"{round_.state}"
    if round_.result:
        outcome += f", result: {_clip(round_.result)}"
    if round_.error:
        outcome += f", error: {_clip(round_.error)}"
    steps = "\n".join(render_step(step) for step in round_.steps) or (
        "(no steps: no agent acted on the desktop or the shell in this round)"
    )
    return (
        f"Round {round_.id}\n"
        f"Request: {round_.user_query}\n"
        f"How the round ended (the agents' own account, not proof): {outcome}\n"
        f"Steps ({len(round_.steps)}):\n{steps}"
    )


def step_screenshots(step: StepRecord) -> list[str]:
    """The annotated screenshots of a step when it has any (they show the chosen control)."""
    annotated = [name for name in step.screenshots if name.endswith("_annotated.png")]
    return annotated or list(step.screenshots)


def choose_images(
    rounds: list[RoundRecord], log_dir: Path, max_images: int
) -> list[tuple[str, Path]]:
    """(label, path) of the screenshots to show: the final ones first, then the latest steps'.

    Files that are not on disk are left out (a round that crashed may not have them).
    """
    finals = [
        (f"round {r.id} final: {name}", log_dir / name)
        for r in rounds
        for name in r.final_screenshots
    ]
    steps = [
        (f"round {r.id} step {step.round_step}: {name}", log_dir / name)
        for r in rounds
        for step in r.steps
        for name in step_screenshots(step)
    ]
    finals = _latest([item for item in finals if item[1].is_file()], max_images)
    steps = _latest([item for item in steps if item[1].is_file()], max_images - len(finals))
    return steps + finals  # in time order: the steps, then the end


def _latest(items: list[tuple[str, Path]], count: int) -> list[tuple[str, Path]]:
    return items[max(0, len(items) - count) :] if count > 0 else []


def gather_evidence(
    rounds: list[RoundRecord], log_dir: Path, max_images: int, scope: str
) -> Evidence:
    chosen = choose_images(rounds, log_dir, max_images)
    images = "\n".join(f"{n}. {label}" for n, (label, _) in enumerate(chosen, 1)) or "(none)"
    text = template("evaluation_user.txt").substitute(
        scope=scope,
        rounds="\n\n".join(render_round(r) for r in rounds),
        images=images,
    )
    return Evidence(text, tuple(path for _, path in chosen))


def answer_problem(error: AnswerFormatError | ValidationError) -> str:
    if isinstance(error, AnswerFormatError):
        return str(error)
    problems = [
        f"{'.'.join(str(part) for part in problem['loc']) or 'answer'}: {problem['msg']}"
        for problem in error.errors()
    ]
    return "; ".join(problems)


def parse_answer(text: str) -> EvaluationAnswer:
    """The judge's answer, or AnswerFormatError / ValidationError saying what is wrong."""
    return EvaluationAnswer.model_validate(extract_json_object(text))


# ---------------------------------------------------------------- the agent


ROUND_SCOPE = "Judge whether this round fulfilled its request."
SESSION_SCOPE = "Judge whether the session as a whole fulfilled every request below, in order."


@dataclass
class JudgeAsker:
    """What the judge's questions spent (agents/asking.Asker), for its verdict."""

    round_id: int | None
    agent_name: str = "eval"
    retries: int = 0
    model_ms: float = 0.0
    usage: Usage = NOTHING_SPENT

    def spend(self, usage: Usage) -> None:
        self.usage += usage


class EvaluationAgent:
    """An Evaluator (see roundhouse.core.judge) backed by a language model."""

    def __init__(
        self, model: LanguageModel, events: EventBus, max_images: int = 6, retries: int = 3
    ) -> None:
        self.model = model
        self.events = events
        self.max_images = max_images
        self.retries = retries

    async def evaluate_round(self, round_: RoundRecord, log_dir: Path) -> Evaluation:
        evidence = gather_evidence([round_], log_dir, self.max_images, ROUND_SCOPE)
        return await self._judge(evidence, round_id=round_.id)

    async def evaluate_session(self, rounds: list[RoundRecord], log_dir: Path) -> Evaluation:
        if not rounds:
            return Evaluation(
                evaluator=self.model.name, complete="unsure", reason="the session has no rounds"
            )
        # Only the final screenshots of each round: the steps were judged round by round.
        finals_only = [r.model_copy(update={"steps": _without_screenshots(r)}) for r in rounds]
        evidence = gather_evidence(finals_only, log_dir, self.max_images, SESSION_SCOPE)
        return await self._judge(evidence, round_id=None)

    async def _judge(self, evidence: Evidence, round_id: int | None) -> Evaluation:
        request = ModelRequest(
            agent="eval",
            messages=(
                Message("system", template("evaluation_system.txt").template),
                Message("user", evidence.text, evidence.images),
            ),
            response_schema=EvaluationAnswer.model_json_schema(),
        )
        asker = JudgeAsker(round_id)
        try:
            asked = await ask_model(
                self.model,
                request,
                parse_verdict,
                asker=asker,
                retries=self.retries,
                events=self.events,
            )
        except (ModelError, LimitReached) as error:  # a spent limit too: the round has ended
            log.warning("the evaluation model could not be asked: %s", error)
            reason = f"evaluator could not be asked: {error}"
            return self._verdict(round_id, None, reason, asker.usage)
        except NoValidAnswer as error:
            return self._verdict(round_id, None, f"evaluator: {error}", asker.usage)
        return self._verdict(round_id, asked.answer, asked.answer.reason, asker.usage)

    def _verdict(
        self, round_id: int | None, answer: EvaluationAnswer | None, reason: str, spent: Usage
    ) -> Evaluation:
        return Evaluation(
            round_id=round_id,
            evaluator=self.model.name,
            complete=answer.complete if answer else "unsure",
            reason=reason,
            sub_scores=answer.sub_scores if answer else [],
            usage=spent,
        )


def parse_verdict(text: str) -> EvaluationAnswer:
    """The judge's answer, or InvalidAnswer saying what is wrong (it goes back to it)."""
    try:
        return parse_answer(text)
    except (AnswerFormatError, ValidationError) as error:
        raise InvalidAnswer(answer_problem(error)) from None


def _without_screenshots(round_: RoundRecord) -> list[StepRecord]:
    return [step.model_copy(update={"screenshots": []}) for step in round_.steps]
