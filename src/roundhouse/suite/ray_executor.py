"""The Ray executor: each attempt is a Ray task on whichever node has room for it — 1 CPU, and
1 `desktop` unit for a task that starts a desktop — in which the batch item runs itself
(BatchItem.attempt: the same code as under the local executor, whatever its family), in
the Ray worker, in a folder of its own on that node, watched by a janitor process that ends
the attempt's desktop and processes should the worker die under it (janitor.py).

Nodes share no file system with the driver. The files the batch's items read (BatchItem
.reads: a suite's folder, OSWorld's task files, their answers and the dataset's files they
download) go out as bytes (one object in Ray's store, fetched once per node), unless the
node already holds the same files at the same paths — then they are used in place, so that
paths a task builds from `{suite}` (such as tasks/basic's `{suite}/../../tests/desktop/
qt_app.py`) work on nodes made from the same checkout. Elsewhere they are unpacked under
their driver's paths in a folder of the node, and each item and the options are moved
there (BatchItem.moved). Each attempt's log folder comes home as bytes with its row and is
unpacked under OUT/logs/<task>/; the node's folder is then removed.

Only `roundhouse batch --executor ray` imports this module: the local executor never
imports ray.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import os
import shutil
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import ray
import ray.exceptions

from roundhouse.devices.linux.desktops import janitor
from roundhouse.logs.store import LogStore
from roundhouse.suite import bundle
from roundhouse.suite.attempt import AttemptOptions
from roundhouse.suite.batch import BatchItem, BatchOptions
from roundhouse.suite.results import TaskResult

# Where attempts work on a node (removed after each); RH_NODE_WORKDIR moves it.
NODE_WORKDIR_ENV = "RH_NODE_WORKDIR"

log = logging.getLogger(__name__)


class ClusterError(RuntimeError):
    """The cluster cannot run this batch (no desktops for GUI tasks, no CPUs)."""


@dataclass(frozen=True)
class RaySettings:
    address: str | None = None  # None: start a Ray instance on this machine
    cpus: int | None = None  # that instance's CPUs (default: this machine's cores)
    desktops: int | None = None  # its `desktop` units (default: one per two cores)


def default_desktops(cpus: int) -> int:
    return max(1, cpus // 2)


ROOT = Path("/")


@dataclass(frozen=True)
class Shipment:
    """The files the batch's attempts read, as the nodes get them."""

    files: list[str]  # the driver's absolute paths, relative to / (as packed)
    digest: str


def shipment_of(tasks: Sequence[BatchItem], options: AttemptOptions) -> Shipment:
    wanted = {path.resolve() for item in tasks for path in item.reads(options)}
    files = sorted(path.relative_to(ROOT).as_posix() for path in wanted)
    return Shipment(files, bundle.digest(ROOT, files))


class RayExecutor:
    def __init__(
        self, options: BatchOptions, settings: RaySettings, tasks: Sequence[BatchItem]
    ) -> None:
        self._options = options
        self._settings = settings
        self._tasks = tasks
        self._batch = uuid.uuid4().hex[:12]
        self._shipment: Shipment | None = None
        self._files_ref: Any = None

    def start(self) -> str:
        """Start or join the cluster and send the files; a line saying what it offers."""
        if self._settings.address is None:
            cpus = self._settings.cpus or os.cpu_count() or 1
            desktops = self._settings.desktops
            ray.init(
                num_cpus=cpus,
                resources={"desktop": desktops if desktops is not None else default_desktops(cpus)},
                include_dashboard=False,
                log_to_driver=False,
                logging_level=logging.WARNING,
            )
        else:
            ray.init(address=self._settings.address, log_to_driver=False)
        offered = ray.cluster_resources()
        gui = [item.task.id for item in self._tasks if item.on_desktop]
        if offered.get("CPU", 0) < 1:
            raise ClusterError("the Ray cluster offers no CPU")
        if gui and offered.get("desktop", 0) < 1:
            raise ClusterError(
                f"{len(gui)} tasks need a `desktop` resource, and no node of the Ray "
                "cluster offers one: start nodes with --resources '{\"desktop\": N}'"
            )
        self._shipment = shipment_of(self._tasks, self._options)
        self._files_ref = ray.put(bundle.pack(ROOT, self._shipment.files))
        nodes = [node for node in ray.nodes() if node.get("Alive")]
        return (
            f"Ray: {len(nodes)} nodes, {offered.get('CPU', 0):g} CPUs, "
            f"{offered.get('desktop', 0):g} desktops"
        )

    def close(self) -> None:
        ray.shutdown()

    async def attempt(self, item: BatchItem) -> TaskResult:
        assert self._shipment is not None, "start() first"
        remote = _remote_attempt.options(
            num_cpus=1,
            resources={"desktop": 1} if item.on_desktop else {},
            max_retries=0,  # the driver retries, and says why (with_retries)
            name=f"roundhouse:{item.task.id}",
        )
        options = AttemptOptions(
            **{f.name: getattr(self._options, f.name) for f in dataclasses.fields(AttemptOptions)}
        )
        ref = remote.remote(item, options, self._batch, self._shipment, self._files_ref)
        try:
            row, logs = await ref
        except asyncio.CancelledError:
            # Ctrl-C: the worker is killed; the attempt's janitor sees its pipe close and
            # ends the attempt's desktop and processes.
            ray.cancel(ref, force=True)
            raise
        except ray.exceptions.RayTaskError as error:  # our code raised on the node: a bug
            return _lost(item.task.id, "ERROR", f"the node raised {error.cause!r}")
        except ray.exceptions.RayError as error:  # the worker or its node died under it
            return _lost(item.task.id, "LOST", f"{type(error).__name__}: {_first_line(error)}")
        result = TaskResult(**row)
        if not logs:
            return dataclasses.replace(result, log_dir="")
        target = LogStore.create(self._options.out / "logs", item.task.id).folder
        target.rmdir()  # created empty; unpack makes it whole or not at all
        await asyncio.to_thread(bundle.unpack, logs, target)
        return dataclasses.replace(result, log_dir=str(target))


