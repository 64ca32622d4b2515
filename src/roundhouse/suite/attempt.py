"""One attempt at a task, start to verdict, on this machine: whichever executor runs a
batch (local processes, or Ray workers on other machines), a task is run by this code.

Each task runs as its own `roundhouse run` process (a crash or a hang ends that task,
not the batch), in its own work folder, with its own log folder; a GUI task on a virtual
desktop of its own. Success is then decided by the task's checks against the real system,
on the desktop the task ran on (verdict.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import asdict, dataclass
from pathlib import Path

from roundhouse.config import ConfigError, DesktopSettings
from roundhouse.devices.linux.apps.launch import Launcher
from roundhouse.devices.linux.desktops.desktop import Desktop, DesktopUnavailable
from roundhouse.devices.linux.display import backends
from roundhouse.devices.linux.display.backends import open_display
from roundhouse.devices.linux.display.base import DisplayServer, DisplayUnavailable, WindowError
from roundhouse.devices.shell import run_command
from roundhouse.logs.store import LogStore
from roundhouse.models.fakes import protocol_of
from roundhouse.models.machine_facts import quoted_facts, this_machine
from roundhouse.suite.environment import TaskDesktop
from roundhouse.suite.recordings import (
    SENT_SUFFIX,
    load_recording,
    playing,
    recording_path,
    turns_of,
)
from roundhouse.suite.results import NOT_RUNNABLE, TaskResult
from roundhouse.suite.server import TaskServer
from roundhouse.suite.tasks import SERVER, SetupStep, SuiteTask, Task
from roundhouse.suite.verdict import final_status, judge, task_row

TASK_TIMEOUT = 300.0
SETUP_TIMEOUT = 60.0
UNATTENDED_HAND_BACK = 3.0  # seconds of quiet after which a batch task's run goes on


@dataclass(frozen=True)
class AttemptOptions:
    out: Path  # work folders under OUT/work, log folders under OUT/logs
    model: str  # "replay" alone: each task's recorded answers
    record: bool = False  # write each task's answers beside it (<id>.answers.json)
    assume_yes: bool = False
    timeout: float = TASK_TIMEOUT
    # OSWorld's tasks: the dataset's files (--files) and the folder of recorded answers
    # (--answers; by default beside each task file).
    files: Path | None = None
    answers: Path | None = None
    session: str | None = None  # what each GUI task's virtual desktop runs (None: the default)
    shipped: bool = False  # that session as its distribution ships it (DesktopSettings.shipped)
    agent: str | None = None  # the agent of every GUI task (its own, `host`, when None)
    # Each task's recorded conversation for the model's protocol, played by its fake
    # (suite/recordings.py), as "replay" plays its answers for the default agents.
    recordings: bool = False


@dataclass(frozen=True)
class RunOutcome:
    """How the `roundhouse run` process ended."""

    status: str | None  # set when the run did not end on its own
    log_dir: Path | None
    problem: str | None
    seconds: float


async def run_task(item: SuiteTask, options: AttemptOptions) -> TaskResult:
    """One task, start to verdict. Whatever goes wrong ends this task, not the batch."""
    started = time.monotonic()
    try:
        return await _run_task(item, options, started)
    except (OSError, WindowError, DesktopUnavailable, DisplayUnavailable) as error:
        reason = f"{type(error).__name__}: {error}"
        return task_row(item.task.id, "ERROR", started, [], reason=reason)


async def _run_task(item: SuiteTask, options: AttemptOptions, started: float) -> TaskResult:
    if item.task.x11_only and not backends.named(options.session).runs_x11_programs:
        reason = f"not runnable on {options.session}: X11 only ({item.task.x11_only})"
        return task_row(item.task.id, NOT_RUNNABLE, started, [], reason=reason)
    workdir = (options.out / "work" / item.task.id).resolve()
    shutil.rmtree(workdir, ignore_errors=True)
    workdir.mkdir(parents=True)
    # The server's port is taken before anything runs, so {server} is known everywhere.
    server = TaskServer.bind() if item.task.serve is not None else None
    url = server.url if server is not None else None
    task = item.task.resolved(workdir, item.path.parent.resolve(), url)
    script = None
    if options.recordings:
        try:
            script, added = _recording(item, options.model, workdir, _places(workdir, item, url))
        except ConfigError as error:
            return task_row(item.task.id, "ERROR", started, [], reason=str(error))
        task = task.model_copy(update={"setup": [*task.setup, *added]})
    settings = DesktopSettings(session=options.session, shipped=options.shipped)
    async with _desktop_for(task, workdir, settings) as desktop:
        display: DisplayServer | None = open_display(desktop) if desktop else None
        launcher = (
            Launcher(display.windows, desktop.env, desktop.app_command, startup=display.startup)
            if desktop and display
            else None
        )
        try:
            launched: list[subprocess.Popen[bytes]] = []
            problem = await _set_up(task, workdir, desktop, launcher, launched, server)
            if problem is not None:
                return task_row(task.id, "SETUP FAILED", started, [], reason=problem)
            run = await _run(task, item, workdir, desktop, options, url, script)
            log_dir, problem = run.log_dir, run.problem
            steps = LogStore(log_dir).read_steps() if log_dir and log_dir.exists() else []
            status = run.status or final_status(log_dir, steps)
            died = _died(launched)
            if died:
                problem = f"{problem + '; ' if problem else ''}{died}"
            if problem is not None:
                status = "ERROR" if died and status != "KILLED" else status
                result = task_row(task.id, status, started, steps, reason=problem, log_dir=log_dir)
            else:
                result = await judge(task, status, log_dir, steps, workdir, desktop, started)
            return dataclasses.replace(result, run_seconds=run.seconds)
        finally:
            if launcher is not None:
                launcher.kill_launched()
            if display is not None:
                display.close()
            if server is not None:
                await asyncio.to_thread(server.stop)


@contextlib.asynccontextmanager
async def _desktop_for(
    task: Task, workdir: Path, settings: DesktopSettings
) -> AsyncIterator[Desktop | None]:
    """A GUI task's environment (environment.py: a fresh desktop of the session kind, and a
    fresh home beside the work folder); none for a shell task."""
    if task.agent != "host":
        yield None
        return
    home = workdir.parent / f"{task.id}.home"
    async with TaskDesktop(settings, home) as desktop:
        yield desktop


async def _set_up(
    task: Task,
    workdir: Path,
    desktop: Desktop | None,
    launcher: Launcher | None,
    launched: list[subprocess.Popen[bytes]],
    server: TaskServer | None = None,
) -> str | None:
    for step in task.setup:
        if step.serve is not None:
            assert server is not None  # bound for every task that has a serve step
            root = workdir / step.serve.root  # an absolute root stays absolute
            if not root.is_dir():
                return f"setup serves {step.serve.root!r}, which is no folder"
            server.start(root, workdir / step.serve.record)
        elif step.file is not None:
            target = workdir / step.file.path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(step.file.content, encoding="utf-8")
        elif step.run is not None:
            output = await run_command(step.run, workdir, SETUP_TIMEOUT, 4000)
            if output.exit_code != 0:
                return f"setup `{step.run}` exited {output.exit_code}: {output.stderr.strip()}"
        elif step.launch is not None:
            if launcher is None:
                return f"setup launches {step.launch!r}, but the task has no desktop (agent: host)"
            known = set(launcher.launched())
            try:
                await launcher.launch(step.launch)
            except WindowError as error:
                return f"setup could not launch {step.launch!r}: {error}"
            launched += [child for child in launcher.launched() if child not in known]
    return None


def _recording(
    item: SuiteTask, model: str, workdir: Path, places: dict[str, str]
) -> tuple[Path, list[SetupStep]]:
    """The task's recording for the model's protocol, filled in and written beside its work
    folder (the fake's script), and the setup steps it adds."""
    protocol = protocol_of(model)
    if protocol is None:
        raise ConfigError(f"--recordings needs a computer-use model (anthropic:…), not {model}")
    path = recording_path(item, protocol)
    if not path.is_file():
        raise ConfigError(f"no recording of {protocol.family} for this task at {path}")
    script = workdir.parent / f"{item.task.id}.recording.yaml"
    script.write_text(_fill_places(path.read_text(encoding="utf-8"), places), encoding="utf-8")
    turns_of(script, protocol)  # a script its fake cannot read fails here, named
    return script, load_recording(script).setup


async def _run(
    task: Task,
    item: SuiteTask,
    workdir: Path,
    desktop: Desktop | None,
    options: AttemptOptions,
    server: str | None = None,
    recording: Path | None = None,
) -> RunOutcome:
    # --agent stands for the GUI tasks' own agent (host); a shell task keeps its own.
    chosen = options.agent if options.agent and task.agent == "host" else task.agent
    agent = AgentRun(
        task_id=task.id,
        request=task.request,
        agent=chosen,
        answers=item.answers,
        places=_places(workdir, item, server),
        max_step=task.max_step,
        approve=options.assume_yes or task.approve,
        recording=recording,
    )
    env = dict(desktop.env) if desktop else dict(os.environ)
    return await run_agent(agent, workdir, env, desktop is not None, options)


@dataclass(frozen=True)
class AgentRun:
    """What one `roundhouse run` of a task needs: the request, who answers it, and where its
    recorded answers are (read with model "replay", written with --record), with the
    placeholders that make them hold on any machine."""

    task_id: str
    request: str
    agent: str
    answers: Path
    places: dict[str, str]
    max_step: int | None = None
    approve: bool = False
    recording: Path | None = None  # the fake's script (a filled-in recording), if one plays


async def run_agent(
    spec: AgentRun,
    workdir: Path,
    env: dict[str, str],
    on_desktop: bool,
    options: AttemptOptions,
) -> RunOutcome:
    """One `roundhouse run` process for the task, in `workdir` with `env` (a desktop's,
    `on_desktop`: it works on that desktop as its current one), its log under OUT/logs."""
    logs = (options.out / "logs").resolve()
    places = spec.places
    model = options.model
    replay = workdir.parent / f"{spec.task_id}.replay.json"
    if model == "replay":
        if not spec.answers.exists():
            return RunOutcome("ERROR", None, f"no recorded answers at {spec.answers}", 0.0)
        replay.write_text(_fill_places(spec.answers.read_text(encoding="utf-8"), places))
        model = f"replay:{replay}"
    argv = [
        sys.executable,
        "-m",
        "roundhouse",
        "run",
        spec.request,
        "--model",
        model,
        "--agent",
        spec.agent,
        "--logs",
        str(logs),
        "--task",
        spec.task_id,
    ]
    if spec.max_step is not None:
        argv += ["--max-step", str(spec.max_step)]
    if spec.approve:
        argv.append("--yes")
    if options.record:
        argv += ["--record", str(workdir.parent / f"{spec.task_id}.recorded.json")]
    if on_desktop:
        argv += ["--desktop", "current"]
    if spec.recording is None:
        return await _run_process(argv, workdir, env, logs, spec, options)
    protocol = protocol_of(options.model)
    assert protocol is not None  # _recording found it
    with playing(turns_of(spec.recording, protocol), protocol) as fake:
        run = await _run_process(argv, workdir, {**env, **fake.env}, logs, spec, options)
        problem = fake.problem()
        # What was sent, beside the work folder: `bench models` counts its tokens.
        sent = {"model": options.model, "requests": [asdict(s) for s in fake.sent()]}
        (workdir.parent / f"{spec.task_id}{SENT_SUFFIX}").write_text(json.dumps(sent))
    return run if problem is None or run.problem else dataclasses.replace(run, problem=problem)


async def _run_process(
    argv: list[str],
    workdir: Path,
    env: dict[str, str],
    logs: Path,
    spec: AgentRun,
    options: AttemptOptions,
) -> RunOutcome:
    recorded = workdir.parent / f"{spec.task_id}.recorded.json"
    started = time.monotonic()
    # A task's desktop is nobody's: input not the agent's comes from the task's own commands
    # (a script's clicks), and no one would hand the desktop back. Quiet that long hands it
    # back by itself, where a person's run would wait for them.
    env = {"ROUNDHOUSE_DESKTOP__HAND_BACK_AFTER": str(UNATTENDED_HAND_BACK), **env}
    process = await asyncio.create_subprocess_exec(
        *argv,
        cwd=workdir,
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )

    def outcome(status: str | None, log_dir: Path | None, problem: str | None) -> RunOutcome:
        return RunOutcome(status, log_dir, problem, round(time.monotonic() - started, 2))

    try:
        stdout, stderr = await asyncio.wait_for(process.communicate(), options.timeout)
    except TimeoutError:
        process.kill()
        await process.wait()
        waited = f"no end after {options.timeout:g} s"
        return outcome("TIMEOUT", _log_dir(b"", logs, spec.task_id), waited)
    except asyncio.CancelledError:
        # The batch was cancelled (Ctrl-C, or the worker running us died): the run must
        # not outlive it, nor keep drawing on a desktop that is about to stop.
        process.kill()
        await process.wait()
        raise
    log_dir = _log_dir(stdout, logs, spec.task_id)
    assert process.returncode is not None
    if process.returncode < 0:
        # Killed by a signal the batch did not send: what ran it failed, not the task.
        name = signal.Signals(-process.returncode).name
        return outcome("KILLED", log_dir, f"its `roundhouse run` was killed by {name}")
    if options.record and recorded.exists():
        problem = _store_answers(recorded, spec.answers, spec.places)
        if problem is not None:
            return outcome("ERROR", log_dir, problem)
    said = stderr.decode(errors="replace").strip()[-400:]
    if process.returncode == 2:
        return outcome("ERROR", log_dir, f"usage error: {said}")
    if log_dir is None:
        return outcome(
            "ERROR", None, f"the run left no log folder (exit {process.returncode}): {said}"
        )
    return outcome(None, log_dir, None)  # the status comes from the log


def _store_answers(recording: Path, answers: Path, places: dict[str, str]) -> str | None:
    """Store the recorded answers with the suite's placeholders, so that they replay in any
    folder on any machine; refuse (and say why) when they still quote the user's own name or
    home folder, which no placeholder stands for."""
    held = _hold_places(recording.read_text(encoding="utf-8"), places)
    leaked = quoted_facts(held, [fact for fact in this_machine() if fact.personal])
    if leaked:
        return (
            f"the recorded answers quote {leaked[0].what} ({leaked[0].text!r}) outside the "
            f"suite's placeholders {', '.join(places)}; {answers.name} was not written"
        )
    answers.write_text(held, encoding="utf-8")
    return None


def _died(launched: list[subprocess.Popen[bytes]]) -> str | None:
    """An application the setup started and that is gone: the task did not run as meant."""
    gone = [child for child in launched if child.poll() is not None]
    if not gone:
        return None
    return "; ".join(f"the application {c.args!r} exited with {c.returncode}" for c in gone)


def _places(workdir: Path, item: SuiteTask, server: str | None = None) -> dict[str, str]:
    """The placeholders of a task and what they stand for in this run, longest first. The
    server's address holds its port, new in every run: a recording keeps {server}."""
    places = {
        "{suite}": str(item.path.parent.resolve()),
        "{workdir}": str(workdir),
        "{python}": sys.executable,
    }
    if server is not None:
        places[SERVER] = server
    return dict(sorted(places.items(), key=lambda kv: -len(kv[1])))


def _hold_places(text: str, places: dict[str, str]) -> str:
    for token, value in places.items():
        text = text.replace(value, token)
    return text


def _fill_places(text: str, places: dict[str, str]) -> str:
    for token, value in places.items():
        text = text.replace(token, value)
    return text


def _log_dir(stdout: bytes, logs: Path, task_id: str) -> Path | None:
    for line in stdout.decode(errors="replace").splitlines():
        if line.startswith("Logs: "):
            return Path(line[len("Logs: ") :])
    folder = logs / task_id
    return folder if folder.exists() else None
