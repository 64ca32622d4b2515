"""roundhouse's own task files (tasks.py) as a batch family: how they are loaded, and each
task as a batch item that runs itself (attempt.py)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from roundhouse.suite import bundle
from roundhouse.suite.attempt import AttemptOptions, run_task
from roundhouse.suite.batch import Family
from roundhouse.suite.results import TaskResult
from roundhouse.suite.tasks import SuiteTask, Task, load_suite


@dataclass(frozen=True)
class SuiteItem:
    """One of our tasks in a batch (a suite.batch.BatchItem)."""

    found: SuiteTask
    # The suite's folder when the batch was given one: the task reads its files through
    # {suite} ({suite}/pages, {suite}/checks), so it travels whole.
    folder: Path | None = None

    @property
    def task(self) -> Task:
        return self.found.task

    @property
    def on_desktop(self) -> bool:
        return self.found.task.agent == "host"

    def reads(self, options: AttemptOptions) -> list[Path]:
        """The suite's folder whole; a task file given alone goes with its answers only."""
        if self.folder is not None:
            return [self.folder / name for name in bundle.folder_files(self.folder)]
        given = (self.found.path, self.found.answers)
        return [path.resolve() for path in given if path.is_file()]

    def moved(self, place: Callable[[Path], Path]) -> SuiteItem:
        found = SuiteTask(task=self.found.task, path=place(self.found.path))
        return SuiteItem(found, place(self.folder) if self.folder is not None else None)

    async def attempt(self, options: AttemptOptions) -> TaskResult:
        return await run_task(self.found, options)


def load(path: Path) -> list[SuiteItem]:
    """The tasks of a suite folder, or of one task file."""
    folder = path.resolve() if path.is_dir() else None
    return [SuiteItem(found, folder) for found in load_suite(path)]


SUITE = Family(
    name="roundhouse",
    # Whatever no other family claims: load_suite then says what is wrong with it.
    recognises=lambda path: True,
    load=load,
)
