"""`roundhouse bench osworld`: what an OSWorld environment costs on a roundhouse desktop, in one
run on this machine.

- reset: a fresh environment (virtual desktop, home, shims) plus the task's config steps,
  and the launched programs' windows shown, what a VM's snapshot revert plus the same
  steps costs OSWorld; evaluate: its postconfig steps and its evaluator (getters and
  metrics) on the desktop as the config left it; tear-down: stopping it (every process of
  the desktop ended). Medians over the runnable tasks of EXAMPLES (by default our own
  OSWorld-format tasks, tests/osworld/examples), each `--runs` times, and per domain.
- memory: the proportional set size (PSS) of every process of the environment once its
  config has run (the desktop's own and the applications the config started); the
  environments a machine holds is its memory (80% of it) over the median.
- /accessibility: the desktop's tree as OSWorld's harness asks it over HTTP, with gedit open,
  from `roundhouse serve --osworld`'s routes and (given --osworld-server, a path to OSWorld's
  desktop_env/server/main.py, and a Python that runs it) from OSWorld's own server on the
  same desktop. Medians of `--reads`.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import statistics
import subprocess
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from roundhouse.bench.app import bench_app
from roundhouse.bench.tree import SOURCE_TREE
from roundhouse.core.polling import within_async
from roundhouse.devices.linux.desktops.reaper import (
    TAG_ENV,
    Marks,
    belonging,
    protected,
    x_client_pids,
)
from roundhouse.devices.linux.system import procfs
from roundhouse.osworld.tasks import OsworldItem, load_examples

if TYPE_CHECKING:  # the OSWorld layer loads when the bench runs, not with every command
    from roundhouse.osworld.env import OsworldEnv
    from roundhouse.osworld.files import FileCache

DEFAULT_EXAMPLES = SOURCE_TREE / "tests" / "osworld" / "examples"
MACHINE_SHARE = 0.8  # of the memory, for environments (the rest: the harness, the system)
SERVER_WAIT = 60.0


@dataclass(frozen=True)
class TaskCost:
    task: str
    domain: str
    reset_seconds: list[float]
    evaluate_seconds: list[float]
    teardown_seconds: list[float]
    pss_mb: list[float]


@dataclass(frozen=True)
class DomainCost:
    domain: str
    tasks: int
    reset_median: float
    evaluate_median: float


def per_domain(costs: list[TaskCost]) -> list[DomainCost]:
    """Median reset and evaluate times of each domain's tasks (all their runs)."""
    rows = []
    for domain in sorted({c.domain for c in costs}):
        mine = [c for c in costs if c.domain == domain]
        resets = [r for c in mine for r in c.reset_seconds]
        evaluations = [e for c in mine for e in c.evaluate_seconds]
        rows.append(DomainCost(domain, len(mine), round(statistics.median(resets), 3),
                               round(statistics.median(evaluations), 3)))  # fmt: skip
    return rows


@dataclass(frozen=True)
class Figures:
    tasks: list[TaskCost]
    domains: list[DomainCost]
    reset_median: float
    evaluate_median: float
    teardown_median: float
    pss_median_mb: float
    environments_per_machine: int
    memory_total_mb: float
    cores: int
    accessibility_ms: float | None
    accessibility_nodes: int | None
    osworld_accessibility_ms: float | None


