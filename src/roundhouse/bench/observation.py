"""`roundhouse bench observation`: what a model reads of a window, against OSWorld's view of
the same window, measured in one run on a fresh virtual desktop with real applications.

For gedit with a document, the Qt test app, Chromium on a local form page with a 20-row
table, and Thunar on a folder, one window at a time:

- our tokens: the controls block of the AppAgent's prompt, rendered by the prompt's own code
  (agents.prompting.app_messages: the user message with the window's controls, less the same
  message with none), counted with tiktoken's o200k_base;
- OSWorld's tokens: its linearised accessibility table of the same window (bench_osworld);
- actionable recall: the controls a person would act on in that window, written out by hand
  below, found in our list with their role and name;
- states: the stateful controls (check boxes, combo boxes, entries, ...) whose prompt line
  shows their state or value. Control gains `states` and `value` fields in issue 11; until
  it has them this says "n/a".

Goals (issue 11 §5): ours ≤ 50% of OSWorld's on every window, recall 100%, states shown for
every stateful control. The figures are printed whatever they are.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import statistics
import sys
import tempfile
from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from roundhouse.agents.prompting import app_messages, describe_control
from roundhouse.bench import osworld as bench_osworld
from roundhouse.bench import setup as bench_setup
from roundhouse.bench.app import bench_app
from roundhouse.bench.tokens import Encoding, count_tokens, o200k
from roundhouse.bench.tree import QT_APP, available
from roundhouse.config import DesktopSettings
from roundhouse.devices.contract import Context, Control, WindowInfo
from roundhouse.devices.linux.atspi.client import AtspiClient
from roundhouse.devices.linux.desktops.desktop import Desktop
from roundhouse.devices.linux.desktops.virtual import VirtualDesktop
from roundhouse.models.observation import AppObservation

GOAL_RATIO = 0.5
# Roles whose state or value a person reads before acting on them.
STATEFUL_ROLES = frozenset({
    "check box", "radio button", "toggle button", "check menu item", "radio menu item",
    "switch", "combo box", "entry", "password text", "spin button", "slider", "text",
})  # fmt: skip


@dataclass(frozen=True)
class Wanted:
    """A control a person would act on. `name` None: the application names it nothing a
    person would say (a document's text area), so only its role is judged. A name may go on
    after " - " with what the application adds to it: Chromium's tab becomes "Roundhouse
    order form - Memory usage - 24.0 MB" a few seconds after the page loads."""

    role: str
    name: str | None

    def matches(self, control: Control) -> bool:
        if control.role != self.role:
            return False
        name = self.name
        return name is None or control.name == name or control.name.startswith(f"{name} - ")

    def __str__(self) -> str:
        return f"[{self.role}] {self.name!r}" if self.name is not None else f"[{self.role}]"


def wanted(role: str, *names: str | None) -> list[Wanted]:
    return [Wanted(role, name) for name in names]


NOTES_TEXT = "".join(
    f"{n}. Buy {item} for the weekend, and check the price against last week's list.\n"
    for n, item in enumerate(
        ["milk", "bread", "eggs", "apples", "coffee", "rice", "cheese", "tea", "soap", "oil"], 1
    )
)

# What a person acts on in each window, as they see it. Chromium's and gedit's window
# buttons are drawn by the application itself, so they are the window's controls too.
GEDIT = [
    *wanted("push button", "Open", "New", "Save", "Minimize", "Maximize", "Close"),
    *wanted("toggle button", "Menu", "Menu"),  # the recent-files arrow and the main menu
    *wanted("text", None),  # the document
]
QT = [
    *wanted("text", "Your name"),
    *wanted("push button", "Press me"),
    *wanted("check box", "Remember me"),
    *wanted("combo box", "red"),  # Qt names a combo box by its shown item on Linux
    *wanted("list item", *(f"Row {n}" for n in range(1, 9))),
]
CHROMIUM = [
    *wanted("entry", "Name", "Email", "Address and search bar"),
    *wanted("combo box", "Size"),
    *wanted("check box", "Gift wrap"),
    *wanted("push button", "Submit", "Reload", "New Tab", "Minimize", "Maximize"),
    *wanted("link", "More details"),
    *wanted("page tab", bench_setup.FORM_PAGE_TITLE),
    # the table's first rows: the values a person reads to answer about an order
    *wanted("table cell", "1", "Item 1", "3.50", "Item 2", "6.50", "Item 3", "9.50"),
]
THUNAR_FILES = 12
THUNAR = [
    *wanted("menu", "File", "Edit", "View", "Go", "Bookmarks", "Help"),
    *wanted("push button", "Back", "Forward", "Open Parent", "Home"),
    *wanted("toggle button", "Search for Files..."),
    *wanted("text", None),  # the location bar, holding the folder's path
    *wanted("table column header", "Name", "Size", "Type", "Date Modified"),
    *wanted("table cell", *(f"file-{n:02d}.txt" for n in range(1, THUNAR_FILES + 1))),
]


@dataclass(frozen=True)
class Case:
    name: str
    argv: list[str]
    ready: bench_setup.Ready
    wanted: list[Wanted]
    title: str | None = None


def cases(work: Path) -> tuple[list[Case], list[str]]:
    """The windows measured, those that can start here; notes on those that cannot."""
    document = work / "notes.txt"
    document.write_text(NOTES_TEXT)
    page = bench_setup.form_page(work / "form.html", rows=20)
    measured = [
        Case("gedit", ["gedit", "--standalone", str(document)], bench_setup.has_control("text"),
             GEDIT, title="notes.txt"),
        Case("qt", [sys.executable, str(QT_APP)], bench_setup.has_control("push button"), QT),
        Case("chromium", bench_setup.chromium_argv(page, work / "chromium-profile"),
             bench_setup.has_control("link", "More details"), CHROMIUM,
             title=bench_setup.FORM_PAGE_TITLE),
        Case("thunar", ["thunar", str(bench_setup.folder(work / "files", THUNAR_FILES))],
             bench_setup.has_control("table cell", "file-01.txt"), THUNAR),
    ]  # fmt: skip
    return available(measured, lambda case: case.argv)


@bench_app.command("observation")
def observation(
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object")] = False,
    runs: Annotated[int, typer.Option(min=1, help="Reads per window (medians)")] = 3,
    show: Annotated[
        bool, typer.Option("--show", help="Also print our block and OSWorld's table")
    ] = False,
) -> None:
    """Tokens of our controls block vs OSWorld's a11y table; actionable recall; states."""
    encoding = o200k()
    with tempfile.TemporaryDirectory(prefix="rh-bench-observation-") as folder:
        work = Path(folder)
        found, notes = cases(work)
        with VirtualDesktop(DesktopSettings()) as desktop:
            report = asyncio.run(_bench(desktop, found, runs, encoding, work))
    report["notes"] = notes + report["notes"]
    if not show:
        for window in report["windows"].values():
            window.pop("ours_block")
            window.pop("osworld_table")
    typer.echo(json.dumps(report, indent=2, ensure_ascii=False) if as_json else render(report))


async def _bench(
    desktop: Desktop, found: list[Case], runs: int, encoding: Encoding, work: Path
) -> dict[str, Any]:
    windows: dict[str, Any] = {}
    notes: list[str] = []
    async with AtspiClient() as client:
        await client.connect(desktop)
        for case in found:
            try:
                windows[case.name] = await _open_and_measure(
                    desktop, client, case, runs, encoding, work
                )
            except RuntimeError as error:  # an app that never showed its window: say so
                notes.append(f"{case.name}: not measured: {error}")
    return {"windows": windows, "runs": runs, "goal_ratio": GOAL_RATIO, "notes": notes}


async def _open_and_measure(
    desktop: Desktop,
    client: AtspiClient,
    case: Case,
    runs: int,
    encoding: Encoding,
    work: Path,
) -> dict[str, Any]:
    async with _settings(desktop, case, work):
        async with bench_setup.opened(
            desktop, client, case.argv, case.ready, title=case.title
        ) as opened:
            await bench_setup.held_still(client, opened.window)
            return await measure(client, opened.window, case, runs, encoding)


def _settings(desktop: Desktop, case: Case, work: Path) -> AbstractAsyncContextManager[None]:
    if case.name == "thunar":
        return bench_setup.thunar_settings(desktop, work / "thunar-config")
    return contextlib.nullcontext()


async def measure(
    client: AtspiClient, window: WindowInfo, case: Case, runs: int, encoding: Encoding
) -> dict[str, Any]:
    ours_tokens, theirs_tokens = [], []
    block = table = ""
    controls: list[Control] = []
    for _run in range(runs):
        listed = await client.controls(window)
        controls = listed.controls
        block = controls_block(window, controls, listed.context)
        ours_tokens.append(count_tokens(encoding, block))
        frame = await client.find_frame(window)
        if frame is None:
            raise RuntimeError(f"{window.title!r} has no accessibility tree")
        nodes = await bench_osworld.read_window(client.bus, frame.node.ref)
        table = bench_osworld.linearise(nodes)
        theirs_tokens.append(count_tokens(encoding, table))
    ours, theirs = statistics.median(ours_tokens), statistics.median(theirs_tokens)
    missing = recall_missing(controls, case.wanted)
    shown, stateful = states_shown(controls)
    return {
        "controls": len(controls),
        "osworld_rows": table.count("\n"),
        "ours_tokens": ours,
        "osworld_tokens": theirs,
        "ratio": round(ours / theirs, 2) if theirs else None,
        "recall_found": len(case.wanted) - len(missing),
        "recall_wanted": len(case.wanted),
        "recall_missing": [str(item) for item in missing],
        "states_shown": shown,
        "stateful": stateful,
        "ours_block": block,
        "osworld_table": table,
    }


def controls_block(
    window: WindowInfo, controls: Sequence[Control], context: Sequence[Context] = ()
) -> str:
    """The text the controls (and the text among them) add to the AppAgent's user message,
    rendered by the prompt's own code: the message with them, less what it shares with the
    message without them."""
    with_them = _app_user_text(window, controls, context)
    without = _app_user_text(window, (), ())
    start = 0
    while start < min(len(with_them), len(without)) and with_them[start] == without[start]:
        start += 1
    end = 0
    while (
        end < min(len(with_them), len(without)) - start and with_them[-1 - end] == without[-1 - end]
    ):
        end += 1
    return with_them[start : len(with_them) - end]


def _app_user_text(
    window: WindowInfo, controls: Sequence[Control], context: Sequence[Context]
) -> str:
    observation = AppObservation(
        board="Request: (the bench)",
        subtask="(the bench)",
        application=window.application,
        window=window,
        controls=tuple(controls),
        context=tuple(context),
    )
    return app_messages(observation, [])[1].text


def recall_missing(controls: Sequence[Control], wanted: Sequence[Wanted]) -> list[Wanted]:
    """The wanted controls not in the list: each listed control answers for one wanted one
    (two "Menu" buttons need two in the list)."""
    left = list(controls)
    missing = []
    for item in wanted:
        match = next((control for control in left if item.matches(control)), None)
        if match is None:
            missing.append(item)
        else:
            left.remove(match)
    return missing


def states_shown(controls: Sequence[Control]) -> tuple[int | None, int]:
    """How many stateful controls show what they know of their state in their prompt line,
    of how many; None while Control has no `states` field. Shown: the line changes when the
    control's states and text are taken away, or there is nothing to show (an empty entry
    that has no focus)."""
    stateful = [c for c in controls if c.role in STATEFUL_ROLES]
    if not stateful or getattr(stateful[0], "states", None) is None:
        return None, len(stateful)
    shown = 0
    for control in stateful:
        blank = control.model_copy(update={"states": [], "text": None})
        # An empty text field without the focus has nothing to show; a check box or a
        # combo box always has (checked or not, collapsed or not).
        nothing_to_show = (
            control.role in ("entry", "password text", "text")
            and not control.states
            and control.shown_value() is None
        )
        shown += nothing_to_show or describe_control(control) != describe_control(blank)
    return shown, len(stateful)


def render(report: dict[str, Any]) -> str:
    header = ("window", "ours", "OSWorld", "ratio", "recall", "states")
    rows = [header]
    for name, result in report["windows"].items():
        shown = result["states_shown"]
        rows.append(
            (
                name,
                f"{result['ours_tokens']:g}",
                f"{result['osworld_tokens']:g}",
                f"{result['ratio']:.0%}" if result["ratio"] is not None else "-",
                f"{result['recall_found']}/{result['recall_wanted']}",
                "n/a" if shown is None else f"{shown}/{result['stateful']}",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = [
        f"tokens (o200k_base, median of {report['runs']} reads): our controls block vs "
        f"OSWorld's a11y table; goal ≤ {report['goal_ratio']:.0%}, recall 100%"
    ]
    lines += ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
              for row in rows]  # fmt: skip
    for name, result in report["windows"].items():
        if result["recall_missing"]:
            lines.append(f"{name}: not in our list: {', '.join(result['recall_missing'])}")
    for name, result in report["windows"].items():
        for key, title in (("ours_block", "our block"), ("osworld_table", "OSWorld's table")):
            if key in result:
                lines += [f"--- {name}: {title}", result[key]]
    lines += [f"note: {note}" for note in report["notes"]]
    return "\n".join(lines)
