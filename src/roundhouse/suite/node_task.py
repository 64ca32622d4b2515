"""One attempt at a task in a process of its own, tied to the process that started it (a Ray
worker): `python -m roundhouse.suite.node_task`, the attempt's spec as one JSON line on
standard input, its TaskResult as one JSON line on standard output.

Why a process of its own: a Ray worker can die under a task (SIGKILL, the OOM killer,
`ray.cancel(force=True)` on Ctrl-C), and then nothing in it runs again. This process
outlives it just long enough to end the attempt: its standard input is the lifeline — the
worker holds the other end, so when the worker dies it reads end-of-file — and then it
cancels the attempt (the `roundhouse run` process is killed, the virtual desktop and its
applications stopped) and kills whatever else still carries the attempt's marker.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import sys
from dataclasses import asdict
from pathlib import Path

from roundhouse.suite.attempt import AttemptOptions, run_task
from roundhouse.suite.results import TaskResult
from roundhouse.suite.tasks import load_task

# Every process an attempt starts inherits this variable, re-parented daemons included:
# what carries it after the attempt belongs to no one and is killed.
MARKER = "RH_ATTEMPT"
EXIT_CUT = 3  # the lifeline was cut: no row

log = logging.getLogger(__name__)


class _Lifeline(asyncio.Protocol):
    def __init__(self, cut: asyncio.Event) -> None:
        self._cut = cut

    def connection_lost(self, exc: Exception | None) -> None:
        self._cut.set()


async def _attempt_while_tied(spec: dict[str, object]) -> TaskResult | None:
    """The row, or None when the lifeline was cut first (the attempt is then cancelled)."""
    item = load_task(Path(str(spec["task_file"])))
    options = AttemptOptions(
        out=Path(str(spec["out"])),
        model=str(spec["model"]),
        assume_yes=bool(spec["assume_yes"]),
        timeout=float(str(spec["timeout"])),
    )
    cut = asyncio.Event()
    loop = asyncio.get_running_loop()
    await loop.connect_read_pipe(lambda: _Lifeline(cut), sys.stdin)
    work = asyncio.ensure_future(run_task(item, options))
    watch = asyncio.ensure_future(cut.wait())
    await asyncio.wait([work, watch], return_when=asyncio.FIRST_COMPLETED)
    watch.cancel()
    if work.done():
        return work.result()
    log.warning("the worker running %s died: ending the attempt", item.task.id)
    work.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await work
    return None


def sweep(marker: str) -> list[int]:
    """SIGKILL every other process whose environment holds MARKER=marker; their pids."""
    wanted = f"{MARKER}={marker}".encode()
    killed = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:  # gone, or not ours to read
            continue
        if wanted in environ.split(b"\0"):
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(entry.name), signal.SIGKILL)
                killed.append(int(entry.name))
    return killed


def main() -> int:
    logging.basicConfig(level=logging.WARNING, format="node_task: %(message)s")
    spec = json.loads(sys.stdin.readline())
    try:
        result = asyncio.run(_attempt_while_tied(spec))
    finally:
        leftovers = sweep(os.environ.get(MARKER, "")) if os.environ.get(MARKER) else []
        if leftovers:
            log.warning("killed %d processes the attempt left: %s", len(leftovers), leftovers)
    if result is None:
        return EXIT_CUT
    sys.stdout.write(json.dumps(asdict(result), ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
