"""`replay:FILE`: answers read from a YAML or JSON list, in order, for tests and demos.

Each item is either a string (sent verbatim: handy for invalid answers), an answer object,
or {answer: <object or string>, usage: {input_tokens, output_tokens}, model: NAME, control:
{role, name, nth}, window: {application, title, nth}}; an answer whose "action" is a list
has `controls` and `windows` instead, one per action (null where it names none).
References to what a step printed ({{step 1 line 1}}, written by --record in place of the
recording machine's facts) are filled from this run's steps: see models/references.py. A
`control` says which control the answer's number meant, for a window that numbers its
controls otherwise, and a `window` which window its id meant, for a display that numbers
its windows otherwise: see models/held_controls.py.

An answer that named a control, accepted where it was recorded and refused here, is given
again, pointed at the fresh view the refusal came with: the window was still coming up (a
web page drawn but not yet exposed), and the recording's next answer belongs to the next
step. The asking agent's retries bound how often. An answer the recording itself saw
refused (`refused: true`) is not given again: the next one is the model's correction. A
FINISH the step asks about again after an unseen effect (agents/base.py) stands: its status
is given again without its actions, unless the recording saw that question too (`refused:
true`): then its next answer is the model's second word.
"""

from __future__ import annotations

import json
from collections import deque
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from roundhouse.config import ConfigError, read_yaml
from roundhouse.core.usage import Usage
from roundhouse.models.base import (
    Completion,
    ModelError,
    ModelRequest,
    doubts_the_last_answer,
    refuses_the_last_answer,
)
from roundhouse.models.held_controls import HeldControl, HeldWindow, point_at, point_at_window
from roundhouse.models.references import UnfillableReference, fill_answer, step_outputs


class _RecordedUsage(BaseModel):
    model_config = ConfigDict(extra="forbid")
    input_tokens: int = 0
    output_tokens: int = 0


class _Recorded(BaseModel):
    model_config = ConfigDict(extra="forbid")
    answer: dict[str, Any] | str
    usage: _RecordedUsage = _RecordedUsage()
    model: str = "replay"
    control: HeldControl | None = None
    window: HeldWindow | None = None
    # An answer of several actions: what each action names, by its place in the list.
    controls: list[HeldControl | None] | None = None
    windows: list[HeldWindow | None] | None = None
    # Where it was recorded, it was refused, or a FINISH asked about again after an unseen
    # effect (agents/base.py): the recording's next answer is the model's second word.
    refused: bool = False

    @property
    def names_controls(self) -> bool:
        return self.control is not None or any(self.controls or ())

    def pointed(self, text: str, observation: object) -> str:
        """`text` with each control and window it names pointed at the same one here."""
        if self.control is not None:
            text = point_at(text, observation, self.control)
        for index, control in enumerate(self.controls or ()):
            if control is not None:
                text = point_at(text, observation, control, index)
        if self.window is not None:
            text = point_at_window(text, observation, self.window)
        for index, window in enumerate(self.windows or ()):
            if window is not None:
                text = point_at_window(text, observation, window, index)
        return text

    @property
    def text(self) -> str:
        return self.answer if isinstance(self.answer, str) else json.dumps(self.answer)

    def standing(self) -> _Recorded:
        """The answer said again, its actions done: its last status, with no action."""
        if not isinstance(self.answer, dict):
            return self
        actions = self.answer.get("action")
        last = actions[-1] if isinstance(actions, list) and actions else actions
        status = last.get("status") if isinstance(last, dict) else None
        if status is None:
            return self
        action = {"function": None, "arguments": {}, "status": status}
        said = {**self.answer, "action": action}
        unheld = dict.fromkeys(("control", "controls", "window", "windows"))
        return self.model_copy(update={"answer": said, **unheld})


def load_recording(path: Path) -> list[_Recorded]:
    if not path.exists():
        raise ConfigError(f"replay file {path} does not exist")
    data = read_yaml(path, f"replay file {path}")  # ConfigError, as any file a user gives
    if not isinstance(data, list):
        raise ConfigError(f"replay file {path}: expected a list of answers")
    items = []
    for index, item in enumerate(data):
        if isinstance(item, dict) and "answer" not in item:
            item = {"answer": item}
        elif not isinstance(item, dict):
            item = {"answer": item if isinstance(item, str) else json.dumps(item)}
        try:
            items.append(_Recorded.model_validate(item))
        except ValidationError as error:
            raise ConfigError(f"replay file {path}: item {index}: {error}") from None
    return items


class ReplayModel:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.name = f"replay:{path}"
        self._answers = deque(load_recording(path))
        self.used = 0
        self._last: _Recorded | None = None

    @property
    def remaining(self) -> int:
        return len(self._answers)

    async def complete(self, request: ModelRequest) -> Completion:
        last = self._last
        if last and last.names_controls and not last.refused and refuses_the_last_answer(request):
            return self._serve(last, request)
        if last and not last.refused and doubts_the_last_answer(request):
            # Asked again about a FINISH after an unseen effect, where the recording was not:
            # the recorded model stands by it, acting no more.
            return self._serve(last.standing(), request)
        if not self._answers:
            raise ModelError(f"replay file {self.path} has no answer left after {self.used}")
        self._last = self._answers.popleft()
        self.used += 1
        return self._serve(self._last, request)

    def _serve(self, item: _Recorded, request: ModelRequest) -> Completion:
        usage = Usage(1, item.usage.input_tokens, item.usage.output_tokens)
        try:
            text = fill_answer(item.text, step_outputs(request.observation))
        except UnfillableReference as error:
            raise ModelError(
                f"replay file {self.path}: answer {self.used}: {error}", usage=usage
            ) from None
        return Completion(
            text=item.pointed(text, request.observation), usage=usage, model=item.model
        )
