"""Fixtures for the whole suite. No test may reach a model endpoint off this machine:
RH_LOOPBACK_ONLY makes the OpenAI client refuse any non-loopback base_url."""

from __future__ import annotations

import signal
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import hypothesis  # noqa: F401  (imported now, not at the end: see below)
import pytest

from roundhouse.config import Settings
from roundhouse.core.events import Event
from roundhouse.core.user import UserChannel
from roundhouse.engine.compose import compose_session
from roundhouse.engine.session import Session
from tests.helpers import SessionFactory

# hypothesis's pytest plugin imports hypothesis in pytest_terminal_summary when no test did
# (a run of a few files: `make faults` runs such); pytest rewrites it then, and CPython
# 3.11.7's ast.parse there raised "SystemError: AST constructor recursion depth mismatch"
# (CPython gh-106905, fixed in 3.11.8) in ~1 of 6 runs of test_a11y_bus.py, failing a
# session whose tests had passed. Importing it with the conftest parses it first thing.


def pytest_configure(config: pytest.Config) -> None:
    """Ctrl-C reaches the programs the tests start, however pytest itself was started. A
    shell starts a background job (`make test &`, a CI step's) with SIGINT ignored, every
    child inherits that, and a Python child that starts with SIGINT ignored never turns it
    into KeyboardInterrupt: the tests that press Ctrl-C on `roundhouse run` and `batch`
    waited in vain. A handled signal is reset to the default on exec, an ignored one is not."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


# The files that take longest, first: `make test` runs its workers file by file (xdist's
# loadfile), in the order collected, and one of these begun last held the whole run up
# for a minute or more after the other workers were done. Measured with --durations on a
# 2-core machine; the rest keep their order.
LONGEST_FIRST = (
    "tests/test_batch_ray.py",
    "tests/wayland/test_shipped.py",
    "tests/test_tasks.py",
    "tests/desktop/test_recorded_suite.py",  # 183 s: six families, each on X11 and sway
    "tests/osworld/test_getters_agree_apps.py",
    "tests/osworld/test_getters_agree.py",
    "tests/osworld/test_batch.py",
    "tests/desktop/test_reaper.py",
    "tests/wayland/test_sessions.py",
    "tests/osworld/test_metrics_agree_apps.py",
    "tests/desktop/test_mcp.py",
    "tests/gui/test_traps.py",
    "tests/desktop/test_computer_gedit.py",
    "tests/gui/test_gui_rounds.py",
    "tests/test_random_kills.py",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    root = config.rootpath

    def rank(item: pytest.Item) -> int:
        name = item.path.relative_to(root).as_posix() if item.path.is_relative_to(root) else ""
        return LONGEST_FIRST.index(name) if name in LONGEST_FIRST else len(LONGEST_FIRST)

    items.sort(key=rank)  # stable: each file's tests keep their order


@pytest.fixture(autouse=True)
def _isolated_environment(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("RH_LOOPBACK_ONLY", "1")
    # A developer's own keys and endpoints never reach a test: every vendor's variables.
    vendors = (
        "OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL",
        "GEMINI_API_KEY", "GOOGLE_API_KEY", "GEMINI_BASE_URL", "GOOGLE_GEMINI_BASE_URL",
    )  # fmt: skip
    for name in vendors:
        monkeypatch.delenv(name, raising=False)
    import os

    for name in list(os.environ):
        if name.startswith("ROUNDHOUSE_"):
            monkeypatch.delenv(name)
    yield


@pytest.fixture
async def make_session(tmp_path: Path) -> AsyncIterator[SessionFactory]:
    """`await make_session(model=..., user=..., events=[...])`: a shell session made as the
    CLI makes one (engine/compose.py), closed when the test ends."""
    async with AsyncExitStack() as opened:

        async def factory(
            user: UserChannel | None = None,
            events: list[Event] | None = None,
            **settings: Any,
        ) -> Session:
            defaults: dict[str, Any] = {
                "logs": tmp_path / "logs",
                "workdir": tmp_path,
                "agent": "linux",
                "task": "test",
            }
            config = Settings.model_validate({**defaults, **settings})
            observers = [events.append] if events is not None else []
            return await opened.enter_async_context(
                compose_session(config, user=user, observers=observers)
            )

        yield factory
