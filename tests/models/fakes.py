"""Small test doubles shared by the model tests."""

from __future__ import annotations


class Sleeps:
    """An injected sleep: records what the client asked to wait, waits for nothing."""

    def __init__(self) -> None:
        self.calls: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)
