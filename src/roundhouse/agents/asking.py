"""Ask a model until it gives a valid answer, sending each invalid one back with the
reason. Every completion's usage is counted as it comes (the rejected ones too) on the
record that asks: a step's, or the judge's. Pricing is the model pool's (models/priced.py)."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Generic, Protocol, TypeVar, cast

from roundhouse.agents.responses import InvalidAnswer
from roundhouse.core.events import AnswerRejected, EventBus, PromptSent
from roundhouse.core.limits import LimitReached
from roundhouse.core.messages import Message
from roundhouse.core.usage import Usage
from roundhouse.models.base import REFUSAL, LanguageModel, ModelError, ModelRequest, NoValidAnswer

T = TypeVar("T")


class Asker(Protocol):
    """The record a question is asked for, and its spending counted on: a step's
    (core/trajectory.StepRecord) or the judge's."""

    retries: int  # refused answers so far
    model_ms: float  # time spent waiting for the model so far

    @property
    def round_id(self) -> int | None: ...

    @property
    def agent_name(self) -> str: ...

    def spend(self, usage: Usage) -> None: ...


@dataclass(frozen=True)
class Asked(Generic[T]):
    answer: T
    raw: str
    image_scales: tuple[float, ...] = ()  # of the images sent with the accepted answer


async def ask_model(
    model: LanguageModel,
    request: ModelRequest,
    parse: Callable[[str], T],
    *,
    asker: Asker,
    retries: int,
    events: EventBus,
    look_again: Callable[[], Awaitable[ModelRequest | None]] | None = None,
) -> Asked[T]:
    """`look_again`, when given, refreshes what the answer is checked against and gives the
    request for the fresh view (None: nothing changed). An answer about a UI that has just
    changed is checked once more against the fresh view; refused there too, it goes back to
    the model with that view, not the one it answered about. The asker's retries, model
    time and usage are filled in as the attempts go, so a step cut short keeps them."""
    messages = list(request.messages)
    started = time.monotonic()
    reason = ""
    for attempt in range(retries + 1):
        asker.retries = attempt
        events.emit(PromptSent(asker.round_id, asker.agent_name, attempt + 1, tuple(messages)))
        try:
            completion = await model.complete(replace(request, messages=tuple(messages)))
        except (ModelError, LimitReached) as error:  # attempts made were requests all the same
            asker.spend(error.usage)
            raise
        finally:
            asker.model_ms = round((time.monotonic() - started) * 1000, 1)
        asker.spend(completion.usage)
        checked = await _check(parse, completion.text, look_again)
        if checked.fresh is not None:  # what the answer was refused against, and goes back with
            request, messages = checked.fresh, list(checked.fresh.messages)
        if checked.refusal is None:
            answer = cast(T, checked.answer)  # accepted: what parse() gave
            scales = tuple(float(x) for x in completion.extra.get("image_scales", ()))
            return Asked(answer, completion.text, scales)
        reason = checked.refusal
        events.emit(AnswerRejected(asker.round_id, asker.agent_name, attempt + 1, reason))
        messages += [
            Message("assistant", completion.text),
            Message("user", f"{REFUSAL} {reason}\n{RETRY_INSTRUCTION}"),
        ]
    raise NoValidAnswer(f"the model gave no valid answer in {retries + 1} attempts: {reason}")


@dataclass(frozen=True)
class _Checked(Generic[T]):
    answer: T | None = None  # when it was accepted
    refusal: str | None = None  # why the answer was refused, if it was
    fresh: ModelRequest | None = None  # the request for a view that changed meanwhile


async def _check(
    parse: Callable[[str], T],
    text: str,
    look_again: Callable[[], Awaitable[ModelRequest | None]] | None,
) -> _Checked[T]:
    try:
        return _Checked(parse(text))
    except InvalidAnswer as refused:
        fresh = await look_again() if look_again is not None else None
        if fresh is None:
            return _Checked(refusal=str(refused))
    try:
        return _Checked(parse(text), fresh=fresh)
    except InvalidAnswer as refused:
        return _Checked(refusal=str(refused), fresh=fresh)


RETRY_INSTRUCTION = "Answer again with exactly one JSON object in the required format."
