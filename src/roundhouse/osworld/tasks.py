"""OSWorld's task files, as its evaluation_examples folder lays them out.

    evaluation_examples/
      test_all.json                 a meta file: {"os": ["<id>", ...], "chrome": [...]}
      examples/<domain>/<id>.json   one task each

A task (our reading of the format; unknown keys are kept out of the way, not refused):

    {"id": "...", "instruction": "...",
     "config": [{"type": "execute", "parameters": {"command": [...], "shell": false}}, ...],
     "evaluator": {"func": "exact_match" | [...], "conj": "and" | "or",
                   "result": {"type": "vm_command_line", ...} | [...],
                   "expected": {"type": "rule", "rules": {...}} | [...],
                   "options": {...} | [...], "postconfig": [steps]},
     "related_apps": [...], "proxy": false}

A list of functions is scored part by part, each with its own result, expected and options
(the lists are as long as the functions). `func: "infeasible"` scores 1 only when the agent
gave up (FAIL). Ids and domain names become folder names: anything but letters, digits, '.',
'_' and '-' is refused, as is a file whose name is not its task's id.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from roundhouse.config import ConfigError
from roundhouse.suite.tasks import ANSWERS_SUFFIX

SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
INFEASIBLE = "infeasible"


class _Lenient(BaseModel):
    """OSWorld's files carry keys we do not read (trajectory, possibility_of_env_change)."""

    model_config = ConfigDict(extra="allow")


class Step(_Lenient):
    """One config or postconfig step: its type names what to do."""

    type: str
    parameters: dict[str, Any] = Field(default_factory=dict)


class Getter(_Lenient):
    """What a getter is asked for: its type and its own keys (path, command, rules...)."""

    type: str

    @property
    def config(self) -> dict[str, Any]:
        """The getter's keys, as OSWorld hands them to its getter function."""
        return self.model_dump()


@dataclass(frozen=True)
class Part:
    """One metric of an evaluator with what it compares."""

    metric: str
    result: Getter | None
    expected: Getter | None
    options: dict[str, Any]


GetterSlot = Getter | dict[str, Any] | None


class Evaluator(_Lenient):
    func: str | list[str]
    conj: Literal["and", "or"] = "and"
    result: GetterSlot | list[GetterSlot] = None
    expected: GetterSlot | list[GetterSlot] = None
    options: dict[str, Any] | list[dict[str, Any] | None] | None = None
    postconfig: list[Step] = Field(default_factory=list)

    @field_validator("result", "expected", mode="before")
    @classmethod
    def _getters(cls, value: Any) -> Any:
        def one(item: Any) -> Any:
            return Getter.model_validate(item) if isinstance(item, dict) and item else None

        return [one(item) for item in value] if isinstance(value, list) else one(value)

    @property
    def problem(self) -> str | None:
        """Why the evaluator cannot be run as written (OSWorld's DesktopEnv asserts the same:
        as many results, expected values and options as functions), or None."""
        if isinstance(self.func, list):
            count = len(self.func)
            for name in ("result", "expected", "options"):
                value = getattr(self, name)
                if isinstance(value, list) and len(value) != count:
                    return f"its evaluator has {count} functions but {len(value)} {name} entries"
        return None

    @property
    def infeasible(self) -> bool:
        return self.func == INFEASIBLE

    def parts(self) -> list[Part]:
        """Each metric with its getters and options (none for an infeasible task)."""
        if self.infeasible:
            return []
        if isinstance(self.func, str):
            return [Part(self.func, _single(self.result), _single(self.expected), _opts(self))]
        count = len(self.func)  # (a malformed evaluator: as far as all its lists go)
        results = _spread(self.result, count)
        expected = _spread(self.expected, count)
        options = self.options if isinstance(self.options, list) else [self.options] * count
        return [
            Part(func, result, wanted, dict(option or {}))
            for func, result, wanted, option in zip(
                self.func, results, expected, options, strict=False
            )
        ]

    def getters(self) -> list[Getter]:
        return [g for part in self.parts() for g in (part.result, part.expected) if g]


def _single(slot: Any) -> Getter | None:
    return slot if isinstance(slot, Getter) else None


def _spread(slot: Any, count: int) -> list[Getter | None]:
    if isinstance(slot, list):
        return [_single(item) for item in slot]
    return [_single(slot)] * count


def _opts(evaluator: Evaluator) -> dict[str, Any]:
    options = evaluator.options
    return dict(options) if isinstance(options, dict) else {}


