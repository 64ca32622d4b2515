"""What the watch page is told as it happens: the round's steps, its pauses and its end, and
a batch's tasks. An observer of the event bus (and of the batch driver's rows), it keeps
every message, so a page opened late is shown the run from its start.

Each message is plain JSON: {"kind": "step", ...} (the step's fields, and its card as
report.html renders it, "html", once the session's log folder is known), {"kind": "round",
...} (its state), {"kind": "pause", ...} / {"kind": "handed_back", ...}, {"kind": "task",
...} (a batch row).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

from roundhouse.core.events import Event, HandedBack, PersonTookOver, RoundChanged, StepTaken
from roundhouse.core.record import Pause, RoundRecord
from roundhouse.core.trajectory import StepRecord
from roundhouse.logs.report.build import build_step
from roundhouse.logs.report.logs import list_files
from roundhouse.logs.report.render import render_step

Message = dict[str, Any]


class Feed:
    """Every message so far, and a wait for the next (see the module docstring)."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.log_folder: Path | None = None  # the session's, once it is open: the cards' images
        self._more = asyncio.Event()

    def __call__(self, event: Event) -> None:
        message = event_message(event)
        if message is None:
            return
        if isinstance(event, StepTaken) and event.step.concluded and self.log_folder:
            message["html"] = step_card(event.step, self.log_folder)
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


def step_card(step: StepRecord, folder: Path) -> str:
    """The step's card as report.html renders it; its images through the page (log/NAME)."""
    view = build_step(step, None, list_files(folder), [])
    return render_step(view, lambda name: f"log/{quote(name)}")


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
