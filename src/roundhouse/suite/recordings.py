"""A task's recorded conversation with a computer-use model, played back by its protocol's
fake (models/fakes.py): what `roundhouse batch SUITE --agent computer --model SPEC
--recordings` runs, as `--model replay` runs each task's answers for the default agents.

A recording lies beside the suite, one per protocol and task:

    SUITE/recordings/PROTOCOL/TASK.yaml   (tasks/basic/recordings/anthropic/calculator-739.yaml)

    why: "..."            # how it stays true on any machine (keys, not places on the screen)
    setup:                # optional: steps run before the model's first turn (a task's own
      - launch: gedit     # setup steps), for a protocol with no way to start an application
    turns: [...]          # the fake's script: what the model answered, turn by turn

The suite's placeholders ({workdir}, {suite}, {server}, {python}) are filled in the whole
file before it is read, as in a task's answers. The run's requests go to the fake, which
refuses what the vendor refuses; a refused request, or turns left unplayed, fail the task
and say so, whatever its checks find.
"""

from __future__ import annotations

import base64
import contextlib
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PIL import Image
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from roundhouse.config import ConfigError, read_yaml
from roundhouse.models.fake_http import FakeServer
from roundhouse.models.fakes import FAKE_KEY, Protocol, pointed_at
from roundhouse.suite.tasks import SetupStep, SuiteTask

FOLDER = "recordings"
SENT_SUFFIX = ".sent.json"  # OUT/work/TASK.sent.json: what each request of a recorded run sent


class Recording(BaseModel):
    model_config = ConfigDict(extra="forbid")

    why: str = ""
    setup: list[SetupStep] = Field(default_factory=list)
    turns: list[dict[str, Any]] = Field(min_length=1)


def recording_path(found: SuiteTask, protocol: Protocol) -> Path:
    return found.path.parent / FOLDER / protocol.family / f"{found.task.id}.yaml"


def load_recording(path: Path) -> Recording:
    data = read_yaml(path, f"recording {path}")
    try:
        return Recording.model_validate(data)
    except ValidationError as error:
        raise ConfigError(f"recording {path}: {error}") from None


@dataclass
class Playing:
    """A recording being played: the variables that point the run at its fake, and what the
    fake made of the run once it ended."""

    fake: FakeServer[Any]
    env: dict[str, str]

    def problem(self) -> str | None:
        """Why the run is not the recording's: a request the vendor would refuse, or turns
        the run never asked for (it ended, or diverged, early)."""
        refused = self.fake.refusals
        if refused:
            return f"the fake refused {len(refused)} request(s), the first: {refused[0]}"
        if self.fake.remaining:
            return f"the run ended with {self.fake.remaining} recorded turn(s) not played"
        return None

    def sent(self) -> list[Sent]:
        """What each request the fake answered carried (bench models counts its tokens)."""
        return [sent_of(r.body) for r in self.fake.received if r.refused is None]


@dataclass(frozen=True)
class Sent:
    """One request as sent: the size of each image in it, and the characters of the rest
    (the request's JSON with its images taken out)."""

    images: list[tuple[int, int]]
    text_chars: int


def sent_of(body: Any) -> Sent:
    images: list[tuple[int, int]] = []

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            data = value.get("data")
            kind = value.get("media_type") or value.get("mimeType") or value.get("mime_type")
            if isinstance(data, str) and isinstance(kind, str) and kind.startswith("image/"):
                images.append(_size(data))
                return {key: item for key, item in value.items() if key != "data"}
            return {key: strip(item) for key, item in value.items()}
        if isinstance(value, list):
            return [strip(item) for item in value]
        if isinstance(value, str) and value.startswith("data:image/"):
            images.append(_size(value.partition(",")[2]))
            return ""
        return value

    rest = json.dumps(strip(body), ensure_ascii=False)
    return Sent(images, len(rest))


def _size(data: str) -> tuple[int, int]:
    with Image.open(io.BytesIO(base64.b64decode(data))) as image:
        return image.size


def turns_of(script: Path, protocol: Protocol) -> list[Any]:
    """The recording's turns as its protocol's fake reads them (ConfigError: it cannot)."""
    try:
        return protocol.load(script)
    except ValueError as error:
        raise ConfigError(f"recording {script}: {error}") from None


@contextlib.contextmanager
def playing(turns: list[Any], protocol: Protocol) -> Iterator[Playing]:
    """The protocol's fake, playing `turns` on 127.0.0.1."""
    with protocol.serve(turns, FAKE_KEY) as fake:
        yield Playing(fake, pointed_at(protocol, fake, FAKE_KEY))
