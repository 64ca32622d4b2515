"""Reading a log folder's files, tolerant of a run that was killed while writing them.

A JSONL file's last line may be half-written (the process died mid-write): it is skipped
and said so. A line in the middle that does not parse is skipped too, and said so, so
one bad line never hides the rest of a session. A missing file is an empty one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from roundhouse.blackboard import Blackboard
from roundhouse.store import BLACKBOARD, EVALUATION_LOG, REQUEST_LOG, RESPONSE_LOG, ROUNDS_LOG

# Any of these makes a folder a session's log folder.
LOG_FILES = (RESPONSE_LOG, ROUNDS_LOG, REQUEST_LOG, BLACKBOARD, EVALUATION_LOG)

Model = TypeVar("Model", bound=BaseModel)


class NotALogFolder(ValueError):
    """The folder does not exist, or holds none of a session's log files."""


@dataclass
class Notes:
    """What the reader of a report should know about the folder itself."""

    lines: list[str] = field(default_factory=list)

    def add(self, text: str) -> None:
        self.lines.append(text)


def check_log_folder(folder: Path) -> None:
    if not folder.is_dir():
        raise NotALogFolder(f"{folder} is not a folder")
    if not any((folder / name).is_file() for name in LOG_FILES):
        raise NotALogFolder(
            f"{folder} is not a roundhouse log folder (it has none of {', '.join(LOG_FILES)})"
        )


def read_jsonl(folder: Path, name: str, model: type[Model], notes: Notes) -> list[Model]:
    """Every line of folder/name that is a valid `model`, in order."""
    path = folder / name
    if not path.is_file():
        return []
    # errors="replace": a multi-byte character cut by a kill must not lose the whole file.
    text = path.read_text(encoding="utf-8", errors="replace")
    lines = text.split("\n")
    # A complete file ends with "\n", so its split ends with "": anything else there is
    # the tail of a line the writer never finished.
    half_written = lines.pop()
    records = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            records.append(model.model_validate_json(line))
        except ValidationError as error:
            notes.add(f"{name}: line {number} was skipped, it is not valid: {_first(error)}")
    if half_written.strip():
        try:  # a writer that never adds "\n" is not a crash: keep its last line
            records.append(model.model_validate_json(half_written))
        except ValidationError:
            notes.add(
                f"{name}: its last line (line {len(lines) + 1}) is half-written, as a run "
                "stopped while writing it leaves it, and was skipped"
            )
    return records


def read_blackboard(folder: Path, notes: Notes) -> Blackboard:
    path = folder / BLACKBOARD
    if not path.is_file():
        return Blackboard()
    try:
        return Blackboard.from_json(path.read_text(encoding="utf-8", errors="replace"))
    except ValidationError as error:
        notes.add(f"{BLACKBOARD} was skipped, it is not valid: {_first(error)}")
        return Blackboard()


def list_files(folder: Path) -> frozenset[str]:
    """The folder's files as relative POSIX names ("action_step3.png", "ui_trees/x.json")."""
    return frozenset(
        path.relative_to(folder).as_posix() for path in folder.rglob("*") if path.is_file()
    )


def _first(error: ValidationError) -> str:
    """The first problem of a validation error, in one line (JSON errors say where)."""
    [first, *_] = error.errors()
    where = ".".join(str(part) for part in first["loc"])
    message = str(first["msg"])
    return f"{where}: {message}" if where else message


def pretty_json(value: object) -> str:
    return json.dumps(value, indent=1, ensure_ascii=False, default=str)
