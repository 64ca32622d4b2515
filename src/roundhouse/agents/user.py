"""The person behind the run, on a terminal (TerminalUser), or scripted for tests and
demos (testing/user.py ScriptedUser). What a user channel is, and the one that cannot ask
(NonInteractiveUser), are in core/user.py: the shell tools ask through it too.
"""

from __future__ import annotations

import asyncio
import sys
from typing import TextIO

from roundhouse.core.user import Confirmation


class TerminalUser:
    """Asks on the terminal. --yes still approves without asking."""

    def __init__(self, assume_yes: bool, out: TextIO = sys.stderr) -> None:
        self.assume_yes = assume_yes
        self.out = out

    async def confirm(self, question: str) -> Confirmation:
        if self.assume_yes:
            return Confirmation(True, "--yes")
        reply = await self._read(f"{question} [y/N] ")
        return Confirmation(reply.strip().lower() in {"y", "yes"}, "user")

    async def ask(self, question: str) -> str | None:
        reply = await self._read(f"{question}\n> ")
        return reply.strip() or None

    async def _read(self, prompt: str) -> str:
        self.out.write(prompt)
        self.out.flush()
        line: str = await asyncio.to_thread(sys.stdin.readline)
        return line  # "" at end of input reads as no / no answer
