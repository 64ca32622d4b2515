"""Usage is a value; cost is derived from it with a price table.

Prices come from the maintained genai-prices library (its bundled snapshot: no network),
overridden by the `prices:` section of the settings (dollars per million tokens). Models
that run on this machine ("offline") are free. A model nobody knows the price of gives an
unknown Cost, which stays unknown when added to anything: roundhouse never prints $0.00
for a price it does not know.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal

import genai_prices

from roundhouse.config import Price
from roundhouse.models.base import Usage

log = logging.getLogger(__name__)

# Models that run on this machine cost nothing, and we know it.
FREE_MODELS = frozenset({"offline"})
# `--model openai:gpt-4o-mini` and a Completion.model of "gpt-4o-mini" are the same price.
PROVIDER_PREFIXES = ("openai:",)


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
        if self.dollars is None:
            return "unknown"
        if 0 < self.dollars < 0.01:  # a cheap model's step is not free: show its digits
            return f"${self.dollars:.6f}".rstrip("0")
        return f"${self.dollars:.2f}"


ZERO_COST = Cost(0.0)
UNKNOWN_COST = Cost(None)


def bare_name(model: str) -> str:
    for prefix in PROVIDER_PREFIXES:
        if model.startswith(prefix):
            return model[len(prefix) :]
    return model


def library_price(model: str) -> Price | None:
    """The per-million-token price genai-prices knows (None: unknown, or priced by tiers)."""
    found = _library_calculation(model, genai_prices.Usage(input_tokens=0, output_tokens=0))
    if found is None:
        return None
    prices = found.model_price
    input_mtok = getattr(prices, "input_mtok", None)
    output_mtok = getattr(prices, "output_mtok", None)
    if not isinstance(input_mtok, Decimal) or not isinstance(output_mtok, Decimal):
        return None  # tiered prices depend on the prompt size: only a cost can be computed
    return Price(input_per_mtok=float(input_mtok), output_per_mtok=float(output_mtok))


def price_usage(
    model: str, usage: Usage, overrides: Mapping[str, Price] | None = None, *, library: bool = True
) -> Cost:
    """The cost of usage on model: an override, a free model, genai-prices, or unknown."""
    if usage == Usage():
        return ZERO_COST
    override = _override(model, overrides or {})
    if override is not None:
        return Cost(
            (
                usage.input_tokens * override.input_per_mtok
                + usage.output_tokens * override.output_per_mtok
            )
            / 1_000_000
        )
    if bare_name(model) in FREE_MODELS:
        return ZERO_COST
    if not library:
        return UNKNOWN_COST
    tokens = genai_prices.Usage(input_tokens=usage.input_tokens, output_tokens=usage.output_tokens)
    found = _library_calculation(model, tokens)
    return UNKNOWN_COST if found is None else Cost(float(found.total_price))


def _override(model: str, overrides: Mapping[str, Price]) -> Price | None:
    for key in (model, bare_name(model), f"{PROVIDER_PREFIXES[0]}{bare_name(model)}"):
        if key in overrides:
            return overrides[key]
    return None


def _library_calculation(
    model: str, usage: genai_prices.Usage
) -> genai_prices.types.PriceCalculation | None:
    try:
        return genai_prices.calc_price(usage, bare_name(model))
    except LookupError:
        log.debug("genai-prices does not know the price of %r", model)
        return None


class PriceTable:
    """The prices of one run: overrides from the settings over genai-prices."""

    def __init__(self, prices: Mapping[str, Price] | None = None, *, library: bool = True) -> None:
        self._prices = dict(prices or {})
        self._library = library

    def price(self, model: str) -> Price | None:
        override = _override(model, self._prices)
        if override is not None:
            return override
        if bare_name(model) in FREE_MODELS:
            return Price(input_per_mtok=0, output_per_mtok=0)
        return library_price(model) if self._library else None

    def cost(self, model: str, usage: Usage) -> Cost:
        return price_usage(model, usage, self._prices, library=self._library)
