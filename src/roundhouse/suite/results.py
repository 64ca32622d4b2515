"""A batch's rows: one TaskResult per task, whichever executor ran it, written to
OUT/results.json and OUT/results.csv.

Both files are replaced atomically (written beside, then renamed), so a batch killed at
any moment leaves the rows of every task that had finished, and `--resume OUT` reads them.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

RESULTS_JSON = "results.json"
RESULTS_CSV = "results.csv"
# The statuses of an attempt that ended because what ran it died, not because of the task:
# the task is run again (up to --retries). KILLED: its `roundhouse run` was killed by a
# signal nobody in the batch sent (the OOM killer, an operator); LOST: the Ray worker or
# node running it died.
LOST_STATUSES = frozenset({"KILLED", "LOST"})
NOT_RUNNABLE = "NOT RUNNABLE"  # the task cannot run here (and was not): its row says why


@dataclass(frozen=True)
class TaskResult:
    task: str
    passed: bool
    status: str  # FINISH, FAIL, ERROR, TIMEOUT, SETUP FAILED, NOT RUNNABLE, KILLED, LOST
    checks_passed: int
    checks_total: int
    steps: int
    seconds: float  # the attempt's wall time on the machine that ran it
    input_tokens: int
    output_tokens: int
    cost: float | None  # None: unknown
    answer: str
    reason: str  # why it passed or failed, in a line
    log_dir: str
    run_seconds: float = 0.0  # of which the `roundhouse run` process ran
    node: str = ""  # the machine that ran it: its host name (local) or Ray node address
    attempts: int = 1
    retried: str = ""  # why earlier attempts were run again ("" when there were none)
    # OSWorld's tasks: the score its evaluator gives (0..1; None when it could not run),
    # and the task's domain (os, chrome, ...). Empty for roundhouse's own task files.
    score: float | None = None
    domain: str = ""
    # Whether the task uses Google Drive: OSWorld-Verified leaves those 8 out (361 of 369).
    google_drive: bool = False


FIELDS = [field.name for field in dataclasses.fields(TaskResult)]


def _json_line(result: TaskResult) -> str:
    return json.dumps(asdict(result), ensure_ascii=False)


def _csv_line(result: TaskResult) -> str:
    text = io.StringIO(newline="")
    csv.DictWriter(text, fieldnames=FIELDS).writerow(asdict(result))
    return text.getvalue()


def _write_lines(json_rows: list[str], csv_rows: list[str], out: Path) -> None:
    """One row a line: a JSON list, and CSV under its header."""
    body = ",\n".join(json_rows)
    _replace(out / RESULTS_JSON, f"[\n{body}\n]\n" if json_rows else "[]\n")
    header = io.StringIO(newline="")
    csv.DictWriter(header, fieldnames=FIELDS).writeheader()
    _replace(out / RESULTS_CSV, header.getvalue() + "".join(csv_rows))


def _replace(path: Path, text: str) -> None:
    """Write the whole file beside it, then rename it over: readers see old or new, whole."""
    part = path.with_name(f".{path.name}.part")
    with open(part, "w", encoding="utf-8", newline="") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(part, path)


def read_results(out: Path) -> list[TaskResult]:
    """The rows in OUT/results.json ([] when there is none). Keys this version does not know
    are dropped and missing ones take their defaults, so older files resume too."""
    path = out / RESULTS_JSON
    if not path.exists():
        return []
    data: Any = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, list):
        raise ValueError(f"{path} does not hold a list of rows")
    return [TaskResult(**{k: v for k, v in row.items() if k in FIELDS}) for row in data]


class ResultBoard:
    """The one writer of a batch's results: rows kept from an earlier run plus each row as
    it arrives, in the suite's order, written out after every one.

    Each row is serialised once, when it arrives: rewriting 10,000 rows then costs a join
    and a write (measured: serialising them all again took about a second a time)."""

    def __init__(self, out: Path, order: list[str], kept: list[TaskResult]) -> None:
        self.out = out
        self._order = {task: index for index, task in enumerate(order)}
        self._rows: dict[str, tuple[TaskResult, str, str]] = {}
        for row in kept:
            self._keep(row)

    def _keep(self, result: TaskResult) -> None:
        self._rows[result.task] = (result, _json_line(result), _csv_line(result))

    def add(self, result: TaskResult) -> None:
        self._keep(result)
        self.write()

    def write(self) -> None:
        entries = self._sorted()
        _write_lines([e[1] for e in entries], [e[2] for e in entries], self.out)

    def rows(self) -> list[TaskResult]:
        return [entry[0] for entry in self._sorted()]

    def _sorted(self) -> list[tuple[TaskResult, str, str]]:
        # Rows of tasks no longer in the suite are kept, after the suite's own.
        last = len(self._order)
        return sorted(self._rows.values(), key=lambda e: self._order.get(e[0].task, last))


def results_table(results: list[TaskResult]) -> str:
    judged = "score" if any(r.domain for r in results) else "checks"
    header = (
        f"{'task':32} {'result':6} {'status':12} {judged:6} "
        f"{'steps':>5} {'seconds':>7} {'tokens':>7} {'cost':>9}  node"
    )
    lines = [header, "-" * len(header)]
    for r in results:
        cost = "unknown" if r.cost is None else f"${r.cost:.4f}"
        retried = f" (attempt {r.attempts})" if r.attempts > 1 else ""
        # An OSWorld row shows its score where a roundhouse task shows its checks.
        judged = f"{r.checks_passed}/{r.checks_total:<4}"
        if r.domain:
            judged = f"{'-' if r.score is None else f'{r.score:g}':6}"
        lines.append(
            f"{r.task[:32]:32} {'pass' if r.passed else 'FAIL':6} {r.status[:12]:12} "
            f"{judged} {r.steps:>5} {r.seconds:>7.1f} "
            f"{r.input_tokens + r.output_tokens:>7} {cost:>9}  {r.node}{retried}"
        )
    passed = sum(r.passed for r in results)
    not_run = sum(r.status == NOT_RUNNABLE for r in results)
    summary = f"{passed} passed, {len(results) - passed - not_run} failed"
    lines.append(summary + (f", {not_run} not runnable here" if not_run else ""))
    if any(r.domain for r in results):
        lines += ["", domain_table(results)]
    return "\n".join(lines)


@dataclass(frozen=True)
class DomainRow:
    domain: str
    tasks: int
    scored: int
    score: float  # the sum of the scores
    not_runnable: int

    @property
    def mean(self) -> float:
        """OSWorld's success rate: unscored tasks count 0."""
        return self.score / self.tasks if self.tasks else 0.0


