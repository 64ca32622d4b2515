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

from roundhouse.core.blackboard import Blackboard
from roundhouse.logs import store
from roundhouse.logs.store import (
    BLACKBOARD,
    EVALUATION_LOG,
    REQUEST_LOG,
    RESPONSE_LOG,
    ROUNDS_LOG,
    SESSION_FILE,
)

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
    """Every line of folder/name that is a valid `model`, in order; what was skipped goes
    into the notes."""
    records, problems = store.read_jsonl(folder / name, model)
    for problem in problems:
        notes.add(problem)
    return records


def read_blackboard(folder: Path, notes: Notes) -> Blackboard:
    path = folder / BLACKBOARD
    if not path.is_file():
        return Blackboard()
    try:
        return Blackboard.from_json(path.read_text(encoding="utf-8", errors="replace"))
    except ValidationError as error:
        notes.add(f"{BLACKBOARD} was skipped, it is not valid: {store.first_error(error)}")
        return Blackboard()


def read_requests(folder: Path, notes: Notes) -> list[str]:
    """Each round's request, in round order, from the session's checkpoint (which holds
    them even for a round whose record in rounds.jsonl was never written)."""
    path = folder / SESSION_FILE
    if not path.is_file():
        return []
    try:
        rounds = json.loads(path.read_text(encoding="utf-8", errors="replace")).get("rounds", [])
        return [str(round_["user_query"]) for round_ in rounds]
    except (ValueError, AttributeError, TypeError, KeyError) as error:
        notes.add(f"{SESSION_FILE} was skipped, it is not a session's checkpoint: {error}")
        return []


def list_files(folder: Path) -> frozenset[str]:
    """The folder's files as relative POSIX names ("action_step3.png", "ui_trees/x.json")."""
    return frozenset(
        path.relative_to(folder).as_posix() for path in folder.rglob("*") if path.is_file()
    )


def pretty_json(value: object) -> str:
    return json.dumps(value, indent=1, ensure_ascii=False, default=str)
