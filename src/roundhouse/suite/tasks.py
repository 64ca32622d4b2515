"""Task files: a request, how to set the stage, and checks that decide success from the
real system (files, commands, windows, controls read through AT-SPI) — never from what
the agent says it did.

    id: gedit-save
    request: open gedit, type Hello and save it as {workdir}/hello.txt
    agent: host
    setup: [{run: "rm -f hello.txt"}]
    checks: {all: [{file_contains: {path: hello.txt, text: Hello}}]}

{workdir} (the task's own folder), {python} and {suite} (the suite's folder) are replaced
in every string; {server} too, in a task with a `serve` step: the address of the task's own
web server (http://127.0.0.1:PORT, a free port). A task marked infeasible passes only when
the agent FAILs it and says why; a feasible task passes only when the round FINISHes and its
checks pass.

    setup: [{serve: {root: "{suite}/pages"}}]      # serves that folder at {server}/...
    request: open chromium {server}/form.html, type Ada into the Name field, ...
    checks: {posted: {path: /submit, fields: {name: Ada}}}   # what the browser really sent

Documents are read as their applications' users would open them: `docx_contains` (the text
of a Word document's paragraphs, one line each), `xlsx_cell` (a spreadsheet cell's value as
last calculated, and its formula). A task whose request itself asks for what the agent
would ask to confirm (submitting a form) says `approve: true`.
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


class PostedCheck(_Strict):
    """A form the task's server received: a POST to `path` with these fields (and maybe
    more), each holding exactly the text given."""

    path: str = "/"
    fields: dict[str, str]


CELL = re.compile(r"^[A-Z]{1,3}[1-9][0-9]*$")


class CellCheck(_Strict):
    """A spreadsheet cell (.xlsx): its value as last calculated, and/or its formula."""

    path: str
    cell: str  # "A3"
    sheet: str | None = None  # the first sheet when not given
    value: str | None = None  # a number compares as a number: "60" matches 60 and 60.0
    formula: str | None = None  # "=SUM(A1:A2)", compared without spaces, case ignored

    @model_validator(mode="after")
    def _says_what(self) -> CellCheck:
        if not CELL.match(self.cell):
            raise ValueError(f"cell {self.cell!r} is no cell name like A3")
        if self.value is None and self.formula is None:
            raise ValueError("a cell check gives value, formula or both")
        return self


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
    posted: PostedCheck | None = None  # read from the record of the task's `serve` step
    docx_contains: PathText | None = None
    xlsx_cell: CellCheck | None = None

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


class ServeSpec(_Strict):
    """The task's own web server on 127.0.0.1, at {server}, until the task is judged."""

    root: str  # the folder whose files it serves ({suite}/pages)
    record: str = "posted.jsonl"  # each form posted to it, one JSON line (in the work folder)


class SetupStep(_Strict):
    """Exactly one of: launch an application, create a file, run a command, serve a
    folder over HTTP."""

    launch: str | None = None
    file: FileSpec | None = None
    run: str | None = None
    serve: ServeSpec | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> SetupStep:
        given = (self.launch, self.file, self.run, self.serve)
        if sum(value is not None for value in given) != 1:
            raise ValueError("a setup step has exactly one of launch, file, run, serve")
        return self


SERVER = "{server}"


class Task(_Strict):
    id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
    request: str
    agent: Literal["linux", "host"] = "linux"
    setup: list[SetupStep] = Field(default_factory=list)
    checks: Check | None = None
    infeasible: bool = False
    # The request itself asks for what the agent asks to confirm (submitting a form, saving
    # over a file): its confirmations are approved, as `roundhouse run --yes` does.
    approve: bool = False
    max_step: int | None = Field(default=None, ge=1)
    description: str = ""
    # Why the task's application runs on X11 only (an X11 program such as xterm: the
    # virtual Wayland sessions run no XWayland). On another session its row says so,
    # NOT RUNNABLE, and it is not run.
    x11_only: str = ""

    @model_validator(mode="after")
    def _feasible_tasks_are_checked(self) -> Task:
        if not self.infeasible and self.checks is None:
            raise ValueError("a feasible task needs checks that decide its success")
        return self

    @model_validator(mode="after")
    def _one_server_when_used(self) -> Task:
        serving = [step for step in self.setup if step.serve is not None]
        if len(serving) > 1:
            raise ValueError("a task has at most one serve step: {server} names one server")
        uses_server = SERVER in self.model_dump_json()
        if uses_server and not serving:
            raise ValueError("the task uses {server} but has no serve step to start one")
        if self._needs_record() and not serving:
            raise ValueError("a posted check reads the record of a serve step; there is none")
        return self

    @property
    def serve(self) -> ServeSpec | None:
        return next((step.serve for step in self.setup if step.serve is not None), None)

    def _needs_record(self) -> bool:
        def posted(check: Check) -> bool:
            parts = check.all or check.any
            return check.posted is not None or any(posted(part) for part in parts or [])

        return self.checks is not None and posted(self.checks)

    def resolved(self, workdir: Path, suite: Path, server: str | None = None) -> Task:
        """The task with {workdir}, {python}, {suite} and {server} (when it serves) filled in."""
        values = {"{workdir}": str(workdir), "{python}": sys.executable, "{suite}": str(suite)}
        if server is not None:
            values[SERVER] = server
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
