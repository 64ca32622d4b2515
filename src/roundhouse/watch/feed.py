"""What the watch page is told as it happens: the round's steps, its pauses and its end, and
a batch's tasks. An observer of the event bus (and of the batch driver's rows), it keeps
every message, so a page opened late is shown the run from its start.

Each message is plain JSON: {"kind": "step", ...} (a step card, as report.html shows it:
agent, status, thought, actions and their results), {"kind": "round", ...} (its state),
{"kind": "pause", ...} / {"kind": "handed_back", ...}, {"kind": "task", ...} (a batch row).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from roundhouse.core.events import Event, HandedBack, PersonTookOver, RoundChanged, StepTaken
from roundhouse.core.record import Pause, RoundRecord
from roundhouse.core.trajectory import StepRecord

Message = dict[str, Any]


class Feed:
    """Every message so far, and a wait for the next (see the module docstring)."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self._more = asyncio.Event()

    def __call__(self, event: Event) -> None:
        message = event_message(event)
        if message is not None:
            self.add(message)

    def add(self, message: Message) -> None:
        self.messages.append(message)
        self._more.set()
        self._more = asyncio.Event()

    async def follow(self) -> AsyncIterator[Message]:
        """The messages so far, then each as it comes."""
        sent = 0
        while True:
            more = self._more
            while sent < len(self.messages):
                yield self.messages[sent]
                sent += 1
            await more.wait()


def task_message(task: str, state: str, node: str = "", video: str | None = None) -> Message:
    """A batch's task: queued, running, passed or failed (on `node`), its video's link."""
    return {"kind": "task", "task": task, "state": state, "node": node, "video": video}


def event_message(event: Event) -> Message | None:
    if isinstance(event, StepTaken):
        return step_message(event.step)
    if isinstance(event, RoundChanged):
        return round_message(event.round)
    if isinstance(event, PersonTookOver):
        return {"kind": "pause", **pause_fields(event.round, event.pause)}
    if isinstance(event, HandedBack):
        return {"kind": "handed_back", **pause_fields(event.round, event.pause)}
    return None


def step_message(step: StepRecord) -> Message:
    return {
        "kind": "step",
        "step": step.session_step,
        "round": step.round_id,
        "round_step": step.round_step,
        "agent": step.agent.value,
        "agent_name": step.agent_name,
        "status": step.status.value if step.status else None,
        "subtask": step.subtask,
        "thought": step.thought,
        "actions": [
            {
                "function": action.function,
                "arguments": action.arguments,
                "status": action.result.status.value if action.result else None,
                "error": (action.result.error if action.result else None) or action.not_run,
            }
            for action in step.actions
        ],
        "answer": step.answer,
        "error": step.error,
        "model_ms": step.model_ms,
        "action_ms": step.action_ms,
    }


def round_message(round_: RoundRecord) -> Message:
    return {
        "kind": "round",
        "round": round_.id,
        "request": round_.user_query,
        "state": round_.state.value,
        "cancelled": round_.cancelled,
        "result": round_.result,
        "error": round_.error,
    }


def pause_fields(round_: RoundRecord, pause: Pause) -> Message:
    return {
        "round": round_.id,
        "step": pause.step,
        "tool": pause.tool,
        "reason": pause.reason,
        "how": pause.how,
    }
