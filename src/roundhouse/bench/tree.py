"""`roundhouse bench tree`: how fast the agent's view of a window is read, against the naive
ways, measured in one run on a fresh virtual desktop with real applications.

For each app: get_controls (what the agent reads every step) with our bulk reader, versus
(a) a walk with the same D-Bus library that awaits one call per property per node and
filters afterwards, and (b) OSWorld's pyatspi walk under the system Python; and the full
get_ui_tree versus the naive walk. The outputs are compared for equality; the figures are
medians over the runs (this machine kind stalls at random, so no single call means much).
The benchmark files (the pyatspi walker, the Qt test app) live in the source tree.

The apps: gedit, mousepad (where installed), the Qt test app, and generated documents in
real applications (issue 10 §4): Chromium on a ~2,000-node page, Calc on a 1,000-cell
sheet, Writer on a 20-page document (with soffice's memory growth over `--rss-reads`
controls reads), Thunar on a folder of 500 files, GNOME Text Editor (GTK 4) on a 500-line
text and GNOME Calculator (GTK 4); and the scaling row (bench_scaling).
Neither naive walk reads a container that manages its descendants (a sheet, a file list):
where a window has one, their output differs from ours by what ours reads of it in view.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from roundhouse.bench import scaling as bench_scaling
from roundhouse.bench import setup as bench_setup
from roundhouse.bench.app import bench_app
from roundhouse.bench.naive import naive_tree
from roundhouse.bench.setup import Ready, has_control
from roundhouse.config import DesktopSettings
from roundhouse.devices.contract import Control, ControlList, UiNode, WindowInfo
from roundhouse.devices.linux.action.screenshots import capture_desktop_png
from roundhouse.devices.linux.action.settle import frame, wait_quiet
from roundhouse.devices.linux.atspi.client import AtspiClient
from roundhouse.devices.linux.atspi.layout import intersection
from roundhouse.devices.linux.atspi.tree import select_controls
from roundhouse.devices.linux.desktops.desktop import Desktop
from roundhouse.devices.linux.desktops.virtual import VirtualDesktop
from roundhouse.devices.linux.display.backends import open_display

SOURCE_TREE = Path(__file__).resolve().parents[3]
PYATSPI_WALKER = SOURCE_TREE / "benchmarks" / "pyatspi_controls.py"
QT_APP = SOURCE_TREE / "tests" / "desktop" / "qt_app.py"
SYSTEM_PYTHON = "/usr/bin/python3"
LARGE_PAGE_TITLE = "Roundhouse large page"
SCALING = "scaling"

T = TypeVar("T")


@dataclass(frozen=True)
class BenchApp:
    name: str
    argv: list[str]
    ready: Ready  # the app is up once its controls pass this
    title: str | None = None  # its window's title holds this (else: the launched pid's window)
    env: dict[str, str] = field(default_factory=dict)
    office: bool = False  # soffice: its memory growth over `--rss-reads` reads is measured
    thunar: bool = False  # shown in its details view (bench_setup.thunar_settings)


def available(wanted: list[T], argv: Callable[[T], list[str]]) -> tuple[list[T], list[str]]:
    """Those of `wanted` whose command (`argv(one)`) can start here, and a note on each that
    cannot: its program is not installed, or the Qt test app is not here (out of the
    source tree)."""
    found, notes = [], []
    for one in wanted:
        command = argv(one)
        program = command[0]
        if shutil.which(program) is None and not Path(program).is_file():
            notes.append(f"{program} is not installed (make system-deps): not measured")
        elif str(QT_APP) in command and not QT_APP.is_file():
            notes.append(f"the Qt test app ({QT_APP}) is not here: run from the source tree")
        else:
            found.append(one)
    return found, notes


def office_app(name: str, kind: str, document: Path, profile: Path, ready: Ready) -> BenchApp:
    """LibreOffice (`kind`: calc, writer) on `document`: its window is told by the document's
    name, and its memory growth is measured."""
    return BenchApp(
        name,
        bench_setup.office_argv(kind, document, profile),
        ready,
        title=document.name,
        env=bench_setup.OFFICE_ENV,
        office=True,
    )


def bench_apps(work: Path) -> tuple[list[BenchApp], list[str]]:
    """The windows measured, with the documents they open generated in `work`."""
    apps, notes = [], []
    for name in ("gedit", "mousepad"):
        if shutil.which(name):
            extra = ["--standalone"] if name == "gedit" else []
            apps.append(BenchApp(name, [name, *extra], has_control("text")))
        else:
            notes.append(f"{name} is not installed: not measured")
    if QT_APP.is_file():
        apps.append(BenchApp("qt", [sys.executable, str(QT_APP)], has_control("push button")))
    else:
        notes.append(f"the Qt test app ({QT_APP}) is not here: run from the source tree")
    large = bench_setup.large_page(work / "large.html", LARGE_PAGE_TITLE)
    sheet = bench_setup.sheet(work / "sheet.fods", rows=50, columns=20)
    document = bench_setup.text_document(work / "pages.fodt", pages=20)
    files = bench_setup.folder(work / "files", 500)
    lines = bench_setup.text_lines(work / "lines.txt", 500)
    wanted = [
        BenchApp(
            "chromium-2000",
            bench_setup.chromium_argv(large, work / "chromium-profile"),
            has_control("push button", "Save 1"),
            title=LARGE_PAGE_TITLE,
        ),
        office_app("calc-1000", "calc", sheet, work / "calc-profile", has_control("table cell")),
        office_app(
            "writer-20p", "writer", document, work / "writer-profile", has_control("paragraph")
        ),
        BenchApp(
            "thunar-500",
            ["thunar", str(files)],
            has_control("table cell", "file-001.txt"),
            thunar=True,
        ),
        # GTK 4 (libadwaita): window-relative rectangles, "showing" told by size (issue 24)
        BenchApp(
            "text-editor-500",
            ["gnome-text-editor", "--standalone", str(lines)],
            has_control("text"),
            title=lines.name,
        ),
        BenchApp("calculator", ["gnome-calculator"], has_control("push button", "7")),
    ]
    for bench_app_ in wanted:
        program = bench_app_.argv[0]
        if shutil.which(program):
            apps.append(bench_app_)
        else:
            notes.append(f"{program} is not installed (make system-deps): {bench_app_.name} "
                         "not measured")  # fmt: skip
    return apps, notes


@bench_app.command("tree")
def tree(
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object")] = False,
    runs: Annotated[int, typer.Option(min=1, help="Timed runs per method")] = 7,
    rss_reads: Annotated[
        int, typer.Option(min=1, help="Controls reads over which soffice's growth is measured")
    ] = 100,
    only: Annotated[
        list[str] | None,
        typer.Option(
            "--only", help="Measure only these rows (repeat; 'scaling' for the scaling row)"
        ),
    ] = None,
) -> None:
    """Control list and tree reading: ours vs a naive walk vs OSWorld's pyatspi walk."""
    with tempfile.TemporaryDirectory(prefix="rh-bench-tree-") as folder:
        work = Path(folder)
        apps, notes = bench_apps(work)
        names = [app_.name for app_ in apps] + [SCALING]
        unknown = [name for name in only or [] if name not in names]
        if unknown:
            raise typer.BadParameter(f"no row {unknown}; rows: {', '.join(names)}")
        if only:
            apps = [app_ for app_ in apps if app_.name in only]
        scaling = not only or SCALING in only
        with VirtualDesktop(DesktopSettings()) as desktop:
            report = asyncio.run(_bench(desktop, apps, runs, rss_reads, scaling, notes, work))
    typer.echo(json.dumps(report, indent=2) if as_json else render(report))