class OsworldTask(_Lenient):
    id: str
    instruction: str
    config: list[Step] = Field(default_factory=list)
    evaluator: Evaluator
    related_apps: list[str] = Field(default_factory=list)
    proxy: bool = False
    snapshot: str = ""

    @field_validator("id")
    @classmethod
    def _safe_id(cls, value: str) -> str:
        if not SAFE_NAME.match(value):
            raise ValueError(f"task id {value!r} is not a plain name (letters, digits, . _ -)")
        return value

    def steps(self) -> list[Step]:
        """Every step it runs: config, then postconfig."""
        return [*self.config, *self.evaluator.postconfig]


@dataclass(frozen=True)
class OsworldItem:
    """A task as found: its domain (the folder it lies in) and its file."""

    task: OsworldTask
    path: Path
    domain: str


def answers_path(item: OsworldItem, folder: Path | None) -> Path:
    """Where the task's recorded answers are: FOLDER/<id>.answers.json (--answers), else
    beside the task's file."""
    return (folder if folder is not None else item.path.parent) / f"{item.task.id}{ANSWERS_SUFFIX}"


def is_osworld(path: Path) -> bool:
    """Whether `path` is OSWorld's layout (a task file, a meta file, a domain folder or a
    folder of domains, with or without its examples/ level) rather than a roundhouse suite."""
    if path.is_file():
        return path.suffix == ".json" and _kind(_read_json(path)) is not None
    if not path.is_dir():
        return False
    if (path / "examples").is_dir():
        return True
    return any(_is_task_file(file) for file in _task_files(path)) or any(
        _is_task_file(file) for sub in _subfolders(path) for file in _task_files(sub)
    )


def load_examples(path: Path) -> list[OsworldItem]:
    """The tasks of a folder of domains, one domain's folder, one task file or a meta file;
    in domain order, then by id."""
    if path.is_file():
        data = _read_json(path)
        if _kind(data) == "meta":
            return _from_meta(path, data)
        return [_load(path, path.parent.name, data)]
    if not path.is_dir():
        raise ConfigError(f"{path} does not exist")
    root = path / "examples" if (path / "examples").is_dir() else path
    own = _task_files(root)
    if own:
        items = [_load(file, root.name) for file in own]
    else:
        items = [_load(file, sub.name) for sub in _subfolders(root) for file in _task_files(sub)]
    if not items:
        raise ConfigError(f"{path} holds no OSWorld task files (examples/<domain>/<id>.json)")
    return _unique(items)


def _from_meta(path: Path, data: Any) -> list[OsworldItem]:
    root = path.parent / "examples"
    items = []
    for domain, ids in data.items():
        _check_name(domain, f"{path}: domain")
        if not isinstance(ids, list):
            raise ConfigError(f"{path}: domain {domain!r} lists no task ids")
        for task_id in ids:
            _check_name(str(task_id), f"{path}: task id in {domain!r}")
            file = root / domain / f"{task_id}.json"
            if not file.is_file():
                raise ConfigError(f"{path} names task {domain}/{task_id}, but {file} is missing")
            items.append(_load(file, domain))
    return _unique(items)


def _load(file: Path, domain: str, data: Any = None) -> OsworldItem:
    _check_name(domain, f"{file}: domain (its folder)")
    data = _read_json(file) if data is None else data
    try:
        task = OsworldTask.model_validate(data)
    except ValidationError as error:
        raise ConfigError(f"OSWorld task file {file}: {error}") from None
    if task.id != file.stem:
        raise ConfigError(f"{file} holds task {task.id!r}: its name must be its id")
    return OsworldItem(task=task, path=file, domain=domain)


def _unique(items: list[OsworldItem]) -> list[OsworldItem]:
    seen: dict[str, Path] = {}
    for item in items:
        if item.task.id in seen:
            first = seen[item.task.id]
            raise ConfigError(f"task id {item.task.id!r} is in {first} and {item.path}")
        seen[item.task.id] = item.path
    return items


def _check_name(name: str, what: str) -> None:
    if not SAFE_NAME.match(name):
        raise ConfigError(f"{what} {name!r} is not a plain name (letters, digits, . _ -)")


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ConfigError(f"cannot read {path}: {error}") from None


def _kind(data: Any) -> Literal["task", "meta"] | None:
    if isinstance(data, dict) and "instruction" in data and "evaluator" in data:
        return "task"
    if isinstance(data, dict) and data and all(isinstance(v, list) for v in data.values()):
        return "meta"
    return None


def _is_task_file(path: Path) -> bool:
    try:
        return _kind(json.loads(path.read_text(encoding="utf-8"))) == "task"
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return False


def _task_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob("*.json") if p.is_file())


def _subfolders(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))