def _lost(task: str, status: str, reason: str) -> TaskResult:
    """The row of an attempt whose runner died: what it did is unknown, its cost too."""
    return TaskResult(
        task=task,
        passed=False,
        status=status,
        checks_passed=0,
        checks_total=0,
        steps=0,
        seconds=0.0,
        input_tokens=0,
        output_tokens=0,
        cost=None,
        answer="",
        reason=reason,
        log_dir="",
    )


def _first_line(error: BaseException) -> str:
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return lines[0][:300] if lines else ""


# ---------------------------------------------------------------- on the node


def _attempt_on_node(
    item: BatchItem, options: AttemptOptions, batch: str, shipment: Shipment, files: bytes
) -> tuple[dict[str, Any], bytes]:
    """Runs in a Ray worker: the attempt, watched by a janitor; (its row, its logs)."""
    started = time.monotonic()
    base = Path(os.environ.get(NODE_WORKDIR_ENV) or tempfile.gettempdir()) / "roundhouse-batch"
    place = _node_files(shipment, files, base / SHIPPED)
    folder = base / batch / f"{item.task.id}-{uuid.uuid4().hex[:8]}"
    folder.mkdir(parents=True)
    moved = dataclasses.replace(
        options,
        out=folder,
        files=place(options.files) if options.files is not None else None,
        answers=place(options.answers) if options.answers is not None else None,
    )
    try:
        with _watched(f"{batch}/{folder.name}", folder):
            result = asyncio.run(item.moved(place).attempt(moved))
        log_dir = Path(result.log_dir) if result.log_dir else None
        logs = bundle.pack(log_dir) if log_dir is not None and log_dir.is_dir() else b""
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        with contextlib.suppress(OSError):  # the batch's folder, once its last attempt is done
            folder.parent.rmdir()
    seconds = round(time.monotonic() - started, 2)
    node = ray.util.get_node_ip_address()
    return asdict(dataclasses.replace(result, node=node, seconds=seconds)), logs


@contextlib.contextmanager
def _watched(marker: str, folder: Path) -> Iterator[None]:
    """Run the body with every process it starts marked, and a janitor that ends them if
    this worker dies first (janitor.py says why and how)."""
    lifeline = janitor.start(janitor.MARKER, marker, str(folder))
    # The processes an attempt starts take their environment from this one (the desktop,
    # the run, setup and check commands): a Ray worker runs one task at a time.
    os.environ[janitor.MARKER] = marker
    try:
        yield
        os.write(lifeline, janitor.DONE)
    finally:
        del os.environ[janitor.MARKER]
        os.close(lifeline)


_remote_attempt = ray.remote(_attempt_on_node)


SHIPPED = "shipped"  # the node's copies of shipments, by digest
_in_place: dict[str, bool] = {}


def _node_files(shipment: Shipment, files: bytes, store: Path) -> Callable[[Path], Path]:
    """Where the shipped files are on this node: in place when the same files lie at the
    driver's paths, else in the shipment's copy, unpacked once per node."""
    if shipment.digest not in _in_place:
        try:
            same = bundle.digest(ROOT, shipment.files) == shipment.digest
        except OSError:
            same = False
        _in_place[shipment.digest] = same
    if _in_place[shipment.digest]:
        return lambda path: path
    copy = store / shipment.digest
    if not copy.is_dir():
        try:
            bundle.unpack(files, copy)
        except OSError:
            if not copy.is_dir():  # another worker of this node unpacked it first
                raise
    return lambda path: copy / path.resolve().relative_to(ROOT)
