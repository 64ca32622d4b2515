"""One OSWorld task in `roundhouse batch`, start to score.

1. Whether it can run here (check.py), and on the session kind asked for (sessions.py): a
   task that cannot gets a row NOT RUNNABLE that says why, and no desktop is started for it.
2. A fresh OSWorld environment (env.py) in the task's work folder: a virtual desktop of that
   kind and a home of its own.
3. Its config steps; then one `roundhouse run` of its instruction by the host agent on that
   desktop (confirmations approved: OSWorld's harness asks none), its log under OUT/logs.
4. Its postconfig steps, then its evaluator: the score (evaluate.py). The agent's FAIL is
   OSWorld's FAIL action: what an infeasible task needs, and a feasible task's 0.

The row's status is the round's (FINISH, FAIL, ERROR, TIMEOUT...), or SETUP FAILED / NOT
RUNNABLE; `score` is OSWorld's score, `passed` means a score of 1.
"""

from __future__ import annotations

import dataclasses
import shutil
import time
from pathlib import Path

from roundhouse.core.trajectory import StepRecord
from roundhouse.devices.linux.desktops.desktop import DesktopUnavailable
from roundhouse.devices.linux.display import backends
from roundhouse.devices.linux.display.base import DisplayUnavailable
from roundhouse.logs.store import LogStore
from roundhouse.osworld.check import CLASSES, Machine, classify, uses_google_drive
from roundhouse.osworld.env import OsworldDesktop, OsworldEnv
from roundhouse.osworld.evaluate import evaluate
from roundhouse.osworld.files import FileCache
from roundhouse.osworld.sessions import x11_only
from roundhouse.osworld.steps import NotRunnable, StepError, run_steps
from roundhouse.osworld.tasks import OsworldItem, answers_path
from roundhouse.suite.attempt import AgentRun, AttemptOptions, run_agent
from roundhouse.suite.results import NOT_RUNNABLE, TaskResult
from roundhouse.suite.verdict import final_status, task_row

HOME_PLACE = "{home}"


async def run_osworld_task(item: OsworldItem, options: AttemptOptions) -> TaskResult:
    row = await _run(item, options)
    return dataclasses.replace(row, google_drive=uses_google_drive(item))


async def _run(item: OsworldItem, options: AttemptOptions) -> TaskResult:
    started = time.monotonic()
    task = item.task
    files = FileCache(options.files) if options.files is not None else None

    def row(status: str, reason: str) -> TaskResult:
        return task_row(task.id, status, started, [], reason=reason, domain=item.domain)

    verdict = classify(item, Machine.here(), files)
    if verdict.klass != "runnable":
        return row(NOT_RUNNABLE, f"not runnable here: {CLASSES[verdict.klass]}: {verdict.reason}")
    backend = backends.named(options.session)
    needs = x11_only(task, backend)
    if needs:
        return row(NOT_RUNNABLE, f"not runnable on {backend.kind}: X11 only ({needs})")
    work = (options.out / "work" / task.id).resolve()
    shutil.rmtree(work, ignore_errors=True)
    try:
        async with OsworldDesktop(
            work, files=files, session=options.session, shipped=options.shipped
        ) as env:
            return await _attempt(item, env, options, started)
    except (OSError, DesktopUnavailable, DisplayUnavailable) as error:
        return row("ERROR", f"{type(error).__name__}: {error}")


async def _attempt(
    item: OsworldItem, env: OsworldEnv, options: AttemptOptions, started: float
) -> TaskResult:
    task = item.task

    def row(status: str, reason: str, steps: list[StepRecord] | None = None,
            log_dir: Path | None = None, score: float | None = None) -> TaskResult:  # fmt: skip
        answer = steps[-1].answer if steps else ""
        return task_row(
            task.id, status, started, steps or [], passed=score == 1.0, reason=reason,
            log_dir=log_dir, answer=answer, score=score, domain=item.domain,
        )  # fmt: skip

    try:
        await run_steps(env, task.config)
        await env.apps.ready()  # the first screenshot shows the launched windows
    except NotRunnable as error:
        return row(NOT_RUNNABLE, f"not runnable here: {error}")
    except StepError as error:
        return row("SETUP FAILED", str(error))
    spec = AgentRun(
        task_id=task.id,
        request=task.instruction,
        agent="host",
        answers=answers_path(item, options.answers),
        places={HOME_PLACE: str(env.home)},
        approve=True,
    )
    run = await run_agent(spec, env.home, env.env, True, options)
    log_dir = run.log_dir
    steps = LogStore(log_dir).read_steps() if log_dir and log_dir.exists() else []
    status = run.status or final_status(log_dir, steps)
    if run.problem is not None:
        return row(status, run.problem, steps, log_dir)
    try:
        await run_steps(env, task.evaluator.postconfig)
    except StepError as error:
        return row("ERROR", f"postconfig: {error}", steps, log_dir)
    try:
        score = await evaluate(env, task.evaluator, gave_up=status == "FAIL")
    except NotRunnable as error:
        return row(NOT_RUNNABLE, f"not runnable here: {error}", steps, log_dir)
    return row(status if score.error is None else "ERROR", score.explain(), steps, log_dir,
               score.value)  # fmt: skip
