"""Prices: genai-prices, overridden by the settings; unknown stays unknown, never $0.00."""

from __future__ import annotations

import pytest

from roundhouse.config import Price
from roundhouse.models.base import Usage
from roundhouse.models.pricing import UNKNOWN_COST, ZERO_COST, PriceTable, price_usage

MILLION = Usage(requests=1, input_tokens=1_000_000, output_tokens=1_000_000)


def test_a_model_genai_prices_knows_is_priced() -> None:
    cost = PriceTable().cost("gpt-4o-mini", Usage(1, 1000, 100))
    # gpt-4o-mini: $0.15 in, $0.60 out per million tokens (genai-prices' snapshot).
    assert cost.dollars == pytest.approx(1000 * 0.15e-6 + 100 * 0.60e-6)


def test_the_model_spec_prefix_does_not_change_the_price() -> None:
    table = PriceTable()
    assert table.cost("openai:gpt-4o-mini", MILLION) == table.cost("gpt-4o-mini", MILLION)


def test_an_override_wins_over_the_library() -> None:
    table = PriceTable({"gpt-4o-mini": Price(input_per_mtok=1.0, output_per_mtok=2.0)})
    assert table.cost("gpt-4o-mini", MILLION).dollars == pytest.approx(3.0)
    assert table.price("gpt-4o-mini") == Price(input_per_mtok=1.0, output_per_mtok=2.0)


def test_an_override_by_model_spec_applies_to_the_bare_name() -> None:
    table = PriceTable({"openai:llama3.1:8b": Price(input_per_mtok=0, output_per_mtok=0)})
    assert table.cost("llama3.1:8b", MILLION) == ZERO_COST


def test_an_unknown_model_has_an_unknown_cost_never_zero() -> None:
    for model in ("llama3.1:8b", "my-azure-deployment", "replay:answers.yaml"):
        cost = PriceTable().cost(model, MILLION)
        assert cost == UNKNOWN_COST
        assert str(cost) == "unknown"
        assert not (cost + PriceTable().cost("gpt-4o-mini", MILLION)).known


def test_offline_is_free() -> None:
    assert PriceTable().cost("offline", MILLION) == ZERO_COST


def test_no_usage_costs_nothing_even_when_the_price_is_unknown() -> None:
    assert price_usage("llama3.1:8b", Usage()) == ZERO_COST


def test_the_library_price_per_million_tokens_is_shown() -> None:
    assert PriceTable().price("gpt-4o-mini") == Price(input_per_mtok=0.15, output_per_mtok=0.6)
    assert PriceTable().price("llama3.1:8b") is None


def test_the_library_can_be_switched_off() -> None:
    assert PriceTable(library=False).cost("gpt-4o-mini", MILLION) == UNKNOWN_COST
