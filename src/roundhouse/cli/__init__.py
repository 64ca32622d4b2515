"""The `roundhouse` command. Each sub-module adds its commands to `app`."""

from __future__ import annotations

import gc
import os
import sys

# Importing a command module registers its commands; the benchmarks are a group of their own.
from roundhouse.bench import batch as _bench_batch  # noqa: F401
from roundhouse.bench import models as _bench_models  # noqa: F401
from roundhouse.bench import observation as _bench_observation  # noqa: F401
from roundhouse.bench import osworld_env as _bench_osworld  # noqa: F401
from roundhouse.bench import phrasing as _bench_phrasing  # noqa: F401
from roundhouse.bench import sessions as _bench_sessions  # noqa: F401
from roundhouse.bench import steps as _bench_steps  # noqa: F401
from roundhouse.bench import tree as _bench_tree  # noqa: F401
from roundhouse.bench.app import bench_app
from roundhouse.cli import batch as _batch  # noqa: F401
from roundhouse.cli import desktop as _desktop  # noqa: F401
from roundhouse.cli import desktop_io as _desktop_io  # noqa: F401
from roundhouse.cli import doctor as _doctor  # noqa: F401
from roundhouse.cli import osworld as _osworld  # noqa: F401
from roundhouse.cli import report as _report  # noqa: F401
from roundhouse.cli import run as _run  # noqa: F401
from roundhouse.cli import serve as _serve  # noqa: F401
from roundhouse.cli import setup as _setup  # noqa: F401
from roundhouse.cli import watch as _watch  # noqa: F401
from roundhouse.cli.app import app, one_line_summaries
from roundhouse.devices.linux.display import backends

# A read of a Calc sheet makes some 23,000 short-lived objects (futures, messages, nodes).
# At CPython's default a young collection runs every 700 of them, and a full one every few
# reads walks every object the imports made. Measured read for read against the default in
# one process: 2-4% of a Calc read's time, 4% of the reader's CPU (design.md, the reader).
YOUNG_COLLECTION_EVERY = 20_000

app.add_typer(bench_app, name="bench")
RELAUNCHED = "RH_RELAUNCHED"


def relaunch_if_vouched() -> None:
    """Where the session trusts only an interpreter a desktop file vouches for (a person's
    KDE after `roundhouse setup kde`), start again as it: KWin decides by the process's
    executable. Once: the relaunched process is marked."""
    if os.environ.get(RELAUNCHED):
        return
    backend = backends.named_in(os.environ)
    interpreter = backend.relaunch(os.environ) if backend and backend.relaunch else None
    if interpreter is not None:
        argv = [interpreter, "-m", "roundhouse", *sys.argv[1:]]
        os.execve(interpreter, argv, {**os.environ, RELAUNCHED: "1"})


one_line_summaries(app)


def main() -> None:
    relaunch_if_vouched()
    gc.set_threshold(YOUNG_COLLECTION_EVERY, 10, 10)
    gc.freeze()  # what the imports made lives as long as the process: no collection walks it
    app()