def domain_rows(results: list[TaskResult]) -> list[DomainRow]:
    """Per domain, then the total; empty when no row is OSWorld's."""
    if not any(r.domain for r in results):
        return []
    rows = []
    for name in [*sorted({r.domain for r in results}), "total"]:
        mine = [r for r in results if name == "total" or r.domain == name]
        scored = [r.score for r in mine if r.score is not None]
        not_run = sum(r.status == NOT_RUNNABLE for r in mine)
        rows.append(DomainRow(name, len(mine), len(scored), sum(scored), not_run))
    return rows


OSWORLD_TASKS = 369  # OSWorld's task files (evaluation_examples/test_all.json)
OSWORLD_VERIFIED_TASKS = 361  # OSWorld-Verified: all but the 8 that use Google Drive


@dataclass(frozen=True)
class SuiteRate:
    """The batch's scores over one of OSWorld's denominators: a task not in the batch, or
    not scored, counts 0 (as a task OSWorld's harness could not run does)."""

    name: str
    score: float
    tasks: int

    @property
    def rate(self) -> float:
        return self.score / self.tasks


def suite_rates(results: list[TaskResult]) -> list[SuiteRate]:
    """OSWorld's success rate over its 369 tasks and OSWorld-Verified's over 361; empty
    when no row is OSWorld's."""
    mine = [r for r in results if r.domain]
    if not mine:
        return []
    every = sum(r.score or 0.0 for r in mine)
    verified = sum(r.score or 0.0 for r in mine if not r.google_drive)
    return [
        SuiteRate("OSWorld (all tasks)", every, OSWORLD_TASKS),
        SuiteRate("OSWorld-Verified (no Google Drive)", verified, OSWORLD_VERIFIED_TASKS),
    ]


def domain_table(results: list[TaskResult]) -> str:
    """OSWorld's view of a batch: per domain, the tasks, those scored, the sum and mean of
    their scores (OSWorld's success rate: unscored tasks count 0) and those not runnable."""
    header = f"{'domain':20} {'tasks':>5} {'scored':>6} {'score':>6} {'mean':>6} {'not run':>7}"
    lines = [header, "-" * len(header)]
    for row in domain_rows(results):
        lines.append(
            f"{row.domain[:20]:20} {row.tasks:>5} {row.scored:>6} {row.score:>6.2f} "
            f"{row.mean:>6.2f} {row.not_runnable:>7}"
        )
    lines.append("")
    for rate in suite_rates(results):
        lines.append(f"{rate.name + ':':36} {rate.score:.2f} / {rate.tasks} = {rate.rate:.3f}")
    return "\n".join(lines)