def environment_pss_mb(env: OsworldEnv) -> float:
    """The PSS of every process of the environment's desktop (not this one's)."""
    table = procfs.snapshot(TAG_ENV)
    marks = Marks(tag=env.desktop.env.get(TAG_ENV), x_clients=x_client_pids(env.desktop.display))
    total_kb = 0
    for pid in belonging(table, marks, protected(table, os.getpid())):
        try:
            for line in (procfs.PROC / str(pid) / "smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total_kb += int(line.split()[1])
                    break
        except OSError:
            continue  # gone meanwhile
    return round(total_kb / 1024, 1)


@dataclass(frozen=True)
class Run:
    reset: float
    evaluate: float
    pss_mb: float
    teardown: float


async def measure_task(item: OsworldItem, work: Path, files: FileCache | None) -> Run:
    """One reset (start, config, the launched windows shown), the environment's PSS, one
    evaluation (postconfig and evaluator, whatever it scores), one tear-down."""
    from roundhouse.osworld.env import OsworldDesktop
    from roundhouse.osworld.evaluate import evaluate
    from roundhouse.osworld.steps import run_steps

    started = time.perf_counter()
    desktop = OsworldDesktop(work, files=files)
    env = await desktop.__aenter__()
    try:
        await run_steps(env, item.task.config)
        await env.apps.ready()
        reset = time.perf_counter() - started
        pss = await asyncio.to_thread(environment_pss_mb, env)
        judging = time.perf_counter()
        await run_steps(env, item.task.evaluator.postconfig)
        await evaluate(env, item.task.evaluator, gave_up=False)
        evaluated = time.perf_counter() - judging
    finally:
        stopping = time.perf_counter()
        await desktop.stop()
        teardown = time.perf_counter() - stopping
    return Run(reset, evaluated, pss, teardown)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def _median_get(url: str, reads: int) -> tuple[float, str]:
    import httpx

    times, body = [], ""
    async with httpx.AsyncClient(timeout=120.0) as http:
        for _ in range(reads):
            began = time.perf_counter()
            response = await http.get(url)
            times.append((time.perf_counter() - began) * 1000)
            response.raise_for_status()
            body = response.text
    return statistics.median(times), body


async def _wait_up(url: str) -> None:
    import httpx

    async with httpx.AsyncClient(timeout=5.0) as http:

        async def answers() -> bool:
            try:
                (await http.get(url)).raise_for_status()
            except httpx.HTTPError:
                return False
            return True

        if not await within_async(answers, SERVER_WAIT, every=0.2):
            (await http.get(url)).raise_for_status()  # once more: its error says why


async def measure_accessibility(
    reads: int, theirs: Path | None, python: Path | None
) -> tuple[float, int, float | None]:
    """/accessibility with gedit open: ours (median ms, elements), OSWorld's server's."""
    import uvicorn

    from roundhouse.osworld.server import make_app
    from roundhouse.osworld.server_state import ServerState

    state = ServerState()
    env = await state.start()
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(make_app(state), port=port, log_level="warning"))
    serving = asyncio.ensure_future(server.serve())
    theirs_process: subprocess.Popen[bytes] | None = None
    try:
        await _wait_up(f"http://127.0.0.1:{port}/platform")
        env.spawn(env.app_command(["gedit"]))
        await asyncio.sleep(3.0)  # gedit up and registered
        ours, body = await _median_get(f"http://127.0.0.1:{port}/accessibility", reads)
        nodes = json.loads(body)["AT"].count("<") - json.loads(body)["AT"].count("</")
        osworlds = None
        if theirs is not None and python is not None:
            other = _free_port()
            theirs_process = subprocess.Popen(
                [str(python), "-m", "flask", "--app", str(theirs), "run", "--host",
                 "127.0.0.1", "--port", str(other)],
                env=env.env, cwd=theirs.parent, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL, start_new_session=True,
            )  # fmt: skip
            await _wait_up(f"http://127.0.0.1:{other}/platform")
            osworlds, _ = await _median_get(f"http://127.0.0.1:{other}/accessibility", reads)
        return ours, nodes, osworlds
    finally:
        if theirs_process is not None:
            theirs_process.terminate()
            theirs_process.wait(timeout=10)
        server.should_exit = True
        await serving
        await state.close()