async def _bench(
    desktop: Desktop,
    apps: list[BenchApp],
    runs: int,
    rss_reads: int,
    scaling: bool,
    notes: list[str],
    work: Path,
) -> dict[str, Any]:
    pyatspi_ok = _pyatspi_available(notes)
    results: dict[str, Any] = {}
    screenshot_ms: list[float] = []
    settle_ms: list[float] = []
    with open_display(desktop) as display:
        async with AtspiClient(content=display.windows.content, drawn=display.drawn) as client:
            await client.connect(desktop)
            rows = len(apps) + (1 if scaling else 0)
            for number, bench_app_ in enumerate(apps, 1):
                # Progress on stderr: a row takes up to minutes, the table comes at the end.
                typer.echo(f"[{number}/{rows}] {bench_app_.name}", err=True)
                settings = (
                    bench_setup.thunar_settings(desktop, work / "thunar-config")
                    if bench_app_.thunar
                    else contextlib.nullcontext()
                )
                async with (
                    settings,
                    bench_setup.opened(
                        desktop,
                        client,
                        bench_app_.argv,
                        bench_app_.ready,
                        title=bench_app_.title,
                        env=bench_app_.env,
                    ) as opened,
                ):
                    window = opened.window
                    result = results[bench_app_.name] = await _measure(client, window, runs)
                    if pyatspi_ok:
                        result.update(_pyatspi(desktop, window, runs, result["_controls"]))
                        if result["controls_pyatspi_ms_median"] is not None:
                            result["controls_pyatspi_ratio"] = round(
                                result["controls_pyatspi_ms_median"] / result["controls_ms_median"],
                                1,
                            )
                    if bench_app_.office and window.pid is not None:
                        result.update(await _rss_growth(client, window, window.pid, rss_reads))
                    if bench_app_.name == "gedit":
                        screenshot_ms, settle_ms = await _screen_and_settle(desktop, window, runs)
            if scaling:
                typer.echo(f"[{rows}/{rows}] {SCALING}", err=True)
            scaled = await bench_scaling.measure(desktop, client, work, runs) if scaling else None
    for result in results.values():
        result.pop("_controls")
    return {
        "apps": results,
        "scaling": scaled,
        "screenshot_ms_median": _median(screenshot_ms),
        "action_settle_ms_median": _median(settle_ms),
        "runs": runs,
        "notes": notes,
    }


