"""Render observations into chat messages from the package's prompt templates."""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import cache
from importlib import resources
from string import Template
from typing import Any

from roundhouse.core.context import RoundContext
from roundhouse.core.messages import Message
from roundhouse.core.trajectory import StepRecord
from roundhouse.devices.contract import Context, Control, WindowInfo
from roundhouse.devices.describing import ToolSpec, describe_tools
from roundhouse.models.observation import (
    AppObservation,
    HostObservation,
    PastStep,
    ShellObservation,
)

MAX_OUTPUT_IN_PROMPT = 3000
# What an action's result holds for the logs rather than the model: timings, and the
# control and route the step's call already names. Its effect is what the model reads.
_ACTION_DETAILS = (
    "settle_ms",
    "screen_changed",
    "still_changing",
    "control",
    "route",
    "window_change",  # the effect's line says it ("new window ... opened")
)


@cache
def template(name: str) -> Template:
    text = resources.files("roundhouse.agents").joinpath("prompts", name).read_text("utf-8")
    return Template(text)


def describe_step(index: int, step: PastStep) -> str:
    """`3. [CONTINUE] (2 of 3 in one answer) click_control({...}) -> success: effect ...`:
    one action, where it stood in its answer's list, and what came of it (or why it did
    not run)."""
    call = f"{step.function}({json.dumps(step.arguments, ensure_ascii=False)})"
    if step.result_status is None:
        return f"{index}. [{step.status}] no action"
    body = step.error if step.error else describe_output(step.output)
    if len(body) > MAX_OUTPUT_IN_PROMPT:
        body = body[:MAX_OUTPUT_IN_PROMPT] + " [... cut ...]"
    where = f" ({step.in_list[0]} of {step.in_list[1]} in one answer)" if step.in_list else ""
    return f"{index}. [{step.status}]{where} {call} -> {step.result_status}: {body}"


def several_actions(most: int) -> str:
    """What the system prompt says of answers with several actions: nothing when one
    answer holds one action (max_actions 1)."""
    return "" if most <= 1 else template("several_actions.txt").substitute(most=most)


def describe_output(output: Any) -> str:
    """A tool's result for the next prompt: an action's as one line, "effect confirmed:
    <what was seen>" (or "effect not seen: ..."); anything else as JSON."""
    if not (isinstance(output, dict) and "effect" in output):
        return json.dumps(output, ensure_ascii=False)
    line = f"effect {output['effect']}: {output.get('seen', '')}"
    if output.get("still_changing"):
        line += " (the screen was still changing)"
    rest = {k: v for k, v in output.items() if k not in (*_ACTION_DETAILS, "effect", "seen")}
    return f"{line} {json.dumps(rest, ensure_ascii=False)}" if rest else line


def blackboard_text(context: RoundContext, max_steps: int = 10) -> str:
    """What the session already knows, as prompt text: the earlier rounds' requests, the
    questions asked and answered, the recent steps and the screenshots kept. Rounds that
    resume ran again are left out: their run again tells the story."""
    session, current = context.session, context.round
    standing = [r for r in session.rounds if r.run_again_as is None]
    earlier = [r for r in standing if r is not current and r.ended]
    steps = [step for r in standing for step in r.steps if step.concluded]
    board = session.blackboard
    parts: list[str] = []
    if earlier:
        parts.append("Earlier requests in this session:")
        parts += [f"- request_{r.id}: {r.user_query}" for r in earlier]
    if board.questions:
        parts.append("Questions asked and the user's answers:")
        parts += [f"- Q: {qa.question} A: {qa.answer or '(no answer)'}" for qa in board.questions]
    if steps:
        parts.append("Recent steps of earlier rounds:")
        parts += [
            f"- {json.dumps(_step_summary(s), ensure_ascii=False)}" for s in steps[-max_steps:]
        ]
    if board.screenshots:
        parts.append(f"Screenshots saved: {', '.join(board.screenshots[-5:])}")
    return "\n".join(parts)


def _step_summary(step: StepRecord) -> dict[str, Any]:
    return {
        "round": step.round_id,
        "step": step.round_step,
        "agent": step.agent_name,
        "status": step.status.value if step.status else None,
        "actions": [
            {"function": action.function, "arguments": action.arguments} for action in step.ran
        ],
        "answer": step.answer,
    }


def linux_messages(observation: ShellObservation, specs: list[ToolSpec]) -> tuple[Message, ...]:
    history = "\n".join(describe_step(i, s) for i, s in enumerate(observation.history, 1))
    board = (
        f"What this session already knows:\n{observation.blackboard}\n"
        if observation.blackboard
        else ""
    )
    system = template("linux_system.txt").substitute(
        tools=describe_tools(specs), several=several_actions(observation.max_actions)
    )
    user = template("linux_user.txt").substitute(
        request=observation.request,
        workdir=observation.workdir,
        blackboard=board,
        history=history or "(none yet)",
    )
    return (Message("system", system), Message("user", user))


