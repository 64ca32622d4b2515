"""`roundhouse bench phrasing`: how much of a corpus of requests, worded as people word them,
the offline planner reads as meant, per category (tests/phrasing/corpus.yaml).

Each request comes with the plan it must produce (intents.describe, one step a line) or
FAIL. A request with a plan is understood when the planner reads exactly that plan; it
FAILed when the planner said it could not read it (honest, but not understood), and it
was misread when the planner read another plan (the worst: it would act on it). A request
marked FAIL must FAIL. Pure reading, no desktop: the figures hold on any machine.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

import typer

from roundhouse.bench.app import bench_app
from roundhouse.bench.tree import SOURCE_TREE
from roundhouse.config import ConfigError, read_yaml
from roundhouse.models.offline.intents import read_request

CORPUS = SOURCE_TREE / "tests" / "phrasing" / "corpus.yaml"

Outcome = Literal["understood", "failed", "misread", "failed as it must", "acted on"]


class CorpusError(ValueError):
    """A corpus file that is not a mapping of categories to lists of {say, plan}."""


@dataclass(frozen=True)
class Phrasing:
    category: str
    say: str
    plan: tuple[str, ...] | None  # None: it must FAIL


@dataclass(frozen=True)
class Verdict:
    phrasing: Phrasing
    read: tuple[str, ...] | None  # what the planner read; None: it FAILed
    outcome: Outcome


def load_corpus(path: Path) -> list[Phrasing]:
    try:
        document = read_yaml(path, f"{path}: the corpus")
    except ConfigError as error:
        raise CorpusError(str(error)) from None
    if not isinstance(document, dict):
        raise CorpusError(f"{path}: expected categories, each a list of {{say, plan}}")
    found = []
    for category, entries in document.items():
        if not isinstance(entries, list):
            raise CorpusError(f"{path}: category {category!r} is not a list")
        for number, entry in enumerate(entries, 1):
            found.append(_phrasing(path, str(category), number, entry))
    return found


def _phrasing(path: Path, category: str, number: int, entry: object) -> Phrasing:
    where = f"{path}: {category} #{number}"
    if not isinstance(entry, dict) or set(entry) != {"say", "plan"}:
        raise CorpusError(f"{where}: expected exactly the keys say and plan, got {entry!r}")
    say, plan = entry["say"], entry["plan"]
    if not isinstance(say, str) or not say.strip():
        raise CorpusError(f"{where}: say must be a request, got {say!r}")
    if plan == "FAIL":
        return Phrasing(category, say, None)
    if not isinstance(plan, list) or not plan or not all(isinstance(s, str) for s in plan):
        raise CorpusError(f"{where}: plan must be FAIL or a list of steps, got {plan!r}")
    return Phrasing(category, say, tuple(plan))


def judge(phrasing: Phrasing) -> Verdict:
    plan = read_request(phrasing.say).plan()
    read = None if plan is None else tuple(plan)
    if phrasing.plan is None:
        outcome: Outcome = "failed as it must" if read is None else "acted on"
    elif read is None:
        outcome = "failed"
    else:
        outcome = "understood" if read == phrasing.plan else "misread"
    return Verdict(phrasing, read, outcome)


@dataclass(frozen=True)
class Share:
    category: str
    planned: int  # requests with a plan
    understood: int
    failed: int
    misread: int
    outside: int  # requests that must FAIL
    outside_failed: int


def shares(verdicts: list[Verdict]) -> list[Share]:
    """One row per category, in the corpus's order, then all of them together."""
    categories = list(dict.fromkeys(v.phrasing.category for v in verdicts))
    rows = []
    for category in [*categories, "all"]:
        mine = [v for v in verdicts if category in ("all", v.phrasing.category)]
        counted = Counter(v.outcome for v in mine)
        rows.append(
            Share(
                category=category,
                planned=sum(1 for v in mine if v.phrasing.plan is not None),
                understood=counted["understood"],
                failed=counted["failed"],
                misread=counted["misread"],
                outside=sum(1 for v in mine if v.phrasing.plan is None),
                outside_failed=counted["failed as it must"],
            )
        )
    return rows


def _percent(part: int, whole: int) -> str:
    return f"{part}/{whole} ({part / whole:.0%})" if whole else "-"


def render(rows: list[Share], verdicts: list[Verdict], show: bool) -> str:
    header = ("category", "understood", "FAILed", "misread", "outside: FAILed")
    table = [header] + [
        (
            row.category,
            _percent(row.understood, row.planned),
            str(row.failed),
            str(row.misread),
            _percent(row.outside_failed, row.outside),
        )
        for row in rows
    ]
    widths = [max(len(line[i]) for line in table) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)) for line in table]
    for verdict in verdicts:
        wrong = verdict.outcome in ("misread", "acted on")
        if wrong or (show and verdict.outcome == "failed"):
            expected = verdict.phrasing.plan or ("FAIL",)
            lines.append(
                f"{verdict.outcome}: {verdict.phrasing.say!r}\n"
                f"    expected: {'; '.join(expected)}\n"
                f"    read:     {'; '.join(verdict.read or ('FAIL',))}"
            )
    return "\n".join(lines)


@bench_app.command("phrasing")
def phrasing(
    corpus: Annotated[Path, typer.Option(help="The corpus: categories of {say, plan}")] = CORPUS,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object")] = False,
    show: Annotated[
        bool, typer.Option("--show", help="Also list the requests not understood")
    ] = False,
) -> None:
    """The share of a corpus of requests the offline planner reads as meant, per category."""
    try:
        found = load_corpus(corpus)
    except CorpusError as error:
        typer.echo(f"roundhouse: {error}", err=True)
        raise typer.Exit(2) from error
    verdicts = [judge(p) for p in found]
    rows = shares(verdicts)
    if as_json:
        report: dict[str, Any] = {
            "corpus": str(corpus),
            "categories": [asdict(row) for row in rows],
            "not understood": [
                {"say": v.phrasing.say, "outcome": v.outcome, "read": v.read}
                for v in verdicts
                if v.outcome not in ("understood", "failed as it must")
            ],
        }
        typer.echo(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        typer.echo(render(rows, verdicts, show))
