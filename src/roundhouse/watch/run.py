"""A run watched from the page (`run --watch`, `batch --watch`): the page served beside the
run, on the run's desktop through a display connection of its own.

    with watched_desktop(desktop, fps, control=True) as watched:
        async with page_served(watched, token, ready=print) as control:
            async with compose_session(settings, desktop=desktop, hand_back=control.hand_back,
                                       observers=[watched.feed]) as session:
                outcome = await control.run(session.run_round(request))  # StoppedByPerson on "stop"

The page's feed is an observer of the session's events; its "hand back" is the run's
HandBack (control.PageHandBack); its "stop" cancels the run's task, which the round records
as cancelled (as Ctrl-C is), and `control.run` raises StoppedByPerson.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from roundhouse.config import DesktopSettings
from roundhouse.core.person import StoppedByPerson
from roundhouse.devices.linux.desktops.desktop import Desktop
from roundhouse.devices.linux.desktops.opening import open_desktop
from roundhouse.devices.linux.display.backends import open_display
from roundhouse.devices.linux.display.base import Input
from roundhouse.watch.control import PageHandBack, PersonInput, RunControl
from roundhouse.watch.frames import FPS, FrameSource
from roundhouse.watch.gate import new_token
from roundhouse.watch.recording import recording
from roundhouse.watch.screens import InputWhenUsed, watched_screen
from roundhouse.watch.server import STARTUP_TIMEOUT, Watched, serve_watch

T = TypeVar("T")


@contextmanager
def watched_desktop(desktop: Desktop, fps: float, control: bool = True) -> Iterator[Watched]:
    """The page's view of `desktop` (screens.py: its screen opened sending nothing), and the
    person's input on a display connection of the watch's own, opened at their first click
    or key (to the display server another client's input: the person's)."""
    with contextlib.ExitStack() as opened:
        screen, drawn = opened.enter_context(watched_screen(desktop))

        def open_input() -> Input:
            return opened.enter_context(open_display(desktop)).input

        person = PersonInput(InputWhenUsed(open_input), screen.size) if control else None
        title = f"{desktop.display} ({desktop.kind})"
        frames = FrameSource(screen, fps=fps, drawn=drawn)
        yield Watched(frames, person=person, title=title)


class WatchedRun(RunControl):
    """The page's hold on a run in this process: its hand-back, and the task it may stop."""

    def __init__(self, url: str, hand_back: PageHandBack) -> None:
        super().__init__(hand_back)
        self.url = url

    async def run(self, work: Coroutine[Any, Any, T]) -> T:
        task = asyncio.ensure_future(work)
        self.attach(task.cancel)
        try:
            return await task
        except asyncio.CancelledError:
            if self.stopped and not _cancelling():
                raise StoppedByPerson("stopped from the watch page") from None
            raise


def _cancelling() -> bool:
    """Whether this task itself is being cancelled (Ctrl-C), not the work it awaited."""
    current = asyncio.current_task()
    return current is not None and current.cancelling() > 0


@asynccontextmanager
async def page_served(
    watched: Watched,
    token: str,
    host: str = "127.0.0.1",
    port: int = 0,
    bearer: str | None = None,
    ready: Callable[[str], None] | None = None,
) -> AsyncIterator[WatchedRun]:
    """Serve the page while the block runs; the run's control once it listens."""
    listening: asyncio.Future[str] = asyncio.get_running_loop().create_future()

    def on_ready(url: str) -> None:
        if ready is not None:
            ready(url)
        listening.set_result(url)

    serving = asyncio.ensure_future(serve_watch(watched, token, host, port, bearer, on_ready))
    try:
        async with asyncio.timeout(STARTUP_TIMEOUT + 1):
            while not listening.done() and not serving.done():
                await asyncio.sleep(0.02)
        if not listening.done():
            serving.result()  # its error
            raise RuntimeError("the watch page stopped before it listened")
        control = WatchedRun(listening.result(), PageHandBack())
        watched.run = control
        yield control
    finally:
        serving.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await serving


@dataclass
class Watching:
    """A run's desktop, opened before its session (which acts on it), with the page's view
    of it; the page's control where it is served."""

    desktop: Desktop
    watched: Watched
    control: WatchedRun | None  # None: recorded, not served

    async def run(self, work: Coroutine[Any, Any, T], folder: Path, record: bool) -> T:
        """Run the session's work, recording the screen into `folder` if asked."""
        frames = self.watched.frames
        assert frames is not None  # a run's page watches its desktop
        async with recording(frames, folder) if record else contextlib.nullcontext():
            if self.control is None:
                return await work
            return await self.control.run(work)


@asynccontextmanager
async def watching(
    settings: DesktopSettings,
    *,
    serve: bool,
    ready: Callable[[str], None] | None = None,
    fps: float = FPS,
) -> AsyncIterator[Watching]:
    """Open the desktop the settings name and watch it; serve the page if `serve`."""
    with open_desktop(settings) as desktop, watched_desktop(desktop, fps, serve) as watched:
        if not serve:
            yield Watching(desktop, watched, None)
            return
        async with page_served(watched, new_token(), ready=ready) as control:
            yield Watching(desktop, watched, control)
