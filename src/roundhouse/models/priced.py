"""Every model call priced in one place, and held to the session's limits before each one.

The model pool hands out each model wrapped in a PricedModel: its completions come back
with their cost set (models/pricing.py), named one way (by the model the answer says it
came from, else the spec it was asked by), and a failed call's tokens are priced too.
What the session has spent is not kept here: it is the sum of the session's records
(core/record.py), which `spent` reads; the limits (core/limits.py: requests, tokens, cost)
are checked against that value before a request goes out, as pydantic-ai checks its
UsageLimits against its RunUsage. A model that sends a request again by itself (the OpenAI
client's retries) asks `before_retry` first, so that no request past a limit leaves.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from roundhouse.core.limits import Limits
from roundhouse.core.usage import Usage
from roundhouse.models.base import Completion, LanguageModel, ModelError, ModelRequest
from roundhouse.models.pricing import PriceTable


class PricedModel:
    """`inner`, with every completion priced and the limits checked before each request."""

    def __init__(
        self,
        inner: LanguageModel,
        prices: PriceTable,
        limits: Limits,
        spent: Callable[[], Usage],
    ) -> None:
        """`spent`: what the session has spent so far (its records' sum)."""
        self.inner = inner
        self.name = inner.name
        self.prices = prices
        self.limits = limits
        self.spent = spent

    async def complete(self, request: ModelRequest) -> Completion:
        self.limits.check_request(self.spent(), self.name)
        try:
            completion = await self.inner.complete(replace(request, before_retry=self._retry))
        except ModelError as error:  # its failed attempts were requests all the same
            raise ModelError(str(error), usage=self.priced(self.name, error.usage)) from error
        return replace(completion, usage=self.priced(completion.model, completion.usage))

    def _retry(self, attempts: Usage) -> None:
        """Before the request is sent again, with what its attempts spent so far (on no
        record yet): LimitReached, carrying that, when the limits allow no more."""
        self.limits.check_request(self.spent(), self.name, self.priced(self.name, attempts))

    def priced(self, model: str, usage: Usage) -> Usage:
        return self.prices.priced(model, usage)

    async def aclose(self) -> None:
        closer = getattr(self.inner, "aclose", None)
        if closer is not None:
            await closer()
