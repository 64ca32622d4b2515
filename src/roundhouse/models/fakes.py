"""Every computer-use protocol's fake server, by the family a model spec names: how it starts
from a script, and the environment that points a `roundhouse run` at it and nowhere else.

A batch's recorded conversations (suite/recordings.py) play through these, as `--model
replay` plays a task's answers for the default agents. The key given is the fake's own, never
a real one; the environment also sets RH_LOOPBACK_ONLY=1, so that a run pointed at a fake
refuses every address but this machine's: a recording can never reach a paid API.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from roundhouse.models.fake_http import FakeServer

FAKE_KEY = "fake-key"  # what each fake is started with, and the run is given


@dataclass(frozen=True)
class Protocol:
    """One protocol: the spec's family (`anthropic` of `anthropic:claude-sonnet-4-5`), which is
    also the folder of its recordings, its fake, and the variables the run reads."""

    family: str
    load: Callable[[Path], list[Any]]  # a script's turns (ValueError: not a script of its)
    serve: Callable[[list[Any], str], FakeServer[Any]]  # turns and key: a fake, unstarted
    url_vars: tuple[str, ...]  # each set to the fake's base URL
    key_vars: tuple[str, ...]  # each set to the fake's key


def _anthropic() -> Protocol:
    from roundhouse.models.anthropic import fake

    return Protocol(
        "anthropic",
        fake.load_script,
        lambda turns, key: fake.FakeAnthropic(turns, key=key),
        ("ANTHROPIC_BASE_URL", "ROUNDHOUSE_ANTHROPIC__BASE_URL"),
        ("ANTHROPIC_API_KEY", "ROUNDHOUSE_ANTHROPIC__API_KEY"),
    )


def _openai_computer() -> Protocol:
    from roundhouse.models.openai_computer import fake

    return Protocol(
        "openai-computer",
        fake.load_script,
        lambda turns, key: fake.FakeOpenAIComputer(turns, key=key),
        _OPENAI_URL,
        _OPENAI_KEY,
    )


def _gemini() -> Protocol:
    from roundhouse.models.gemini import fake

    return Protocol(
        "gemini",
        fake.load_script,
        lambda turns, key: fake.FakeGemini(turns, key=key),
        ("GEMINI_BASE_URL", "ROUNDHOUSE_GEMINI__BASE_URL"),
        ("GEMINI_API_KEY", "ROUNDHOUSE_GEMINI__API_KEY"),
    )


def _local(family: str) -> Protocol:
    from roundhouse.models.local import fake

    return Protocol(
        family,
        fake.load_script,
        lambda turns, key: fake.FakeLocal(turns, key=key),
        _OPENAI_URL,
        _OPENAI_KEY,
    )


# The settings' own variables are set too: a roundhouse.yaml naming another endpoint or key
# must not take a recorded run there.
_OPENAI_URL = ("OPENAI_BASE_URL", "ROUNDHOUSE_OPENAI__BASE_URL")
_OPENAI_KEY = ("OPENAI_API_KEY", "ROUNDHOUSE_OPENAI__API_KEY")
# Each fake module is imported when its protocol is first asked for, not before.
_MAKERS: dict[str, Callable[[], Protocol]] = {
    "anthropic": _anthropic,
    "openai-computer": _openai_computer,
    "gemini": _gemini,
    "uitars": lambda: _local("uitars"),
    "qwen-vl": lambda: _local("qwen-vl"),
    "opencua": lambda: _local("opencua"),
}
FAMILIES = tuple(_MAKERS)


def protocol_of(spec: str) -> Protocol | None:
    """The protocol of a model spec, or None for a spec that speaks none (offline, replay)."""
    family, colon, _ = spec.partition(":")
    return _MAKERS[family]() if colon and family in _MAKERS else None


def pointed_at(protocol: Protocol, fake: FakeServer[Any], key: str) -> dict[str, str]:
    """The variables that send a run's requests to `fake`, and only there."""
    env = {"RH_LOOPBACK_ONLY": "1"}
    env |= {name: fake.base_url for name in protocol.url_vars}
    env |= {name: key for name in protocol.key_vars}
    return env
