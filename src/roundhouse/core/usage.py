"""Usage is a value: what model calls spent, summed from one answer to the session's total.
Its cost is set by pricing (models/pricing.py, applied once by the model pool)."""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Usage:
    """What model calls spent: requests, tokens, and their cost in dollars.

    One value from a model's answer to the session's total, in memory and in the logs
    (response.log's "usage"). A model counts requests and tokens; pricing (models/pricing.py)
    sets the cost. `cost` is None until priced, and stays None when no price is known: an
    unknown cost stays unknown in every sum, and is never shown as $0.00.
    """

    requests: int = 0
    input_tokens: int = 0  # every input token, the cached ones among them
    output_tokens: int = 0
    cost: float | None = None
    # Of input_tokens, those read from the vendor's prompt cache and those written to it
    # (Anthropic prices them apart: a read at a tenth, a write at 1.25 times the input).
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.requests + other.requests,
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            None if self.cost is None or other.cost is None else self.cost + other.cost,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
        )

    def priced(self, dollars: float | None) -> Usage:
        return replace(self, cost=dollars)

    @property
    def cost_known(self) -> bool:
        return self.cost is not None

    @property
    def cost_text(self) -> str:
        """ "$0.80", "$0.000474" (a cheap model's step is not free: its digits show), "unknown"."""
        if self.cost is None:
            return "unknown"
        if 0 < self.cost < 0.01:
            return f"${self.cost:.6f}".rstrip("0")
        return f"${self.cost:.2f}"


NOTHING_SPENT = Usage(cost=0.0)  # where sums start: no call made, nothing spent, and known
