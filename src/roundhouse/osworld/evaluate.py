"""A task's score, as OSWorld's DesktopEnv.evaluate gives it, from our getters and metrics.

1. The postconfig steps run (the caller runs them: they are steps like any other).
2. An infeasible task scores 1 when the agent gave up (OSWorld's last action FAIL), else 0;
   a feasible one scores 0 when the agent gave up.
3. Each part: its result getter, its expected getter (if any), then its metric with the
   part's options. A result file that is not there scores the part 0.
4. With conj "and" (the default) the first part scoring 0 ends it at 0, else the mean of the
   parts; with "or" the first part scoring 1 ends it at 1, else the best part.

A metric or getter that raises makes the score 0 with the error named (OSWorld's evaluate
would raise); one that roundhouse lacks makes the task not runnable (NotRunnable).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from roundhouse.osworld.env import OsworldEnv
from roundhouse.osworld.getters import GETTERS
from roundhouse.osworld.metrics import METRICS, unsupported_options
from roundhouse.osworld.steps import NotRunnable
from roundhouse.osworld.tasks import Evaluator, Getter, Part


@dataclass
class Score:
    value: float
    parts: list[float] = field(default_factory=list)
    error: str | None = None  # a getter or metric that raised

    def explain(self) -> str:
        shown = ", ".join(f"{part:g}" for part in self.parts)
        text = f"score {self.value:g}" + (f" (parts {shown})" if len(self.parts) > 1 else "")
        return f"{text}; {self.error}" if self.error else text


def missing(evaluator: Evaluator) -> list[str]:
    """What of the evaluator roundhouse does not implement (empty: it can be scored)."""
    lacking: list[str] = [evaluator.problem] if evaluator.problem else []
    for part in evaluator.parts():
        if part.metric not in METRICS:
            lacking.append(f"metric {part.metric!r}")
        lacking += unsupported_options(part.metric, part.options)
        for getter in (part.result, part.expected):
            if getter is not None and getter.type not in GETTERS:
                lacking.append(f"getter {getter.type!r}")
    return sorted(set(lacking))


async def evaluate(env: OsworldEnv, evaluator: Evaluator, gave_up: bool) -> Score:
    """The score of the task as the desktop now is (postconfig already run)."""
    if evaluator.infeasible:
        return Score(1.0 if gave_up else 0.0)
    lacking = missing(evaluator)
    if lacking:
        raise NotRunnable(f"roundhouse does not implement {', '.join(lacking)}")
    if gave_up:
        return Score(0.0)
    parts = evaluator.parts()
    scores: list[float] = []
    for index, part in enumerate(parts):
        try:
            value = await _part(env, part)
        except NotRunnable:
            raise
        except Exception as error:  # noqa: BLE001 - a getter or metric's own failure: named
            where = f"part {index + 1} ({part.metric})" if len(parts) > 1 else part.metric
            return Score(0.0, [*scores, 0.0], f"{where} raised {type(error).__name__}: {error}")
        scores.append(value)
        if evaluator.conj == "and" and value == 0.0:
            return Score(0.0, scores)
        if evaluator.conj == "or" and value == 1.0:
            return Score(1.0, scores)
    if evaluator.conj == "and":
        return Score(sum(scores) / len(scores), scores)
    return Score(max(scores), scores)


async def _part(env: OsworldEnv, part: Part) -> float:
    metric = METRICS[part.metric]
    try:
        result = await _get(env, part.result)
    except FileNotFoundError:
        return 0.0
    if part.expected is not None:
        expected = await _get(env, part.expected)
        return float(metric(result, expected, **part.options))
    return float(metric(result, **part.options))


async def _get(env: OsworldEnv, getter: Getter | None) -> Any:
    if getter is None:
        return None
    return await GETTERS[getter.type](env, getter.config)
