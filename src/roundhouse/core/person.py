"""The person at the desktop, as the engine knows them: how they hand the desktop back after
taking it over, and the stop a desktop that takes no input from us (a locked screen) is."""

from __future__ import annotations

from typing import Protocol


class DesktopBlocked(RuntimeError):
    """The desktop takes no input from us (the screen is locked): the round ends in FAIL
    with this reason, and nothing is typed."""


class HandBack(Protocol):
    """How the person hands the desktop back after taking it over."""

    async def wait(self, reason: str, timeout: float | None) -> str | None:
        """Once they hand it back: how ("a key", "roundhouse resume"); None when
        `timeout` seconds passed first."""
        ...


class StoppedByPerson(Exception):
    """The person stopped the run from the watch page: its round is recorded as cancelled
    (as Ctrl-C's is), and `roundhouse resume` carries it on."""
