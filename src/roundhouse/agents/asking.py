"""Ask a model until it gives a valid answer, sending each invalid one back with the
reason. Every completion's usage is counted, the rejected ones too."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Generic, TypeVar

from roundhouse.agents.responses import InvalidAnswer
from roundhouse.core.context import RoundContext
from roundhouse.core.events import AnswerRejected, EventBus, PromptSent
from roundhouse.models.base import (
    NOTHING_SPENT,
    LanguageModel,
    Message,
    ModelError,
    ModelRequest,
    NoValidAnswer,
    Usage,
)
from roundhouse.models.pricing import PriceTable

T = TypeVar("T")


@dataclass(frozen=True)
class Asked(Generic[T]):
    answer: T
    raw: str
    usage: Usage  # priced: every attempt of this step, the rejected ones too
    retries: int
    model_ms: float
    image_scales: tuple[float, ...] = ()  # of the images sent with the accepted answer


async def ask_model(
    model: LanguageModel,
    request: ModelRequest,
    parse: Callable[[str], T],
    *,
    context: RoundContext,
    prices: PriceTable,
    retries: int,
    events: EventBus,
    agent_name: str,
    look_again: Callable[[], Awaitable[bool]] | None = None,
) -> Asked[T]:
    """`look_again`, when given, refreshes what the answer is checked against and says
    whether anything changed: an answer about a UI that has just changed is checked once
    more against the fresh view before it goes back to the model."""
    messages = list(request.messages)
    usage = NOTHING_SPENT
    started = time.monotonic()
    reason = ""
    for attempt in range(retries + 1):
        events.emit(PromptSent(context.round_id, agent_name, attempt + 1, tuple(messages)))
        try:
            completion = await model.complete(replace(request, messages=tuple(messages)))
        except ModelError as error:  # the failed attempts were requests all the same
            context.add_usage(prices.priced(getattr(model, "model", model.name), error.usage))
            raise
        spent = prices.priced(completion.model, completion.usage)
        usage += spent
        context.add_usage(spent)
        try:
            answer = await _parse(parse, completion.text, look_again)
        except InvalidAnswer as error:
            reason = str(error)
            events.emit(AnswerRejected(context.round_id, agent_name, attempt + 1, reason))
            messages += [
                Message("assistant", completion.text),
                Message("user", f"That answer is invalid: {reason}\n{RETRY_INSTRUCTION}"),
            ]
            continue
        elapsed = (time.monotonic() - started) * 1000
        scales = tuple(float(x) for x in completion.extra.get("image_scales", ()))
        return Asked(answer, completion.text, usage, attempt, elapsed, scales)
    raise NoValidAnswer(f"the model gave no valid answer in {retries + 1} attempts: {reason}")


async def _parse(
    parse: Callable[[str], T], text: str, look_again: Callable[[], Awaitable[bool]] | None
) -> T:
    try:
        return parse(text)
    except InvalidAnswer:
        if look_again is None or not await look_again():
            raise
        return parse(text)  # still invalid against the fresh view: it goes back to the model


RETRY_INSTRUCTION = "Answer again with exactly one JSON object in the required format."
