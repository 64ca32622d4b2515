"""The Round: one request, run to FINISH, FAIL or ERROR by the transition table.

The loop keeps the shape of UFO's Round.run (docs/design.md). Where it goes next is the
table's pure answer (core/states.py `transition`), asked once where the step concludes and
carried on its conclusion (agents/base.py `Concluded`); the loop carries it out, and keeps what
happened on the round's one record (core/record.py), which the recorder writes from the
events. Errors split in two: the model's (no valid answer after retries, a model that cannot
answer) and a lost device end the round in ERROR with the reason recorded; ours propagate
after the round is written down. A limit reached (core/limits.py: max_step before a step;
max_requests, max_tokens or max_cost before a model request) ends it in FAIL with the
limit's reason, and so does a desktop that takes no input from us (a locked screen).
Ctrl-C marks the round cancelled and writes it down before the cancellation goes on.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Protocol

from roundhouse.agents.pool import AgentPool
from roundhouse.config import Settings
from roundhouse.core.context import RoundContext
from roundhouse.core.events import Evaluated, EventBus, RoundChanged, SnapshotTaken, StepTaken
from roundhouse.core.judge import Evaluator
from roundhouse.core.limits import LimitReached, Limits
from roundhouse.core.person import DesktopBlocked
from roundhouse.core.record import RoundRecord, SessionRecord
from roundhouse.core.states import RoundState, is_round_end
from roundhouse.devices.base import DeviceLost
from roundhouse.logs.store import LogWriteError
from roundhouse.models.base import ModelError, NoValidAnswer


class Snapshotter(Protocol):
    """Takes what the round looks like at a subtask end or at round end."""

    async def capture(self, round_id: int, sub_round_id: int | None) -> SnapshotTaken: ...

    async def settle(self) -> None: ...


class NoSnapshots:
    """A shell round has no window to photograph."""

    async def capture(self, round_id: int, sub_round_id: int | None) -> SnapshotTaken:
        return SnapshotTaken(round_id, sub_round_id, ())

    async def settle(self) -> None:
        return None


class Round:
    def __init__(
        self,
        *,
        record: RoundRecord,
        session: SessionRecord,
        agents: AgentPool,
        settings: Settings,
        limits: Limits,
        log_folder: Path,
        events: EventBus,
        evaluator: Evaluator,
        snapshots: Snapshotter,
    ) -> None:
        self.record = record  # on the session's record already: the one state of the round
        self.session = session
        self.context = RoundContext(record, session)
        self.settings = settings
        self.limits = limits
        self.log_folder = log_folder
        self.events = events
        self.evaluator = evaluator
        self.snapshots = snapshots
        self.agents = agents
        self.agent = agents.first()

    async def run(self) -> RoundRecord:
        record = self.record
        self.events.emit(RoundChanged(record))
        try:
            while not self.is_finished():
                self.limits.check_step(record.round_step)
                done = await self.agent.handle(self.context)
                self.events.emit(StepTaken(record, done.step))
                record.state = done.move.next_state
                self.agent = self.agents.switch(self.agent, done.move, done.step)
                if done.move.subtask_end:
                    await self.settle()
                    await self.capture_last_snapshot(sub_round_id=record.subtask_ends - 1)
        except (NoValidAnswer, ModelError, DeviceLost) as error:
            self._cut_short(RoundState.ERROR, str(error))
            record.device_lost = isinstance(error, DeviceLost)
        except (LimitReached, DesktopBlocked) as error:  # a limit, or a locked screen
            self._cut_short(RoundState.FAIL, str(error))
            record.result = str(error)
        except LogWriteError as error:
            # Not the round's failure but its log's: recorded (where it still fits) as
            # cancelled, so that resume runs it again once there is room.
            record.cancelled = True
            self._cut_short(
                RoundState.ERROR, f"{error}; make room, then `roundhouse resume` this folder"
            )
            return self._end()
        except (asyncio.CancelledError, KeyboardInterrupt):
            record.cancelled = True
            self._cut_short(RoundState.ERROR, "cancelled by the user")
            self._end()
            raise
        except BaseException as error:
            self._cut_short(RoundState.ERROR, f"internal error: {type(error).__name__}: {error}")
            self._end()
            raise
        if not record.device_lost:  # there is no device to take the last snapshot with
            await self.capture_last_snapshot()
        if self.should_evaluate:
            await self.evaluation()
        return self._end()

    def is_finished(self) -> bool:
        return is_round_end(self.record.state)

    async def settle(self) -> None:
        """sleep_time, waited here and nowhere else; then until the UI is quiet, if there is
        one (the device's settle waits for the screen alone)."""
        if self.settings.sleep_time:
            await asyncio.sleep(self.settings.sleep_time)
        await self.snapshots.settle()

    @property
    def should_evaluate(self) -> bool:
        return self.settings.eva_round

    async def capture_last_snapshot(self, sub_round_id: int | None = None) -> None:
        snapshot = await self.snapshots.capture(self.record.id, sub_round_id)
        for name in snapshot.files:
            self.session.blackboard.add_screenshot(name)
        if sub_round_id is None:
            self.record.final_screenshots = list(snapshot.files)
        self.events.emit(snapshot)

    async def evaluation(self) -> None:
        self.record.evaluation = await self.evaluator.evaluate_round(self.record, self.log_folder)
        self.events.emit(Evaluated(self.record.evaluation))

    def _cut_short(self, state: RoundState, error: str) -> None:
        """The round ends here: the step in flight (if any) says why it did not conclude."""
        self.record.state, self.record.error = state, error
        step = self.record.steps[-1] if self.record.steps else None
        if step is not None and not step.concluded:
            step.error = error
            self.events.emit(StepTaken(self.record, step))

    def _end(self) -> RoundRecord:
        self.events.emit(RoundChanged(self.record))
        return self.record
