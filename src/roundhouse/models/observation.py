"""What an agent saw, as typed data. Prompts are rendered from it for real models; the
offline planner reads it directly. Pure data, no I/O.

The history a prompt shows is made of the round's step records (core/trajectory.py) in one
place, `past_steps` and `past_action` here: the agents' prompts and the offline planner's
own assumptions (offline/several.py) show a step the same way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from roundhouse.core.states import Status
from roundhouse.core.trajectory import ActionRecord, StepRecord
from roundhouse.devices.contract import Context, Control, WindowInfo

# The result status of an action its answer's list stopped before (agents/action_list.py).
NOT_RUN = "not run"


@dataclass(frozen=True)
class PastStep:
    """One action the agent already took, with what came of it (or an answer that called
    no tool). An answer of several actions is an entry per action, numbered on as the
    prompt numbers them, each saying where it stood in its list."""

    function: str | None
    arguments: dict[str, Any]
    status: str  # the agent's answered status (CONTINUE for the actions before a list's last)
    # success | failure | skipped | not run (its list stopped first); "answered" (the user
    # replied); None when the answer called nothing
    result_status: str | None
    output: Any  # the tool's result value
    error: str | None  # why it failed, or why it did not run
    comment: str = ""  # what the agent noted about this step (its progress, for itself)
    in_list: tuple[int, int] | None = None  # its number and the list's length, if over one

    @property
    def ran(self) -> bool:
        """A tool was called, whatever came of it."""
        return self.function is not None and self.result_status not in (None, NOT_RUN)


def past_steps(step: StepRecord) -> tuple[PastStep, ...]:
    """A step as a prompt shows it afterwards: what each of its actions did, or why it did
    not run; an answer that called nothing (or asked the user) as an entry of its own."""
    status = step.status.value if step.status else ""
    count = len(step.actions)
    entries = [
        past_action(
            action,
            # The actions before the last went on; the last says what the answer came to.
            status=status if number == count else Status.CONTINUE.value,
            comment=step.comment,
            in_list=(number, count) if count > 1 else None,
        )
        for number, action in enumerate(step.actions, 1)
    ]
    if not entries or step.question is not None:
        entries.append(
            PastStep(
                function=None,
                arguments={},
                status=status,
                result_status="answered" if step.user_reply else None,
                output=step.user_reply,
                error=None,
                comment=step.comment,
            )
        )
    return tuple(entries)


def past_action(
    action: ActionRecord,
    status: str,
    *,
    comment: str = "",
    in_list: tuple[int, int] | None = None,
) -> PastStep:
    """One action of a step as the history shows it: what came of it, or why it did not
    run (its result then is NOT_RUN)."""
    result = action.result
    return PastStep(
        function=action.function,
        arguments=action.arguments,
        status=status,
        result_status=result.status.value if result else NOT_RUN,
        output=result.result if result else None,
        error=result.error if result else action.not_run,
        comment=comment,
        in_list=in_list,
    )


@dataclass(frozen=True)
class ShellObservation:
    request: str
    history: tuple[PastStep, ...] = ()
    blackboard: str = ""
    tools: tuple[str, ...] = field(default=())
    workdir: str = "."
    max_actions: int = 1  # actions one answer may hold (settings.max_actions)


@dataclass(frozen=True)
class SubtaskView:
    """A subtask an AppAgent ended this round, as the host sees it."""

    application: str
    subtask: str
    status: str  # FINISH or FAIL
    result: str


@dataclass(frozen=True)
class HostObservation:
    request: str
    windows: tuple[WindowInfo, ...]
    applications: tuple[str, ...]  # "gedit — Text Editor": launch_application takes the name
    subtasks: tuple[SubtaskView, ...] = ()
    history: tuple[PastStep, ...] = ()
    blackboard: str = ""
    screenshot: Path | None = None
    max_actions: int = 1


@dataclass(frozen=True)
class AppObservation:
    board: str  # the host's board, labelled: the request and its plan
    subtask: str  # what the host asked of this application
    application: str
    window: WindowInfo  # the window observed: the app's own, or its dialog in front
    controls: tuple[Control, ...]
    context: tuple[Context, ...] = ()  # headings, labels, alerts among the controls
    # the observed window is not the application's own window, or shows a dialog inside it
    in_dialog: bool = False
    tree_available: bool = True
    note: str | None = None
    history: tuple[PastStep, ...] = ()
    screenshot: Path | None = None  # the annotated screenshot
    max_actions: int = 1
