"""Every model call priced in one place, and the spending cap checked before each one.

The model pool hands out each model wrapped in a PricedModel: its completions come back
with their cost set (models/pricing.py), named one way (by the model the answer says it
came from, else the spec it was asked by), and a failed call's tokens are priced too.
What the session has spent is not kept here: it is the sum of the session's records
(core/record.py), which `spent` reads; max_cost is checked against that value before a
request goes out, as pydantic-ai checks its UsageLimits against its RunUsage.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from roundhouse.core.usage import Usage
from roundhouse.models.base import Completion, LanguageModel, ModelError, ModelRequest
from roundhouse.models.pricing import PriceTable


class CostLimitReached(RuntimeError):
    """max_cost is spent (or cannot be checked): no more model calls in this session."""


class Budget:
    """The session's spending cap, checked against what its records say was spent."""

    def __init__(self, max_cost: float | None, spent: Callable[[], Usage]) -> None:
        self.max_cost = max_cost
        self.spent = spent

    def check_before_request(self, model: str) -> None:
        if self.max_cost is None:
            return
        spent = self.spent()
        if spent.cost is None:
            raise CostLimitReached(
                f"max_cost is ${self.max_cost:g}, but what this session spent is unknown "
                f"(no price is known for a model it used; {model} is asked next): give the "
                "model's price under prices: in the settings"
            )
        if spent.cost >= self.max_cost:
            raise CostLimitReached(
                f"max_cost reached: {spent.cost_text} spent of ${self.max_cost:g}"
            )


class PricedModel:
    """`inner`, with every completion priced and the budget checked before each call."""

    def __init__(self, inner: LanguageModel, prices: PriceTable, budget: Budget) -> None:
        self.inner = inner
        self.name = inner.name
        self.prices = prices
        self.budget = budget

    async def complete(self, request: ModelRequest) -> Completion:
        self.budget.check_before_request(self.name)
        try:
            completion = await self.inner.complete(request)
        except ModelError as error:  # its failed attempts were requests all the same
            raise ModelError(str(error), usage=self.priced(self.name, error.usage)) from error
        return replace(completion, usage=self.priced(completion.model, completion.usage))

    def priced(self, model: str, usage: Usage) -> Usage:
        return self.prices.priced(model, usage)

    async def aclose(self) -> None:
        closer = getattr(self.inner, "aclose", None)
        if closer is not None:
            await closer()
