"""The session's limits, one value: steps a round may take, rounds a session may run, and
what its model calls may spend (requests, tokens, dollars).

What is spent is not kept here: it is the sum of the session's records (core/record.py),
handed to `check_request` before each model request, as pydantic-ai checks its UsageLimits
against its RunUsage. The step limit is checked before each step, the round limit before
each round. A limit reached is a LimitReached saying which and by how much: the round ends
in FAIL with that reason (engine/round.py), a session runs no more rounds.
"""

from __future__ import annotations

from dataclasses import dataclass

from roundhouse.config import Settings
from roundhouse.core.usage import NOTHING_SPENT, Usage


class LimitReached(RuntimeError):
    """A limit allows no more. `usage`: what the refused call had spent before it was
    refused (the earlier attempts of a request retried), so that it is still counted."""

    def __init__(self, message: str, usage: Usage | None = None) -> None:
        super().__init__(message)
        self.usage = usage if usage is not None else NOTHING_SPENT  # known: nothing


@dataclass(frozen=True, kw_only=True)
class Limits:
    """None: no cap. Built from the settings once (engine/compose.py), and passed down."""

    steps: int | None = None  # per round: max_step
    rounds: int | None = None  # per session, the rounds this process runs: max_round
    requests: int | None = None  # model requests (HTTP attempts), per session: max_requests
    tokens: int | None = None  # input and output tokens, per session: max_tokens
    cost: float | None = None  # dollars, per session: max_cost

    @classmethod
    def of(cls, settings: Settings) -> Limits:
        return cls(
            steps=settings.max_step,
            rounds=settings.max_round,
            requests=settings.max_requests,
            tokens=settings.max_tokens,
            cost=settings.max_cost,
        )

    def check_round(self, rounds_run: int) -> None:
        if self.rounds is not None and rounds_run >= self.rounds:
            raise LimitReached(f"max_round reached: {_count(rounds_run, 'round')} of {self.rounds}")

    def check_step(self, steps_taken: int) -> None:
        if self.steps is not None and steps_taken >= self.steps:
            raise LimitReached(f"max_step reached: {_count(steps_taken, 'step')} of {self.steps}")

    def check_request(self, spent: Usage, model: str, unrecorded: Usage | None = None) -> None:
        """Before a request to `model`: refuse it if what the session spent allows no more.
        `unrecorded`: what the asking call has spent and no record holds yet (its earlier
        attempts, priced); counted here, and carried by the refusal."""
        if unrecorded is not None:
            spent = spent + unrecorded
        if self.requests is not None and spent.requests >= self.requests:
            sent = _count(spent.requests, "request")
            raise LimitReached(f"max_requests reached: {sent} of {self.requests}", unrecorded)
        tokens = spent.input_tokens + spent.output_tokens
        if self.tokens is not None and tokens >= self.tokens:
            used = _count(tokens, "token")
            raise LimitReached(f"max_tokens reached: {used} of {self.tokens}", unrecorded)
        if self.cost is None:
            return
        if spent.cost is None:
            raise LimitReached(
                f"max_cost is ${self.cost:g}, but what this session spent is unknown "
                f"(no price is known for a model it used; {model} is asked next): give the "
                "model's price under prices: in the settings",
                unrecorded,
            )
        if spent.cost >= self.cost:
            message = f"max_cost reached: {spent.cost_text} spent of ${self.cost:g}"
            raise LimitReached(message, unrecorded)


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"
