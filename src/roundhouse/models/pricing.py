"""Usage is a value; its cost is set from a price table.

Prices come from the maintained genai-prices library (its bundled snapshot: no network),
overridden by the `prices:` section of the settings (dollars per million tokens). Models
that run on this machine ("offline") are free, and so are the open models on a server of
the user's own (`uitars:`, `qwen-vl:`, `opencua:`) unless `prices:` names them. A model
nobody knows the price of gives an unknown cost (None), which stays unknown when added to
anything: roundhouse never prints $0.00 for a price it does not know.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from decimal import Decimal

import genai_prices

from roundhouse.config import Price
from roundhouse.core.usage import Usage

log = logging.getLogger(__name__)

# Models that run on this machine cost nothing, and we know it.
FREE_MODELS = frozenset({"offline"})
# `--model openai:gpt-4o-mini` and a Completion.model of "gpt-4o-mini" are the same price.
PROVIDER_PREFIXES = ("openai:", "anthropic:", "openai-computer:", "gemini:")
# The open computer-use models on the user's own server (models/local/): their tokens are
# counted, their price is 0 unless `prices:` gives one. A Completion names them by spec.
LOCAL_PREFIXES = ("uitars:", "qwen-vl:", "opencua:")


def bare_name(model: str) -> str:
    for prefix in (*PROVIDER_PREFIXES, *LOCAL_PREFIXES):
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
) -> Usage:
    """`usage` on `model`, priced: by an override, as a free model, by genai-prices, or
    unknown (cost None)."""
    return usage.priced(_dollars(model, usage, overrides or {}, library))


def _dollars(
    model: str, usage: Usage, overrides: Mapping[str, Price], library: bool
) -> float | None:
    if (usage.requests, usage.input_tokens, usage.output_tokens) == (0, 0, 0):
        return 0.0
    override = _override(model, overrides)
    if override is not None:
        return (
            usage.input_tokens * override.input_per_mtok
            + usage.output_tokens * override.output_per_mtok
        ) / 1_000_000
    if bare_name(model) in FREE_MODELS or model.startswith(LOCAL_PREFIXES):
        return 0.0
    if not library:
        return None
    tokens = genai_prices.Usage(
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cache_read_tokens=usage.cache_read_tokens,
        cache_write_tokens=usage.cache_write_tokens,
    )
    found = _library_calculation(model, tokens)
    return None if found is None else float(found.total_price)


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
        if bare_name(model) in FREE_MODELS or model.startswith(LOCAL_PREFIXES):
            return Price(input_per_mtok=0, output_per_mtok=0)
        return library_price(model) if self._library else None

    def priced(self, model: str, usage: Usage) -> Usage:
        return price_usage(model, usage, self._prices, library=self._library)