async def _rss_growth(
    client: AtspiClient, window: WindowInfo, pid: int, reads: int
) -> dict[str, Any]:
    """soffice's resident memory before and after `reads` consecutive controls reads."""
    before = bench_setup.rss_mb(pid)
    for _ in range(reads):
        await client.controls(window, fresh=True)  # each a whole read: the cells asked again
    after = bench_setup.rss_mb(pid)
    growth = None if before is None or after is None else round(after - before, 1)
    return {
        "rss_reads": reads,
        "rss_before_mb": before and round(before, 1),
        "rss_growth_mb": growth,
    }


async def _measure(client: AtspiClient, window: WindowInfo, runs: int) -> dict[str, Any]:
    frame = await client.find_frame(window)
    assert frame is not None  # _ready saw its controls
    ref = frame.node.ref

    async def naive_controls() -> list[Control]:
        # From the known frame: finding it is not counted for the naive walk (it is for ours).
        whole = await naive_tree(client.bus, ref, details_when_hidden=True)
        if whole is None:
            return []
        area = intersection(client.screen, whole.rect) if whole.rect else client.screen
        return select_controls(whole, area)

    timings: dict[str, list[float]] = {
        "ours": [],
        "naive": [],
        "tree": [],
        "tree_naive": [],
        "warm": [],
    }
    controls: ControlList | None = None
    differing_runs = 0
    nodes = 0
    served = client.kept.served
    for run in range(runs + 1):  # run 0 warms up every method
        ours, ms_ours = await _timed(lambda: client.controls(window, fresh=True))
        # Read again at once, nothing changed: what a step's look and controls read cost
        # when the window held still since the last one (atspi_kept).
        _, ms_warm = await _timed(lambda: client.controls(window))
        naive, ms_naive = await _timed(naive_controls)
        snapshot, ms_tree = await _timed(lambda: client.ui_tree(window))
        reference, ms_tree_naive = await _timed(lambda: naive_tree(client.bus, ref))
        if ours.controls != naive or snapshot.root != reference:
            differing_runs += 1  # a live app may change between two reads; see _agree
        controls, nodes = ours, snapshot.node_count
        if run:
            measured = (ms_ours, ms_naive, ms_tree, ms_tree_naive, ms_warm)
            for key, ms in zip(timings, measured, strict=True):
                timings[key].append(ms)
    assert controls is not None
    controls_equal = await _agree(lambda: _controls_of(client, window), naive_controls)
    tree_equal = await _agree(lambda: _root_of(client, window), lambda: naive_tree(client.bus, ref))
    medians = {key: statistics.median(values) for key, values in timings.items()}
    return {
        "nodes": nodes,
        "controls": len(controls.controls),
        "controls_ms_median": round(medians["ours"], 1),
        "controls_warm_ms_median": round(medians["warm"], 1),
        "warm_served": client.kept.served - served,  # of runs + 1: the others were read
        "controls_naive_ms_median": round(medians["naive"], 1),
        "controls_ratio": round(medians["naive"] / medians["ours"], 1),
        "controls_pyatspi_ms_median": None,
        "controls_pyatspi_ratio": None,
        "tree_ms_median": round(medians["tree"], 1),
        "tree_naive_ms_median": round(medians["tree_naive"], 1),
        "tree_ratio": round(medians["tree_naive"] / medians["tree"], 1),
        "controls_equal_naive": controls_equal,
        "tree_equal_naive": tree_equal,
        "runs_differing_from_naive": differing_runs,
        "_controls": controls.controls,
    }


