"""Prices: genai-prices, overridden by the settings; unknown stays unknown, never $0.00."""

from __future__ import annotations

import pytest

from roundhouse.config import Price
from roundhouse.core.usage import Usage
from roundhouse.models.pricing import PriceTable, price_usage

MILLION = Usage(requests=1, input_tokens=1_000_000, output_tokens=1_000_000)


def test_a_model_genai_prices_knows_is_priced() -> None:
    priced = PriceTable().priced("gpt-4o-mini", Usage(1, 1000, 100))
    # gpt-4o-mini: $0.15 in, $0.60 out per million tokens (genai-prices' snapshot).
    assert priced.cost == pytest.approx(1000 * 0.15e-6 + 100 * 0.60e-6)
    assert (priced.requests, priced.input_tokens, priced.output_tokens) == (1, 1000, 100)


def test_the_model_spec_prefix_does_not_change_the_price() -> None:
    table = PriceTable()
    assert table.priced("openai:gpt-4o-mini", MILLION) == table.priced("gpt-4o-mini", MILLION)


def test_an_override_wins_over_the_library() -> None:
    table = PriceTable({"gpt-4o-mini": Price(input_per_mtok=1.0, output_per_mtok=2.0)})
    assert table.priced("gpt-4o-mini", MILLION).cost == pytest.approx(3.0)
    assert table.price("gpt-4o-mini") == Price(input_per_mtok=1.0, output_per_mtok=2.0)


def test_an_override_by_model_spec_applies_to_the_bare_name() -> None:
    table = PriceTable({"openai:llama3.1:8b": Price(input_per_mtok=0, output_per_mtok=0)})
    assert table.priced("llama3.1:8b", MILLION).cost == 0


def test_an_unknown_model_has_an_unknown_cost_never_zero() -> None:
    for model in ("llama3.1:8b", "my-azure-deployment", "replay:answers.yaml"):
        priced = PriceTable().priced(model, MILLION)
        assert priced.cost is None
        assert priced.cost_text == "unknown"
        assert not (priced + PriceTable().priced("gpt-4o-mini", MILLION)).cost_known


def test_offline_is_free() -> None:
    assert PriceTable().priced("offline", MILLION).cost == 0


def test_no_usage_costs_nothing_even_when_the_price_is_unknown() -> None:
    assert price_usage("llama3.1:8b", Usage()).cost == 0


def test_the_library_price_per_million_tokens_is_shown() -> None:
    assert PriceTable().price("gpt-4o-mini") == Price(input_per_mtok=0.15, output_per_mtok=0.6)
    assert PriceTable().price("llama3.1:8b") is None


def test_the_library_can_be_switched_off() -> None:
    assert PriceTable(library=False).priced("gpt-4o-mini", MILLION).cost is None


def test_a_cheap_step_shows_its_digits_never_zero() -> None:
    assert Usage(cost=0.000474).cost_text == "$0.000474"
    assert Usage(cost=0.8).cost_text == "$0.80"
    assert Usage(cost=0.0).cost_text == "$0.00"
