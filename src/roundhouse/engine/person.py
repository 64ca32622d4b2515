"""The person taking over, as the round sees it: the device around which the agents act,
waiting for the person before an action they took over.

The device refuses an action while the desktop is the person's (devices/linux/person.py:
their input came since our last action); its result says so (TAKEN_OVER), locally and
over MCP alike. AtTheDesk, between the agents and the device (engine/compose.py puts it
there), then pauses the round before that action: the pause goes on the round's record and
is said (PersonTookOver: the recorder writes it, the CLI prints it); it waits for the
person's hand-back (HandBack: a key, or `roundhouse resume`, which signals this process),
tells the device (`hand_back`), says so (HandedBack), and runs the action then. Where the
settings give an idle time, the action is tried again each second meanwhile: the device
lets it run once the person has left the desktop alone that long.

A desktop that takes no input from us (a locked screen: BLOCKED) ends the round in FAIL,
naming it (DesktopBlocked).
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass

from roundhouse.core.commands import Command, Result, ResultStatus
from roundhouse.core.events import EventBus, HandedBack, PersonTookOver
from roundhouse.core.person import DesktopBlocked, HandBack
from roundhouse.core.record import Pause, RoundRecord, SessionRecord
from roundhouse.devices.base import BLOCKED, HAND_BACK, NOT_RUN, TAKEN_OVER, Dispatcher
from roundhouse.devices.describing import ToolSpec

RETRY = 1.0  # seconds between tries of the waiting action, where an idle time hands back
HAND_BACK_SIGNAL = signal.SIGUSR1  # what `roundhouse resume` sends a paused run
STOPPED = "the round was stopped while it waited"  # a pause's `how` that waits no more


def taken_over(result: Result) -> bool:
    return result.status is ResultStatus.SKIPPED and (result.error or "").startswith(TAKEN_OVER)


def blocked(result: Result) -> bool:
    return result.status is ResultStatus.SKIPPED and (result.error or "").startswith(BLOCKED)


@dataclass
class AtTheDesk:
    """A Dispatcher: the device, with the person's takeover waited out before an action."""

    device: Dispatcher
    events: EventBus
    session: SessionRecord
    hand_back: HandBack
    idle: bool = False  # the device hands back by itself after the person's quiet

    async def tool_specs(self) -> list[ToolSpec]:
        return await self.device.tool_specs()

    async def execute(self, commands: Sequence[Command]) -> list[Result]:
        return [await self._one(command) for command in commands]

    async def _one(self, command: Command) -> Result:
        (result,) = await self.device.execute([command])
        if taken_over(result):
            result = await self._wait_out(command, result)
        if blocked(result):
            raise DesktopBlocked((result.error or "").removeprefix(NOT_RUN))
        return result

    async def _wait_out(self, command: Command, refused: Result) -> Result:
        """Pause until the person hands back, then run the action; the result it gives."""
        reason = (refused.error or "").removeprefix(NOT_RUN)
        round_ = self._round()
        pause = Pause(
            step=round_.round_step if round_ is not None else 0,
            tool=command.tool_name,
            reason=reason,
            pid=os.getpid(),
            since=time.time(),
        )
        if round_ is not None:
            round_.pauses.append(pause)
            self.events.emit(PersonTookOver(round_, pause))
        result = refused
        while taken_over(result):
            try:
                how = await self.hand_back.wait(reason, RETRY if self.idle else None)
            except asyncio.CancelledError:  # the round was stopped while it waited
                pause.how = STOPPED
                raise
            if how is not None:
                await self.device.execute([Command(tool_name=HAND_BACK, tool_type="action")])
            (result,) = await self.device.execute([command])
            if not taken_over(result):
                pause.how = how or "the person left the desktop alone"
        pause.handed_back = time.time()
        if round_ is not None:
            self.events.emit(HandedBack(round_, pause))
        return result

    def _round(self) -> RoundRecord | None:
        return self.session.rounds[-1] if self.session.rounds else None


def paused_run(session: SessionRecord) -> Pause | None:
    """The pause a live run of this session waits in (its process still runs), if any."""
    for round_ in reversed(session.rounds):
        for pause in reversed(round_.pauses):
            if pause.handed_back is None and pause.how is None and _alive(pause.pid):
                return pause
    return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class PersonHandBack:
    """The CLI's hand-back: `roundhouse resume` (it sends HAND_BACK_SIGNAL to the waiting
    process), or, where the person has a terminal, Enter there."""

    def __init__(self, keys: bool | None = None) -> None:
        self.keys = sys.stdin.isatty() if keys is None else keys

    async def wait(self, reason: str, timeout: float | None) -> str | None:
        loop = asyncio.get_running_loop()
        handed: asyncio.Future[str] = loop.create_future()

        def hand(how: str) -> None:
            if not handed.done():
                handed.set_result(how)

        loop.add_signal_handler(HAND_BACK_SIGNAL, hand, "roundhouse resume")
        if self.keys:
            loop.add_reader(sys.stdin.fileno(), self._key, hand)
        try:
            return await asyncio.wait_for(handed, timeout)
        except TimeoutError:
            return None
        finally:
            loop.remove_signal_handler(HAND_BACK_SIGNAL)
            if self.keys:
                loop.remove_reader(sys.stdin.fileno())

    @staticmethod
    def _key(hand: object) -> None:
        sys.stdin.readline()  # the line the key ended
        assert callable(hand)
        hand("a key")