async def _agree(ours: Callable[[], Awaitable[T]], naive: Callable[[], Awaitable[T]]) -> bool:
    """Whether both methods read the same, judged while the app holds still: the naive
    read runs before and after ours, and only a pair of equal naive reads counts."""
    for _attempt in range(5):
        before = await naive()
        mine = await ours()
        if before == await naive():
            return mine == before
    return False


async def _controls_of(client: AtspiClient, window: WindowInfo) -> list[Control]:
    return (await client.controls(window, fresh=True)).controls


async def _root_of(client: AtspiClient, window: WindowInfo) -> UiNode | None:
    return (await client.ui_tree(window)).root


def _pyatspi(
    desktop: Desktop, window: WindowInfo, runs: int, ours: list[Control]
) -> dict[str, Any]:
    command = [
        SYSTEM_PYTHON,
        str(PYATSPI_WALKER),
        f"--pid={window.pid}",
        f"--title={window.title}",
        f"--runs={runs}",
        "--screen",
        str(desktop.width),
        str(desktop.height),
    ]
    try:
        done = subprocess.run(
            command, env=desktop.env, capture_output=True, text=True, timeout=600, check=True
        )
        answer = json.loads(done.stdout)
    except (subprocess.SubprocessError, OSError, ValueError) as error:
        return {"pyatspi_error": f"{type(error).__name__}: {error}"}
    if "error" in answer:
        return {"pyatspi_error": answer["error"]}
    median = statistics.median(answer["ms"])
    theirs = sorted((role, name, rect) for role, name, rect in answer["controls"])
    mine = sorted((c.role, c.name, c.rect.as_list()) for c in ours)
    return {
        "controls_pyatspi_ms_median": round(median, 1),
        "controls_equal_pyatspi": theirs == mine,
    }


def _pyatspi_available(notes: list[str]) -> bool:
    if not PYATSPI_WALKER.is_file():
        notes.append("benchmarks/pyatspi_controls.py is not here: pyatspi not measured")
        return False
    probe = subprocess.run(
        [SYSTEM_PYTHON, "-c", "import pyatspi"], capture_output=True, check=False
    )
    if probe.returncode != 0:
        notes.append(
            "pyatspi is not available to /usr/bin/python3 (apt-get install python3-pyatspi, "
            "or `make bench`): only the naive walk is compared"
        )
        return False
    return True


