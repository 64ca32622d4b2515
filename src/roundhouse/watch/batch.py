"""`batch --watch`: the page shows the batch's task table (no one desktop: each task runs on
its own), filled in as tasks start and end: queued, running (as an attempt gets its slot,
on the local executor), passed or failed, with the node and a link to the task's video.

    async with batch_page(ids, ready=print) as table:
        executor = LocalExecutor(options, started=table.started)
        rows = await run_batch(items, options, table.progress(bar), executor)
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from urllib.parse import quote

from roundhouse.logs.report import NotALogFolder
from roundhouse.logs.report.render import folder_video
from roundhouse.suite.batch import BatchItem, Progress
from roundhouse.suite.results import TaskResult
from roundhouse.watch.feed import Feed, task_message
from roundhouse.watch.gate import new_token
from roundhouse.watch.run import page_served
from roundhouse.watch.server import Watched

log = logging.getLogger(__name__)


class TaskTable:
    """The feed's task rows, from the batch driver's hooks."""

    def __init__(self, feed: Feed, tasks: Sequence[str], files: dict[str, Path]) -> None:
        self.feed = feed
        self.files = files  # what the page may fetch: each task's video
        self._making: set[asyncio.Future[None]] = set()
        for task in tasks:
            feed.add(task_message(task, "queued"))

    def started(self, item: BatchItem, node: str) -> None:
        self.feed.add(task_message(item.task.id, "running", node))

    def ended(self, result: TaskResult) -> None:
        state = "passed" if result.passed else "failed"
        self.feed.add(task_message(result.task, state, result.node))
        if result.log_dir:  # its video, made beside its log (a second or two), then linked
            made = asyncio.ensure_future(self._video(result, state))
            self._making.add(made)
            made.add_done_callback(self._making.discard)

    async def _video(self, result: TaskResult, state: str) -> None:
        folder = Path(result.log_dir)
        try:
            video = await asyncio.to_thread(folder_video, folder)
        except (OSError, NotALogFolder) as error:
            log.warning("no video of %s: %s", result.task, error)
            return
        if video is not None:
            link = f"files/{quote(result.task)}/{video.name}"
            self.files[link] = video
            self.feed.add(task_message(result.task, state, result.node, link))

    async def videos_made(self) -> None:
        """Wait for the videos still being made (each ffmpeg run has its own timeout)."""
        if self._making:
            await asyncio.gather(*self._making, return_exceptions=True)

    def progress(self, also: Progress | None = None) -> Progress:
        def told(result: TaskResult, done: int, total: int) -> None:
            self.ended(result)
            if also is not None:
                also(result, done, total)

        return told


@asynccontextmanager
async def batch_page(
    tasks: Sequence[str], title: str, ready: Callable[[str], None] | None = None
) -> AsyncIterator[TaskTable]:
    watched = Watched(frames=None, title=title)
    table = TaskTable(watched.feed, tasks, watched.files)
    async with page_served(watched, new_token(), ready=ready):
        yield table
