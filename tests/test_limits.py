"""The session's limits, one value: each says which limit refused and by how much."""

from __future__ import annotations

import pytest

from roundhouse.config import ConfigError, Settings, load_settings
from roundhouse.core.limits import LimitReached, Limits
from roundhouse.core.usage import NOTHING_SPENT, Usage


def spent(requests: int = 0, tokens_in: int = 0, tokens_out: int = 0, cost: float = 0.0) -> Usage:
    return Usage(requests, tokens_in, tokens_out, cost)


def test_the_limits_are_the_settings_and_none_caps_nothing() -> None:
    settings = Settings(max_step=4, max_round=2, max_requests=12, max_tokens=900, max_cost=0.5)
    assert Limits.of(settings) == Limits(steps=4, rounds=2, requests=12, tokens=900, cost=0.5)
    unlimited = Limits()
    unlimited.check_round(10**6)
    unlimited.check_step(10**6)
    unlimited.check_request(spent(10**6, 10**9, 10**9, 10**6), "m")


def test_the_new_caps_are_settings_like_the_others() -> None:
    env = {"ROUNDHOUSE_MAX_REQUESTS": "12"}
    settings = load_settings(env=env, overrides={"max_tokens": 9000})
    assert (settings.max_requests, settings.max_tokens) == (12, 9000)
    with pytest.raises(ConfigError, match="command line: key 'max_requests'"):
        load_settings(env={}, overrides={"max_requests": 0})


def test_a_request_past_max_requests_is_refused_saying_how_many() -> None:
    limits = Limits(requests=12)
    limits.check_request(spent(requests=11), "m")  # the twelfth may go
    with pytest.raises(LimitReached, match=r"^max_requests reached: 12 requests of 12$") as e:
        limits.check_request(spent(requests=12), "m")
    assert e.value.usage == NOTHING_SPENT  # the refused call spent nothing: known, not unknown
    with pytest.raises(LimitReached, match=r"^max_requests reached: 1 request of 1$"):
        Limits(requests=1).check_request(spent(requests=1), "m")


def test_max_tokens_counts_input_and_output_together() -> None:
    limits = Limits(tokens=400)
    limits.check_request(spent(1, 300, 99), "m")
    with pytest.raises(LimitReached, match=r"^max_tokens reached: 450 tokens of 400$"):
        limits.check_request(spent(3, 300, 150), "m")


def test_what_a_call_spent_before_a_retry_is_counted_and_carried_by_the_refusal() -> None:
    attempts = Usage(requests=2, cost=0.0)  # two attempts, on no record yet
    limits = Limits(requests=3)
    limits.check_request(spent(requests=0), "m", attempts)
    with pytest.raises(LimitReached, match="3 requests of 3") as e:
        limits.check_request(spent(requests=1), "m", attempts)
    assert e.value.usage == attempts  # the step that asked counts them


def test_max_cost_and_an_unknown_cost() -> None:
    limits = Limits(cost=0.3)
    limits.check_request(spent(cost=0.2), "m")
    with pytest.raises(LimitReached, match=r"^max_cost reached: \$0\.40 spent of \$0\.3$"):
        limits.check_request(spent(cost=0.4), "m")
    with pytest.raises(LimitReached, match="unknown.*openai:x is asked next.*prices:"):
        limits.check_request(Usage(requests=1), "openai:x")


def test_steps_and_rounds() -> None:
    Limits(steps=3).check_step(2)
    with pytest.raises(LimitReached, match=r"^max_step reached: 3 steps of 3$"):
        Limits(steps=3).check_step(3)
    Limits(rounds=1).check_round(0)
    with pytest.raises(LimitReached, match=r"^max_round reached: 1 round of 1$"):
        Limits(rounds=1).check_round(1)