async def _screen_and_settle(
    desktop: Desktop, window: WindowInfo, runs: int
) -> tuple[list[float], list[float]]:
    """A desktop screenshot with PNG encoding; a key press into gedit until the screen is
    still again (the desktop's own screenshot, input and settle routes)."""
    shots, settles = [], []
    with open_display(desktop) as display:
        screen, xinput = display.screen, display.input
        x, y = window.rect.center
        xinput.click(x, y)
        for run in range(runs + 1):
            start = time.perf_counter()
            capture_desktop_png(screen)
            shot_ms = (time.perf_counter() - start) * 1000
            start = time.perf_counter()
            before = frame(screen, window.rect)
            xinput.type_text("a")
            await wait_quiet(screen, before=before, region=window.rect)
            settle = (time.perf_counter() - start) * 1000
            if run:
                shots.append(shot_ms)
                settles.append(settle)
    return shots, settles


async def _timed(call: Callable[[], Awaitable[T]]) -> tuple[T, float]:
    start = time.perf_counter()
    value = await call()
    return value, (time.perf_counter() - start) * 1000


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 1) if values else None


def render(report: dict[str, Any]) -> str:
    lines = [f"medians of {report['runs']} runs, ms"]
    for name, result in report["apps"].items():
        pyatspi = result.get("controls_pyatspi_ms_median")
        lines.append(
            f"{name}: {result['nodes']} nodes, {result['controls']} controls\n"
            f"  controls  ours {result['controls_ms_median']}  "
            f"warm {result['controls_warm_ms_median']} "
            f"({result['warm_served']}/{report['runs'] + 1} kept)  "
            f"naive {result['controls_naive_ms_median']} ({result['controls_ratio']}x)  "
            f"pyatspi {pyatspi if pyatspi is not None else '-'}"
            f" ({result.get('controls_pyatspi_ratio') or '-'}x)\n"
            f"  tree      ours {result['tree_ms_median']}  "
            f"naive {result['tree_naive_ms_median']} ({result['tree_ratio']}x)\n"
            f"  same output as naive: controls {result['controls_equal_naive']}, "
            f"tree {result['tree_equal_naive']}"
            + (
                f"; as pyatspi: {result['controls_equal_pyatspi']}"
                if "controls_equal_pyatspi" in result
                else ""
            )
        )
        if "rss_growth_mb" in result:
            growth = result["rss_growth_mb"]
            lines.append(
                f"  soffice RSS {result['rss_before_mb']} MB, "
                f"{'-' if growth is None else f'{growth:+}'} MB over {result['rss_reads']} "
                "controls reads"
            )
    scaling = report.get("scaling")
    if scaling:
        lines.append(
            f"scaling: the same Chromium page, its table at 1x/10x/50x the rows "
            f"(goal: 50x within {scaling['goal_ratio']:g}x of 1x)"
        )
        for factor, size in scaling["sizes"].items():
            tree_nodes = f"{size['tree_nodes']}{'+' if size['tree_truncated'] else ''}"
            lines.append(
                f"  {factor:>3} {size['table_rows']:>5} rows: controls {size['controls_ms_median']}"
                f" ms (warm {size['controls_warm_ms_median']}), {size['controls']} controls, "
                f"{size['calls_per_read']:g} calls per read, full tree read {tree_nodes} nodes"
            )
        lines.append(f"  50x / 1x: {scaling['ratio']}x")
        commands = ", ".join(
            f"{factor} {size['command_ms_median']}" for factor, size in scaling["sizes"].items()
        )
        lines.append(
            f"  roundhouse tree --controls, a whole command: {commands} ms; 50x - 1x: "
            f"{scaling['command_growth_ms']} ms (goal: at most "
            f"{scaling['goal_command_growth_ms']:g})"
        )
    lines.append(f"screenshot (desktop, PNG) {report['screenshot_ms_median']}")
    lines.append(f"key press + settle {report['action_settle_ms_median']}")
    lines += [f"note: {note}" for note in report["notes"]]
    return "\n".join(lines)
