"""Task files: a request, how to set the stage, and checks that decide success from the
real system (files, commands, windows, controls read through AT-SPI) — never from what
the agent says it did.

    id: gedit-save
    request: open gedit, type Hello and save it as {workdir}/hello.txt
    agent: host
    setup: [{run: "rm -f hello.txt"}]
    checks: {all: [{file_contains: {path: hello.txt, text: Hello}}]}

{workdir} (the task's own folder), {python} and {suite} (the suite's folder) are replaced
in every string. A task marked infeasible passes only when the agent FAILs it and says
why; a feasible task passes only when the round FINISHes and its checks pass.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from roundhouse.config import ConfigError, read_yaml

TASK_SUFFIXES = (".yaml", ".yml", ".json")
ANSWERS_SUFFIX = ".answers.json"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PathText(_Strict):
    path: str
    text: str


class PathPattern(_Strict):
    path: str
    pattern: str  # a Python regular expression, searched for in the file (re.MULTILINE)

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, pattern: str) -> str:
        try:
            re.compile(pattern)
        except re.error as error:  # said when the task loads, not when it is checked
            raise ValueError(f"pattern {pattern!r} is not a regular expression: {error}") from None
        return pattern


class CommandCheck(_Strict):
    run: str
    exit_code: int = 0
    output_contains: str | None = None


class ControlCheck(_Strict):
    window: str  # a part of the window's title
    name: str  # the control's accessible name
    equals: str | None = None
    contains: str | None = None


class TreeTextCheck(_Strict):
    window: str
    contains: str  # found in any name or text of the window's accessibility tree


class Check(_Strict):
    """One check, or all / any of several. Exactly one key is given."""

    all: list[Check] | None = None
    any: list[Check] | None = None
    file_exists: str | None = None
    file_absent: str | None = None
    file_contains: PathText | None = None
    file_matches: PathPattern | None = None
    command: CommandCheck | None = None
    answer_contains: str | None = None
    answer_contains_output_of: str | None = None  # the agent's answer holds what this prints
    window_title: str | None = None
    control_text: ControlCheck | None = None
    tree_text: TreeTextCheck | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> Check:
        given = [name for name in type(self).model_fields if getattr(self, name) is not None]
        if len(given) != 1:
            keys = ", ".join(type(self).model_fields)
            raise ValueError(f"a check has exactly one of {keys}; got {given or 'none'}")
        return self

    @property
    def kind(self) -> str:
        return next(name for name in type(self).model_fields if getattr(self, name) is not None)

    @property
    def needs_desktop(self) -> bool:
        if self.all is not None or self.any is not None:
            return any(check.needs_desktop for check in (self.all or self.any or []))
        return self.kind in ("window_title", "control_text", "tree_text")


class FileSpec(_Strict):
    path: str
    content: str = ""


class SetupStep(_Strict):
    """Exactly one of: launch an application, create a file, run a command."""

    launch: str | None = None
    file: FileSpec | None = None
    run: str | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> SetupStep:
        if sum(value is not None for value in (self.launch, self.file, self.run)) != 1:
            raise ValueError("a setup step has exactly one of launch, file, run")
        return self


class Task(_Strict):
    id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
    request: str
    agent: Literal["linux", "host"] = "linux"
    setup: list[SetupStep] = Field(default_factory=list)
    checks: Check | None = None
    infeasible: bool = False
    max_step: int | None = Field(default=None, ge=1)
    description: str = ""

    @model_validator(mode="after")
    def _feasible_tasks_are_checked(self) -> Task:
        if not self.infeasible and self.checks is None:
            raise ValueError("a feasible task needs checks that decide its success")
        return self

    def resolved(self, workdir: Path, suite: Path) -> Task:
        """The task with {workdir}, {python} and {suite} filled in."""
        values = {"{workdir}": str(workdir), "{python}": sys.executable, "{suite}": str(suite)}
        return Task.model_validate(_fill(self.model_dump(exclude_none=True), values))


def _fill(value: Any, values: dict[str, str]) -> Any:
    if isinstance(value, str):
        for token, replacement in values.items():
            value = value.replace(token, replacement)
        return value
    if isinstance(value, list):
        return [_fill(item, values) for item in value]
    if isinstance(value, dict):
        return {key: _fill(item, values) for key, item in value.items()}
    return value


class SuiteTask(BaseModel):
    """A task as found in a suite: where it lies and its recorded answers."""

    task: Task
    path: Path

    @property
    def answers(self) -> Path:
        return self.path.with_name(self.task.id + ANSWERS_SUFFIX)


def load_task(path: Path) -> SuiteTask:
    data = read_yaml(path, f"task file {path}")
    try:
        return SuiteTask(task=Task.model_validate(data), path=path)
    except ValidationError as error:
        raise ConfigError(f"task file {path}: {error}") from None


def load_suite(path: Path) -> list[SuiteTask]:
    """The tasks of a folder (its task files, by name) or of one file."""
    if path.is_file():
        return [load_task(path)]
    if not path.is_dir():
        raise ConfigError(f"suite {path} does not exist")
    files = sorted(
        p
        for p in path.iterdir()
        if p.suffix in TASK_SUFFIXES and not p.name.endswith(ANSWERS_SUFFIX)
    )
    if not files:
        raise ConfigError(f"suite {path} holds no task files ({', '.join(TASK_SUFFIXES)})")
    tasks = [load_task(file) for file in files]
    seen: dict[str, Path] = {}
    for item in tasks:
        if item.task.id in seen:
            raise ConfigError(
                f"task id {item.task.id!r} is in {seen[item.task.id]} and {item.path}"
            )
        seen[item.task.id] = item.path
    return tasks
