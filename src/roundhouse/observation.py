"""What an agent saw, as typed data. Prompts are rendered from it for real models; the
offline planner reads it directly. Pure data, no I/O."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class PastStep:
    """One step the agent already took, with what came of it."""

    function: str | None
    arguments: dict[str, Any]
    status: str  # the agent's answered status
    result_status: str | None  # success | failure | skipped; None when nothing ran
    output: Any  # the tool's result value
    error: str | None


@dataclass(frozen=True)
class ShellObservation:
    request: str
    history: tuple[PastStep, ...] = ()
    blackboard: str = ""
    tools: tuple[str, ...] = field(default=())
    workdir: str = "."
