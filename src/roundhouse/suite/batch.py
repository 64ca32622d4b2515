"""Run a batch of tasks, several at once, on an executor: this machine's processes (local)
or a Ray cluster (ray_executor.py). Either way each task is one attempt, which the task
itself makes (BatchItem.attempt: its family's, judged on the machine it ran on), and gives
one TaskResult row. The driver and the executors know no family.

The driver here owns what is the same on both: skipping tasks that already have a row
(--resume), running an attempt again when what ran it died (--retries), the progress
callback, and the results files, rewritten after every finished task.
"""

from __future__ import annotations

import asyncio
import dataclasses
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from roundhouse.suite.attempt import AttemptOptions
from roundhouse.suite.results import LOST_STATUSES, ResultBoard, TaskResult, read_results


@dataclass(frozen=True, kw_only=True)
class BatchOptions(AttemptOptions):
    """What every attempt of the batch is given (the AttemptOptions it is: an executor
    passes it on as is), and how the batch runs them."""

    workers: int = 2  # local executor: tasks at once
    retries: int = 1  # further attempts for a task whose runner died under it
    resume: bool = False  # skip the tasks that have a row in OUT/results.json


Progress = Callable[[TaskResult, int, int], None]


class TaskId(Protocol):
    @property
    def id(self) -> str: ...


class BatchItem(Protocol):
    """A task of a batch, which runs itself: one of roundhouse's own task files
    (suite/family.py) or of OSWorld's (osworld/family.py), each family's attempt its own.
    What the driver and the executors know of it is this."""

    @property
    def task(self) -> TaskId: ...

    @property
    def on_desktop(self) -> bool:
        """Whether its attempt starts a desktop (Ray gives it a `desktop` unit)."""

    def reads(self, options: AttemptOptions) -> list[Path]:
        """The files of this machine its attempt reads (Ray ships them to the node)."""

    def moved(self, place: Callable[[Path], Path]) -> BatchItem:
        """The same task, its files where `place` puts them (a node's copy)."""

    async def attempt(self, options: AttemptOptions) -> TaskResult:
        """One attempt, start to row; whatever goes wrong ends this task, not the batch."""


@dataclass(frozen=True)
class Family:
    """A kind of task file `roundhouse batch` runs: declared once, in its own module with its
    items (suite/family.py, osworld/family.py); cli/batch.py lists them."""

    name: str  # as messages say it: "OSWorld"
    recognises: Callable[[Path], bool]  # a batch's path: is it this family's?
    load: Callable[[Path], Sequence[BatchItem]]  # its items (ConfigError: why not)
    dataset: bool = False  # reads a dataset's files and answers (--files, --answers)


class Executor(Protocol):
    """Runs one attempt at a task somewhere and gives its row. A runner that dies under the
    task gives a row with a status in LOST_STATUSES, never an exception."""

    async def attempt(self, item: BatchItem) -> TaskResult: ...


class LocalExecutor:
    """Attempts as processes of this machine, `workers` at once."""

    def __init__(
        self, options: BatchOptions, started: Callable[[BatchItem, str], None] | None = None
    ) -> None:
        self._options: AttemptOptions = options
        self._slots = asyncio.Semaphore(options.workers)
        self._node = socket.gethostname()
        self._started = started  # told as an attempt gets its slot (the watch page's table)

    async def attempt(self, item: BatchItem) -> TaskResult:
        async with self._slots:
            if self._started is not None:
                self._started(item, self._node)
            result = await item.attempt(self._options)
        return dataclasses.replace(result, node=self._node)


def pending(tasks: Sequence[BatchItem], kept: list[TaskResult]) -> list[BatchItem]:
    """The tasks without a row yet."""
    done = {row.task for row in kept}
    return [item for item in tasks if item.task.id not in done]


async def run_batch(
    tasks: Sequence[BatchItem],
    options: BatchOptions,
    progress: Progress | None = None,
    executor: Executor | None = None,
) -> list[TaskResult]:
    """Every task's row, those kept from an earlier run (--resume) included. A cancelled
    batch (Ctrl-C) has written the rows of every task that finished before it."""
    options.out.mkdir(parents=True, exist_ok=True)
    kept = read_results(options.out) if options.resume else []
    board = ResultBoard(options.out, [item.task.id for item in tasks], kept)
    board.write()
    todo = pending(tasks, kept)
    runner = executor or LocalExecutor(options)
    done = 0

    async def one(item: BatchItem) -> None:
        nonlocal done
        result = await with_retries(runner, item, options.retries)
        board.add(result)
        done += 1
        if progress is not None:
            progress(result, done, len(todo))

    await asyncio.gather(*(one(item) for item in todo))
    return board.rows()


async def with_retries(executor: Executor, item: BatchItem, retries: int) -> TaskResult:
    """Attempts until one is not lost, or `retries` more have been made; the row says how
    many there were and why the earlier ones were run again."""
    why: list[str] = []
    while True:
        result = await executor.attempt(item)
        if result.status not in LOST_STATUSES or len(why) >= retries:
            return dataclasses.replace(result, attempts=len(why) + 1, retried="; ".join(why))
        where = f" on {result.node}" if result.node else ""
        why.append(f"attempt {len(why) + 1}{where}: {result.reason}")