def describe_window(window: WindowInfo) -> str:
    state = " (active)" if window.active else ""
    return f"window_id {window.xid}: {window.title!r} — {window.application}{state}"


def describe_control(control: Control) -> str:
    """`3: [entry] 'Email' = 'ada@example.org' (focused)`: number, role, name, the value
    where it has one, and the states a person would see."""
    value = control.shown_value()
    shown = f" = {value!r}" if value is not None else ""
    states = f" ({', '.join(control.states)})" if control.states else ""
    return f"{control.label}: [{control.role}] {control.name!r}{shown}{states}"


def describe_controls(controls: Sequence[Control], context: Sequence[Context]) -> str:
    """The controls in reading order, with the text a person reads among them (headings,
    labels, alerts) on unnumbered lines where it shows. The cells (and the column headers)
    of one table row share a line, as a person reads a row:
    `23: [table cell] 'notes.txt' | 24: '7 bytes'`."""
    lines: list[str] = []
    pending = sorted(context, key=lambda item: item.before)
    row: Control | None = None  # the first cell of the line being written
    for control in [*controls, None]:
        label = control.label if control is not None else len(controls) + 1
        has_text_before = bool(pending) and pending[0].before <= label
        while pending and pending[0].before <= label:
            item = pending.pop(0)
            lines.append(f"   [{item.role}] {item.text!r}")
        if control is None:
            break
        if row is not None and not has_text_before and _same_table_row(row, control):
            lines[-1] += " | " + describe_control(control).replace(f"[{control.role}] ", "", 1)
            continue
        lines.append(describe_control(control))
        row = control if control.role in _ROW_ROLES else None
    return "\n".join(lines)


_ROW_ROLES = frozenset({"table cell", "table column header", "column header"})


def _same_table_row(first: Control, other: Control) -> bool:
    """Cells (or column headers) side by side in one row: listed on one line."""
    return (
        other.role == first.role
        and (other.rect.top, other.rect.bottom) == (first.rect.top, first.rect.bottom)
        and other.rect.left >= first.rect.left
    )


def describe_header(observation: AppObservation) -> str:
    """One line: application, title, where the keyboard focus is, and a dialog in front."""
    window = observation.window
    focused = next((c for c in observation.controls if "focused" in c.states), None)
    parts = [f"{observation.application}: {window.title!r} (window_id {window.xid})"]
    parts.append(f"focus: {focused.label} {focused.name!r}" if focused else "focus: none listed")
    if observation.in_dialog:
        parts.append("a dialog is in front of the application's window")
    return "; ".join(parts)


def _history(steps: tuple[PastStep, ...]) -> str:
    return "\n".join(describe_step(i, s) for i, s in enumerate(steps, 1)) or "(none yet)"


def host_messages(observation: HostObservation, specs: list[ToolSpec]) -> tuple[Message, ...]:
    board = (
        f"What this session already knows:\n{observation.blackboard}\n"
        if observation.blackboard
        else ""
    )
    subtasks = "\n".join(
        f"- {s.application}: {s.subtask} -> {s.status}: {s.result}" for s in observation.subtasks
    )
    system = template("host_system.txt").substitute(
        tools=describe_tools(specs), several=several_actions(observation.max_actions)
    )
    user = template("host_user.txt").substitute(
        request=observation.request,
        blackboard=board,
        windows="\n".join(describe_window(w) for w in observation.windows) or "(none)",
        applications="\n".join(observation.applications)
        or "(unknown: give a name, what it is, e.g. text editor, or a command)",
        subtasks=subtasks or "(none yet)",
        history=_history(observation.history),
    )
    images = (observation.screenshot,) if observation.screenshot else ()
    return (Message("system", system), Message("user", user, images))


def app_messages(observation: AppObservation, specs: list[ToolSpec]) -> tuple[Message, ...]:
    controls = describe_controls(observation.controls, observation.context)
    if not observation.tree_available:
        controls = observation.note or "This application exposes no accessibility tree."
    system = template("app_system.txt").substitute(
        application=observation.application,
        tools=describe_tools(specs),
        several=several_actions(observation.max_actions),
    )
    user = template("app_user.txt").substitute(
        board=observation.board,
        subtask=observation.subtask,
        window=describe_header(observation),
        controls=controls or "(no interactive controls)",
        history=_history(observation.history),
    )
    images = (observation.screenshot,) if observation.screenshot else ()
    return (Message("system", system), Message("user", user, images))
