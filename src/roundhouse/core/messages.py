"""A chat message as agents send it to a model, and as request.log keeps it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal


@dataclass(frozen=True)
class Message:
    role: Literal["system", "user", "assistant"]
    text: str
    images: tuple[Path, ...] = ()  # PNG files; a vision model gets them, the log names them
