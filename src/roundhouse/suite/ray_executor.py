"""The Ray executor: each attempt is a Ray task on whichever node has room for it — 1 CPU, and
1 `desktop` unit for a GUI task — running the same attempt.py code as the local executor,
in the Ray worker, in a folder of its own on that node, watched by a janitor process that
ends the attempt's desktop and processes should the worker die under it (janitor.py).

Nodes share no file system with the driver. The suite goes out as bytes (one object in
Ray's store, fetched once per node), unless the node already holds the same files at the
same path — then they are used in place, so that paths a task builds from `{suite}` (such
as tasks/basic's `{suite}/../../tests/desktop/qt_app.py`) work on nodes made from the same
checkout. Each attempt's log folder comes home as bytes with its row and is unpacked under
OUT/logs/<task>/; the node's folder is then removed.

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
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import ray
import ray.exceptions

from roundhouse.devices.linux.desktops import janitor
from roundhouse.logs.store import LogStore
from roundhouse.suite import bundle
from roundhouse.suite.attempt import AttemptOptions, run_task
from roundhouse.suite.batch import BatchItem, BatchOptions
from roundhouse.suite.results import TaskResult
from roundhouse.suite.tasks import SuiteTask, load_task

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


@dataclass(frozen=True)
class SuiteShipment:
    """The suite as the nodes get it."""

    path: str  # where it lies on the driver
    files: list[str]  # relative to `path`
    digest: str


@dataclass(frozen=True)
class NodeSpec:
    """One attempt, as the node task gets it."""

    batch: str
    task: str
    task_file: str  # relative to the suite
    model: str
    assume_yes: bool
    timeout: float


def shipment_of(tasks: list[SuiteTask], suite: Path) -> SuiteShipment:
    """A suite folder goes whole (its checks/ and other files too); a single task file
    goes with its recorded answers only."""
    root = suite if suite.is_dir() else suite.parent
    if suite.is_dir():
        files = bundle.folder_files(root)
    else:
        files = [p.name for item in tasks for p in (item.path, item.answers) if p.exists()]
    return SuiteShipment(str(root.resolve()), files, bundle.digest(root, files))


class RayExecutor:
    def __init__(
        self, options: BatchOptions, settings: RaySettings, tasks: list[SuiteTask], suite: Path
    ) -> None:
        self._options = options
        self._settings = settings
        self._tasks = tasks
        self._suite = suite
        self._batch = uuid.uuid4().hex[:12]
        self._shipment: SuiteShipment | None = None
        self._suite_ref: Any = None

    def start(self) -> str:
        """Start or join the cluster and send the suite; a line saying what it offers."""
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
        gui = [item.task.id for item in self._tasks if item.task.agent == "host"]
        if offered.get("CPU", 0) < 1:
            raise ClusterError("the Ray cluster offers no CPU")
        if gui and offered.get("desktop", 0) < 1:
            raise ClusterError(
                f"{len(gui)} GUI tasks need a `desktop` resource, and no node of the Ray "
                "cluster offers one: start nodes with --resources '{\"desktop\": N}'"
            )
        self._shipment = shipment_of(self._tasks, self._suite)
        root = Path(self._shipment.path)
        self._suite_ref = ray.put(bundle.pack(root, self._shipment.files))
        nodes = [node for node in ray.nodes() if node.get("Alive")]
        return (
            f"Ray: {len(nodes)} nodes, {offered.get('CPU', 0):g} CPUs, "
            f"{offered.get('desktop', 0):g} desktops"
        )

    def close(self) -> None:
        ray.shutdown()

    async def attempt(self, item: BatchItem) -> TaskResult:
        assert self._shipment is not None, "start() first"
        if not isinstance(item, SuiteTask):  # the CLI refuses OSWorld's tasks on Ray
            return _lost(item.task.id, "ERROR", "OSWorld's tasks do not run on Ray yet")
        spec = NodeSpec(
            batch=self._batch,
            task=item.task.id,
            task_file=item.path.resolve().relative_to(self._shipment.path).as_posix(),
            model=self._options.model,
            assume_yes=self._options.assume_yes,
            timeout=self._options.timeout,
        )
        gui = item.task.agent == "host"
        remote = _remote_attempt.options(
            num_cpus=1,
            resources={"desktop": 1} if gui else {},
            max_retries=0,  # the driver retries, and says why (with_retries)
            name=f"roundhouse:{item.task.id}",
        )
        ref = remote.remote(asdict(spec), asdict(self._shipment), self._suite_ref)
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
    spec_data: dict[str, Any], shipment_data: dict[str, Any], suite_bytes: bytes
) -> tuple[dict[str, Any], bytes]:
    """Runs in a Ray worker: the attempt, watched by a janitor; (its row, its logs)."""
    started = time.monotonic()
    spec = NodeSpec(**spec_data)
    shipment = SuiteShipment(**shipment_data)
    base = Path(os.environ.get(NODE_WORKDIR_ENV) or tempfile.gettempdir()) / "roundhouse-batch"
    suite = _node_suite(shipment, suite_bytes, base / "suites")
    folder = base / spec.batch / f"{spec.task}-{uuid.uuid4().hex[:8]}"
    folder.mkdir(parents=True)
    options = AttemptOptions(
        out=folder, model=spec.model, assume_yes=spec.assume_yes, timeout=spec.timeout
    )
    try:
        with _watched(f"{spec.batch}/{folder.name}", folder):
            result = asyncio.run(run_task(load_task(suite / spec.task_file), options))
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


_in_place: dict[tuple[str, str], bool] = {}


def _node_suite(shipment: SuiteShipment, suite_bytes: bytes, store: Path) -> Path:
    """The suite on this node: in place when the same files lie at the driver's path,
    else the shipped copy, unpacked once per node."""
    key = (shipment.path, shipment.digest)
    if key not in _in_place:
        here = Path(shipment.path)
        try:
            _in_place[key] = here.is_dir() and bundle.digest(here, shipment.files) == key[1]
        except OSError:
            _in_place[key] = False
    if _in_place[key]:
        return Path(shipment.path)
    copy = store / shipment.digest / Path(shipment.path).name
    if not copy.is_dir():
        try:
            bundle.unpack(suite_bytes, copy)
        except OSError:
            if not copy.is_dir():  # another worker of this node unpacked it first
                raise
    return copy
