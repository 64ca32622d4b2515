"""Usage is a value; cost is derived from it with a price table.

An unknown price gives an unknown Cost, which stays unknown when added to anything:
roundhouse never prints $0.00 for a price it does not know.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from roundhouse.config import Price
from roundhouse.models.base import Usage

# Models that run on this machine cost nothing, and we know it.
FREE_MODELS = frozenset({"offline"})


@dataclass(frozen=True)
class Cost:
    dollars: float | None  # None: the price is unknown

    @property
    def known(self) -> bool:
        return self.dollars is not None

    def __add__(self, other: Cost) -> Cost:
        if self.dollars is None or other.dollars is None:
            return UNKNOWN_COST
        return Cost(self.dollars + other.dollars)

    def __str__(self) -> str:
        return "unknown" if self.dollars is None else f"${self.dollars:.2f}"


ZERO_COST = Cost(0.0)
UNKNOWN_COST = Cost(None)


class PriceTable:
    def __init__(self, prices: Mapping[str, Price] | None = None) -> None:
        self._prices = dict(prices or {})

    def price(self, model: str) -> Price | None:
        if model in self._prices:
            return self._prices[model]
        if model in FREE_MODELS:
            return Price(input_per_mtok=0, output_per_mtok=0)
        return None

    def cost(self, model: str, usage: Usage) -> Cost:
        if usage == Usage():
            return ZERO_COST
        price = self.price(model)
        if price is None:
            return UNKNOWN_COST
        dollars = (
            usage.input_tokens * price.input_per_mtok + usage.output_tokens * price.output_per_mtok
        ) / 1_000_000
        return Cost(dollars)
