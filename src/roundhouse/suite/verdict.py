"""What a task came to: its status from the run's log, its checks judged on the system it
ran on, and its row in the batch's results (with what its steps cost). Shared by the
suite's attempts (attempt.py) and OSWorld's (osworld/attempt.py)."""

from __future__ import annotations

import time
from pathlib import Path

from roundhouse.core.states import Status
from roundhouse.core.trajectory import StepRecord
from roundhouse.devices.linux.desktops.desktop import Desktop
from roundhouse.logs.store import ROUNDS_LOG
from roundhouse.suite.checks import SETTLE, CheckContext, evaluate
from roundhouse.suite.results import TaskResult
from roundhouse.suite.tasks import Task


def final_status(log_dir: Path | None, steps: list[StepRecord]) -> str:
    """FINISH or FAIL as the last step said; ERROR when the round ended otherwise."""
    if log_dir is None or not (log_dir / ROUNDS_LOG).exists():
        return "ERROR"
    last = steps[-1].status if steps else None
    return last.value if last in (Status.FINISH, Status.FAIL) else "ERROR"


async def judge(
    task: Task,
    status: str,
    log_dir: Path | None,
    steps: list[StepRecord],
    workdir: Path,
    desktop: Desktop | None,
    started: float,
) -> TaskResult:
    answer = steps[-1].answer if steps else ""
    posted = workdir / task.serve.record if task.serve is not None else None
    context = CheckContext(
        workdir=workdir, answer=answer, desktop=desktop, posted=posted, settle=SETTLE
    )
    try:
        outcome = await evaluate(task.checks, context) if task.checks else None
    finally:
        await context.close()
    checks_ok = outcome is None or outcome.passed
    if task.infeasible:
        passed = status == "FAIL" and bool(answer.strip()) and checks_ok
        reason = (
            "failed and said why, as it should" if passed else f"an infeasible task ended {status}"
        )
    else:
        passed = status == "FINISH" and checks_ok
        reason = "finished and its checks passed" if passed else f"ended {status}"
    if not passed and status in ("ERROR", "FAIL") and answer.strip():
        reason += f": {_first_line(answer)}"  # the round's own word on why it stopped
    if outcome is not None and not outcome.passed:
        reason += "; " + "; ".join(line for line in outcome.details if line.startswith("FAIL"))
    return task_row(
        task.id,
        status,
        started,
        steps,
        passed=passed,
        reason=reason,
        log_dir=log_dir,
        answer=answer,
        checks=(outcome.leaves_passed, outcome.leaves_total) if outcome else (0, 0),
    )


def _first_line(text: str, limit: int = 200) -> str:
    line = text.strip().splitlines()[0]
    return line if len(line) <= limit else line[: limit - 1] + "…"


def task_row(
    task_id: str,
    status: str,
    started: float,
    steps: list[StepRecord],
    *,
    passed: bool = False,
    reason: str = "",
    log_dir: Path | None = None,
    answer: str = "",
    checks: tuple[int, int] = (0, 0),
    score: float | None = None,
    domain: str = "",
) -> TaskResult:
    """A task's row: its verdict, and what its steps cost."""
    costs = [step.usage.cost for step in steps]
    return TaskResult(
        task=task_id,
        passed=passed,
        status=status,
        checks_passed=checks[0],
        checks_total=checks[1],
        steps=len(steps),
        seconds=round(time.monotonic() - started, 2),
        input_tokens=sum(step.usage.input_tokens for step in steps),
        output_tokens=sum(step.usage.output_tokens for step in steps),
        cost=None if any(cost is None for cost in costs) else round(sum(c or 0 for c in costs), 6),
        answer=answer,
        reason=reason,
        log_dir=str(log_dir or ""),
        score=score,
        domain=domain,
    )
