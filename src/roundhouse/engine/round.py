"""The Round: one request, run to FINISH, FAIL or ERROR by the transition table.

The loop keeps the shape of UFO's Round.run (docs/design.md). Errors split in two: the
model's (no valid answer after retries, a model that cannot answer) end the round in
ERROR with the reason recorded; ours propagate after the round is written down. Ctrl-C
marks the round cancelled and writes it down before the cancellation goes on.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from roundhouse.agents.pool import AgentPool
from roundhouse.config import Settings
from roundhouse.core.context import RoundContext, SessionContext, SubtaskResult
from roundhouse.core.evaluation import Evaluation, Evaluator
from roundhouse.core.events import (
    BlackboardChanged,
    CostUpdated,
    Evaluated,
    EventBus,
    RecordChanged,
    RoundEnded,
    RoundStarted,
    SnapshotTaken,
    StepTaken,
    SubtaskEnded,
)
from roundhouse.core.record import DEVICE_LOST, Attachment, Post, RecordState, RoundRecord
from roundhouse.core.states import AgentKind, RoundState, is_round_end, transition
from roundhouse.core.trajectory import RoundTrajectory, StepRecord
from roundhouse.core.usage import Usage
from roundhouse.devices.base import DeviceLost
from roundhouse.logs.store import LogWriteError
from roundhouse.models.base import ModelError, NoValidAnswer

MAX_STEP_REACHED = "max_step reached"


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


@dataclass(frozen=True)
class RoundOutcome:
    round_id: int
    request: str
    state: RoundState
    result: str | None
    error: str | None
    steps: int
    usage: Usage  # tokens and cost of the round, its judge's included
    log_dir: Path
    evaluation: Evaluation | None

    @property
    def finished(self) -> bool:
        return self.state is RoundState.FINISH


class Round:
    def __init__(
        self,
        *,
        round_id: int,
        request: str,
        session: SessionContext,
        agents: AgentPool,
        settings: Settings,
        log_folder: Path,
        events: EventBus,
        evaluator: Evaluator,
        snapshots: Snapshotter,
    ) -> None:
        self.id = round_id
        self.request = request
        self.settings = settings
        self.log_folder = log_folder
        self.events = events
        self.evaluator = evaluator
        self.snapshots = snapshots
        self.agents = agents
        self.agent = agents.first()
        self.state = RoundState.START
        self.context = RoundContext(
            round_id=round_id,
            request=request,
            session=session,
            record=RoundRecord(id=round_id, user_query=request),
        )
        self.steps: list[StepRecord] = []
        self.final_snapshots: list[str] = []
        self.evaluation_result: Evaluation | None = None

    async def run(self) -> RoundOutcome:
        self._begin()
        device_lost = False  # then there is no device to take the last snapshot with
        try:
            while not self.is_finished():
                step = await self.agent.handle(self.context)
                self._log_step(step)
                move = transition(self.agent.kind, step.status)
                self.state = move.next_state
                self.agent = self.agents.switch(self.agent, move, step)
                if move.subtask_end:
                    self._archive_subtask(step)
                    await self.settle()
                    await self.capture_last_snapshot(sub_round_id=self.context.subtask_amount)
                    self.context.subtask_amount += 1
        except (NoValidAnswer, ModelError, DeviceLost) as error:
            self.state, self.context.error = RoundState.ERROR, str(error)
            device_lost = isinstance(error, DeviceLost)
        except LogWriteError as error:
            # Not the round's failure but its log's: recorded (where it still fits) as
            # interrupted, so that resume runs it again once there is room.
            self.state = RoundState.ERROR
            self.context.error = f"{error}; make room, then `roundhouse resume` this folder"
            return self._end(RecordState.CANCELLED, error=self.context.error)
        except (asyncio.CancelledError, KeyboardInterrupt):
            self.state = RoundState.ERROR
            self._end(RecordState.CANCELLED, error="cancelled by the user")
            raise
        except BaseException as error:
            self.state = RoundState.ERROR
            self._end(RecordState.FAILED, error=f"internal error: {type(error).__name__}: {error}")
            raise
        if not is_round_end(self.state):
            self.state = RoundState.FAIL
            self.context.result = self.context.result or MAX_STEP_REACHED
            self.context.error = MAX_STEP_REACHED
        self.context.session.blackboard.add_requests({f"request_{self.id}": self.request})
        if not device_lost:
            await self.capture_last_snapshot()
        if self.should_evaluate:
            await self.evaluation()
        done = RecordState.FINISHED if self.state is RoundState.FINISH else RecordState.FAILED
        return self._end(
            done, error=self.context.error, status=DEVICE_LOST if device_lost else None
        )

    def is_finished(self) -> bool:
        return is_round_end(self.state) or self.context.round_step >= self.settings.max_step

    async def settle(self) -> None:
        """sleep_time is a floor; then wait until the UI is quiet, if there is one."""
        if self.settings.sleep_time:
            await asyncio.sleep(self.settings.sleep_time)
        await self.snapshots.settle()

    @property
    def should_evaluate(self) -> bool:
        return self.settings.eva_round

    async def capture_last_snapshot(self, sub_round_id: int | None = None) -> None:
        snapshot = await self.snapshots.capture(self.id, sub_round_id)
        self.events.emit(snapshot)
        files = list(snapshot.files)
        for name in files:
            self.context.session.blackboard.add_screenshot(name)
        if sub_round_id is None:
            self.final_snapshots = files
        else:
            self.events.emit(SubtaskEnded(self.id, sub_round_id, self.agent.name, tuple(files)))

    async def evaluation(self) -> None:
        self.evaluation_result = await self.evaluator.evaluate_round(self.trajectory())
        self.events.emit(Evaluated(self.evaluation_result))
        self.context.add_usage(self.evaluation_result.usage)  # judging is paid for too

    def trajectory(self) -> RoundTrajectory:
        return RoundTrajectory(
            round_id=self.id,
            request=self.request,
            state=self.state,
            result=self.context.result,
            error=self.context.error,
            steps=self.steps,
            log_dir=self.log_folder,
            final_screenshots=self.final_snapshots,
        )

    def _begin(self) -> None:
        self.context.record.state = RecordState.RUNNING
        self.events.emit(RecordChanged(self.context.record))
        self.events.emit(RoundStarted(self.id, self.request))

    def _log_step(self, step: StepRecord) -> None:
        self.steps.append(step)
        self.events.emit(StepTaken(step))
        self.context.session.blackboard.add_trajectory(
            {
                "round": self.id,
                "step": step.round_step,
                "agent": step.agent_name,
                "status": step.status.value,
                "action": step.action.function,
                "arguments": step.action.arguments,
                "answer": step.answer,
            }
        )
        self.events.emit(BlackboardChanged(self.context.session.blackboard))
        self.events.emit(CostUpdated(self.id, self.context.usage, self.context.session.usage))

    def _archive_subtask(self, step: StepRecord) -> None:
        """What an acting agent's subtask came to; the host's ASSIGN only starts one."""
        if step.agent is AgentKind.HOST:
            return
        self.context.previous_subtasks.append(
            SubtaskResult(
                sub_round_id=self.context.subtask_amount,
                agent_name=step.agent_name,
                subtask=step.subtask or self.request,
                status=step.status.value,
                result=step.answer,
            )
        )

    def _end(
        self, record_state: RecordState, error: str | None, status: str | None = None
    ) -> RoundOutcome:
        """`status`: an execution status for the error's post (DEVICE_LOST: resume runs the
        round again)."""
        self.context.state = self.state
        self.context.error = error
        record = self.context.record
        record.state = record_state
        if error:  # the record has no error field (TaskWeaver's shape): a post says it
            attached = [Attachment(type="execution_status", content=status)] if status else []
            record.add_post(
                Post(
                    send_from="roundhouse",
                    send_to="user",
                    message=f"error: {error}",
                    attachments=attached,
                )
            )
        self.events.emit(RecordChanged(record))
        self.events.emit(BlackboardChanged(self.context.session.blackboard))
        outcome = RoundOutcome(
            round_id=self.id,
            request=self.request,
            state=self.state,
            result=self.context.result,
            error=error,
            steps=self.context.round_step,
            usage=self.context.usage,
            log_dir=self.log_folder,
            evaluation=self.evaluation_result,
        )
        self.events.emit(
            RoundEnded(self.id, self.state, outcome.result, error, outcome.steps, outcome.usage)
        )
        return outcome
