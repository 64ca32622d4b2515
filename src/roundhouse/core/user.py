"""The person behind the run: asked before destructive actions, wherever they run (the
agents' sensitive GUI actions; the shell's destructive commands, devices/shell.py), and
for missing facts. A non-interactive run cannot ask: it approves only with --yes and
answers no question, and the step says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class Confirmation:
    approved: bool
    how: str  # "user", "--yes", "non-interactive", "scripted"


class UserChannel(Protocol):
    async def confirm(self, question: str) -> Confirmation: ...

    async def ask(self, question: str) -> str | None: ...


class NonInteractiveUser:
    def __init__(self, assume_yes: bool) -> None:
        self.assume_yes = assume_yes

    async def confirm(self, question: str) -> Confirmation:
        if self.assume_yes:
            return Confirmation(True, "--yes")
        return Confirmation(False, "non-interactive")

    async def ask(self, question: str) -> str | None:
        return None


async def refusal(user: UserChannel, action: str, why: str) -> str | None:
    """Ask the user before `action` runs, saying `why`: None when they said yes, else why
    it is not run, in the words a step's result shows."""
    confirmation = await user.confirm(f"{action}? ({why})")
    if confirmation.approved:
        return None
    if confirmation.how == "non-interactive":
        return (
            f"not run: {why}, and it needs a confirmation, but this run is not interactive "
            "(pass --yes to allow it)"
        )
    return f"not run: the user declined ({why})"
