"""Model tests run against the fake server on 127.0.0.1 only: a real endpoint is an error."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from roundhouse.models.fake_openai import FakeOpenAI
from tests.models.fakes import Sleeps


@pytest.fixture(autouse=True)
def loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RH_LOOPBACK_ONLY", "1")
    # Whatever the developer's shell holds must not leak into a test.
    for name in (
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "AZURE_OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL",
    ):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()
