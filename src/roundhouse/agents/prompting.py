"""Render observations into chat messages from the package's prompt templates."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from string import Template

from roundhouse.devices.base import ToolSpec
from roundhouse.models.base import Message
from roundhouse.observation import PastStep, ShellObservation

MAX_OUTPUT_IN_PROMPT = 3000


@cache
def template(name: str) -> Template:
    text = resources.files("roundhouse.agents").joinpath("prompts", name).read_text("utf-8")
    return Template(text)


def describe_tools(specs: list[ToolSpec]) -> str:
    lines = []
    for spec in specs:
        arguments = json.dumps(spec.parameters.get("properties", {}), ensure_ascii=False)
        lines.append(f"- {spec.name}: {spec.description.splitlines()[0]} Arguments: {arguments}")
    return "\n".join(lines)


def describe_step(index: int, step: PastStep) -> str:
    call = f"{step.function}({json.dumps(step.arguments, ensure_ascii=False)})"
    if step.result_status is None:
        return f"{index}. [{step.status}] no action"
    body = step.error if step.error else json.dumps(step.output, ensure_ascii=False)
    if len(body) > MAX_OUTPUT_IN_PROMPT:
        body = body[:MAX_OUTPUT_IN_PROMPT] + " [... cut ...]"
    return f"{index}. [{step.status}] {call} -> {step.result_status}: {body}"


def linux_messages(observation: ShellObservation, specs: list[ToolSpec]) -> tuple[Message, ...]:
    history = "\n".join(describe_step(i, s) for i, s in enumerate(observation.history, 1))
    board = (
        f"What this session already knows:\n{observation.blackboard}\n"
        if observation.blackboard
        else ""
    )
    system = template("linux_system.txt").substitute(tools=describe_tools(specs))
    user = template("linux_user.txt").substitute(
        request=observation.request,
        workdir=observation.workdir,
        blackboard=board,
        history=history or "(none yet)",
    )
    return (Message("system", system), Message("user", user))
