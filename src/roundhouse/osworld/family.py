"""OSWorld's task files (tasks.py) as a batch family: how they are recognised and loaded, and
each task as a batch item that runs itself (attempt.py, loaded only when one runs: a batch of
roundhouse's own tasks never loads OSWorld's harness)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from roundhouse.osworld.files import FileCache, task_urls
from roundhouse.osworld.tasks import OsworldItem, OsworldTask, answers_path, is_osworld
from roundhouse.osworld.tasks import load_examples as load_items
from roundhouse.suite.attempt import AttemptOptions
from roundhouse.suite.batch import Family
from roundhouse.suite.results import TaskResult


@dataclass(frozen=True)
class OsworldBatchItem:
    """One of OSWorld's tasks in a batch (a suite.batch.BatchItem), scored by its evaluator;
    every one gets a desktop of its own."""

    found: OsworldItem

    @property
    def on_desktop(self) -> bool:
        return True

    @property
    def task(self) -> OsworldTask:
        return self.found.task

    def reads(self, options: AttemptOptions) -> list[Path]:
        """Its task file, its recorded answers, and the dataset's files it downloads."""
        wanted = [self.found.path, answers_path(self.found, options.answers)]
        if options.files is not None:
            cache = FileCache(options.files)
            wanted += [found for url in task_urls(self.found) if (found := cache.find(url))]
        return [path.resolve() for path in dict.fromkeys(wanted) if path.is_file()]

    def moved(self, place: Callable[[Path], Path]) -> OsworldBatchItem:
        return OsworldBatchItem(dataclasses.replace(self.found, path=place(self.found.path)))

    async def attempt(self, options: AttemptOptions) -> TaskResult:
        from roundhouse.osworld.attempt import run_osworld_task

        return await run_osworld_task(self.found, options)


def load(path: Path) -> list[OsworldBatchItem]:
    """The tasks of a folder of domains, a domain, a task file or a meta file."""
    return [OsworldBatchItem(item) for item in load_items(path)]


OSWORLD = Family(name="OSWorld", recognises=is_osworld, load=load, dataset=True)