async def measure(
    items: list[OsworldItem], files: FileCache | None, runs: int, reads: int,
    theirs: Path | None, python: Path | None,
) -> Figures:  # fmt: skip
    from roundhouse.osworld.steps import StepError

    costs = []
    with tempfile.TemporaryDirectory(prefix="roundhouse-bench-osworld-") as scratch:
        for item in items:
            done: list[Run] = []
            for number in range(runs):
                work = Path(scratch) / f"{item.task.id}-{number}"
                try:
                    done.append(await measure_task(item, work, files))
                except StepError as error:
                    typer.echo(f"{item.task.id}: setup failed ({error}); left out", err=True)
                    break
            if done:
                cost = TaskCost(
                    item.task.id, item.domain, [round(r.reset, 3) for r in done],
                    [round(r.evaluate, 3) for r in done], [round(r.teardown, 3) for r in done],
                    [r.pss_mb for r in done],
                )  # fmt: skip
                costs.append(cost)
                typer.echo(f"{item.task.id}: reset {statistics.median(cost.reset_seconds):.2f} s, "
                           f"evaluate {statistics.median(cost.evaluate_seconds):.2f} s, "
                           f"{statistics.median(cost.pss_mb):.0f} MB", err=True)  # fmt: skip
    accessibility, nodes, osworlds = await measure_accessibility(reads, theirs, python)
    pss = statistics.median(m for c in costs for m in c.pss_mb)
    total = _memory_total_mb()
    return Figures(
        tasks=costs,
        domains=per_domain(costs),
        reset_median=round(statistics.median(r for c in costs for r in c.reset_seconds), 3),
        evaluate_median=round(statistics.median(e for c in costs for e in c.evaluate_seconds), 3),
        teardown_median=round(statistics.median(t for c in costs for t in c.teardown_seconds), 3),
        pss_median_mb=pss,
        environments_per_machine=int(total * MACHINE_SHARE // pss) if pss else 0,
        memory_total_mb=round(total),
        cores=os.cpu_count() or 1,
        accessibility_ms=round(accessibility, 1),
        accessibility_nodes=nodes,
        osworld_accessibility_ms=round(osworlds, 1) if osworlds is not None else None,
    )


def _memory_total_mb() -> float:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) / 1024
    return 0.0


def render(figures: Figures) -> str:
    lines = [
        f"tasks measured: {len(figures.tasks)}",
        f"reset (fresh desktop + config), median: {figures.reset_median:.2f} s",
        f"evaluate (postconfig + evaluator), median: {figures.evaluate_median:.2f} s",
        f"tear-down, median: {figures.teardown_median:.2f} s",
        f"memory per environment (PSS), median: {figures.pss_median_mb:.0f} MB",
        f"environments per machine ({MACHINE_SHARE:.0%} of {figures.memory_total_mb:.0f} MB): "
        f"{figures.environments_per_machine} (memory-bound; {figures.cores} cores)",
        f"/accessibility with gedit open: {figures.accessibility_ms} ms "
        f"({figures.accessibility_nodes} elements)",
    ]
    lines += ["", f"{'domain':20} {'tasks':>5} {'reset s':>8} {'evaluate s':>10}"]
    lines += [f"{d.domain[:20]:20} {d.tasks:>5} {d.reset_median:>8.2f} {d.evaluate_median:>10.2f}"
              for d in figures.domains]  # fmt: skip
    if figures.osworld_accessibility_ms is not None and figures.accessibility_ms:
        ratio = figures.osworld_accessibility_ms / figures.accessibility_ms
        lines.append(f"OSWorld's server, same desktop: {figures.osworld_accessibility_ms} ms "
                     f"({ratio:.1f}x ours)")  # fmt: skip
    return "\n".join(lines)


@bench_app.command("osworld")
def osworld_bench(
    examples: Annotated[
        Path, typer.Argument(help="OSWorld-format tasks (default: the tests' own)")
    ] = DEFAULT_EXAMPLES,
    files: Annotated[Path | None, typer.Option(metavar="DIR", help="The dataset's files")] = None,
    runs: Annotated[int, typer.Option(min=1, help="Resets per task")] = 3,
    reads: Annotated[int, typer.Option(min=1, help="/accessibility reads")] = 7,
    limit: Annotated[int, typer.Option(min=1, help="At most this many tasks")] = 20,
    osworld_server: Annotated[
        Path | None, typer.Option(help="OSWorld's desktop_env/server/main.py, to compare")
    ] = None,
    osworld_python: Annotated[
        Path | None, typer.Option(help="A Python that runs it (flask, pyautogui, pyatspi)")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON")] = False,
) -> None:
    """Reset, tear-down and memory of OSWorld environments, and /accessibility's speed."""
    from roundhouse.osworld.check import Machine, classify
    from roundhouse.osworld.files import FileCache

    if examples == DEFAULT_EXAMPLES and files is None:
        files = DEFAULT_EXAMPLES / "files"
    cache = FileCache(files) if files is not None else None
    machine = Machine.here()
    items = [i for i in load_examples(examples) if classify(i, machine, cache).klass == "runnable"]
    if not items:
        typer.echo("roundhouse: no task of EXAMPLES is runnable here", err=True)
        raise typer.Exit(1)
    figures = asyncio.run(
        measure(items[:limit], cache, runs, reads, osworld_server, osworld_python)
    )
    typer.echo(json.dumps(asdict(figures), indent=1) if as_json else render(figures))
