"""What an agent saw, as typed data. Prompts are rendered from it for real models; the
offline planner reads it directly. Pure data, no I/O."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from roundhouse.devices.contract import Context, Control, WindowInfo


@dataclass(frozen=True)
class PastStep:
    """One step the agent already took, with what came of it."""

    function: str | None
    arguments: dict[str, Any]
    status: str  # the agent's answered status
    result_status: str | None  # success | failure | skipped; None when nothing ran
    output: Any  # the tool's result value
    error: str | None
    comment: str = ""  # what the agent noted about this step (its progress, for itself)


@dataclass(frozen=True)
class ShellObservation:
    request: str
    history: tuple[PastStep, ...] = ()
    blackboard: str = ""
    tools: tuple[str, ...] = field(default=())
    workdir: str = "."


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
