"""The session's log folder, laid out as docs/design.md says: the files and how each is
written. Only the recorder (recorder.py) writes through it; resume and the report read.

Logs are appended and flushed as they happen (a killed process loses at most the step in
flight); whole-file states (blackboard.json, session.json) are replaced atomically. A task
name can never lead outside the logs folder.
"""

from __future__ import annotations

import json
import logging
import os
import re
import time
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from roundhouse.core.blackboard import Blackboard
from roundhouse.core.evaluation import Evaluation
from roundhouse.core.messages import Message
from roundhouse.core.record import RoundRecord, SessionRecord
from roundhouse.core.trajectory import StepRecord

RESPONSE_LOG = "response.log"
REQUEST_LOG = "request.log"
EVALUATION_LOG = "evaluation.log"
ROUNDS_LOG = "rounds.jsonl"
BLACKBOARD = "blackboard.json"
SESSION_FILE = "session.json"

log = logging.getLogger(__name__)


class LogWriteError(RuntimeError):
    """The log folder cannot be written (a full disk, a read-only or vanished folder); the
    message names the file and the reason. What was written before stays whole."""


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
MAX_TASK_NAME = 80


def safe_task_name(name: str) -> str:
    """A single, harmless folder name: "../x" → "x", "/etc" → "etc", "a b" → "a_b"."""
    parts = [part for part in re.split(r"[/\\]+", name) if part not in ("", ".", "..")]
    cleaned = _UNSAFE.sub("_", "_".join(parts)).strip("._-")[:MAX_TASK_NAME]
    return cleaned or "task"


def default_task_name() -> str:
    return time.strftime("session-%Y%m%d-%H%M%S")


class LogStore:
    def __init__(self, folder: Path) -> None:
        self.folder = folder.resolve()  # absolute, so snapshot paths compare with it
        self.folder.mkdir(parents=True, exist_ok=True)

    @classmethod
    def create(cls, logs_root: Path, task: str | None) -> LogStore:
        """A new folder for a session; an existing non-empty one is never written over:
        the name gets a -2, -3, ... suffix instead."""
        name = safe_task_name(task) if task else default_task_name()
        root = logs_root.resolve()
        folder = root / name
        suffix = 2
        while folder.exists() and any(folder.iterdir()):
            folder = root / f"{name}-{suffix}"
            suffix += 1
        if folder.resolve().parent != root:  # defence in depth; safe_task_name already ensures it
            raise ValueError(f"task name {task!r} leads outside {root}")
        return cls(folder)

    def path(self, name: str) -> Path:
        """Where a snapshot file of this name goes (a bare file name, or ui_trees/NAME)."""
        target = (self.folder / name).resolve()
        if not target.is_relative_to(self.folder.resolve()):
            raise ValueError(f"{name!r} is not a file name inside the log folder")
        target.parent.mkdir(parents=True, exist_ok=True)
        return target

    def write_step(self, step: StepRecord) -> None:
        self._append(RESPONSE_LOG, step.model_dump_json())

    def write_prompt(
        self, round_id: int | None, agent: str, attempt: int, messages: tuple[Message, ...]
    ) -> None:
        entry = {
            "time": time.time(),
            "round_id": round_id,
            "agent": agent,
            "attempt": attempt,
            "messages": [
                {"role": m.role, "text": m.text, "images": [self._relative(p) for p in m.images]}
                for m in messages
            ],
        }
        self._append(REQUEST_LOG, json.dumps(entry, ensure_ascii=False))

    def write_round(self, record: RoundRecord) -> None:
        """The round in TaskWeaver's shape: its state, posts and board (its steps are
        response.log's lines)."""
        self._append(ROUNDS_LOG, record.model_dump_json(exclude={"steps"}))

    def write_checkpoint(self, session: SessionRecord) -> None:
        """The whole session, what resume loads: each round with its steps (its posts and
        TaskWeaver state are derived from them, and not written twice)."""
        derived = {"rounds": {"__all__": {"post_list", "record_state"}}}
        self._replace(SESSION_FILE, session.model_dump_json(indent=1, exclude=derived))

    def write_evaluation(self, evaluation: Evaluation) -> None:
        self._append(EVALUATION_LOG, evaluation.model_dump_json())

    def write_blackboard(self, blackboard: Blackboard) -> None:
        self._replace(BLACKBOARD, blackboard.to_json())

    def write_json(self, name: str, value: BaseModel | Any) -> Path:
        text = (
            value.model_dump_json(indent=1)
            if isinstance(value, BaseModel)
            else json.dumps(value, indent=1)
        )
        target = self.path(name)
        self._replace(str(target.relative_to(self.folder)), text)
        return target

    def read_steps(self) -> list[StepRecord]:
        steps, problems = read_jsonl(self.folder / RESPONSE_LOG, StepRecord)
        for problem in problems:
            log.warning("%s: %s", self.folder, problem)
        return steps

    def _relative(self, path: Path) -> str:
        return str(path.relative_to(self.folder)) if path.is_relative_to(self.folder) else str(path)

    def _append(self, name: str, line: str) -> None:
        """One whole line, or nothing: a write cut short (a full disk) is taken back, so
        the next line, once there is room, does not run into half of this one."""
        path = self.folder / name
        data = (line + "\n").encode("utf-8")
        try:
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        except OSError as error:
            raise _write_error(path, error) from error
        try:
            start = os.lseek(fd, 0, os.SEEK_END)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
            except OSError as error:
                os.ftruncate(fd, start)  # shrinking a file needs no space
                raise _write_error(path, error) from error
        finally:
            os.close(fd)

    def _replace(self, name: str, text: str) -> None:
        """The new content whole, or the old one untouched."""
        target = self.folder / name
        temporary = target.with_name(f".{target.name}.tmp")
        try:
            temporary.write_text(text, encoding="utf-8")
            os.replace(temporary, target)
        except OSError as error:
            temporary.unlink(missing_ok=True)
            raise _write_error(target, error) from error


def _write_error(path: Path, error: OSError) -> LogWriteError:
    return LogWriteError(f"cannot write the log file {path}: {error.strerror or error}")


Record = TypeVar("Record", bound=BaseModel)


def read_jsonl(path: Path, model: type[Record]) -> tuple[list[Record], list[str]]:
    """Every line of a JSON-lines log that is a valid `model`, in order, and what was
    skipped, in words. A run killed mid-write leaves a half-written last line: skipped and
    said, never fatal."""
    if not path.is_file():
        return [], []
    # errors="replace": a multi-byte character cut by a kill must not lose the whole file.
    lines = path.read_text(encoding="utf-8", errors="replace").split("\n")
    # A complete file ends with "\n", so its split ends with "": anything else there is
    # the tail of a line the writer never finished.
    half_written = lines.pop()
    records: list[Record] = []
    problems: list[str] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            records.append(model.model_validate_json(line))
        except ValidationError as error:
            problems.append(
                f"{path.name}: line {number} was skipped, it is not valid: {first_error(error)}"
            )
    if half_written.strip():
        try:  # a writer that never adds "\n" is not a crash: keep its last line
            records.append(model.model_validate_json(half_written))
        except ValidationError:
            problems.append(
                f"{path.name}: its last line (line {len(lines) + 1}) is half-written, as a run "
                "stopped while writing it leaves it, and was skipped"
            )
    return records, problems


def first_error(error: ValidationError) -> str:
    """The first problem of a validation error, in a line."""
    problem = error.errors()[0]
    where = ".".join(str(part) for part in problem["loc"])
    return f"{where}: {problem['msg']}" if where else str(problem["msg"])
