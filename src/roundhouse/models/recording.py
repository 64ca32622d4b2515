"""`RecordingModel`: passes requests through and writes every answer to a replay file, so
that a run can be replayed later (`--model replay:FILE`) step for step, on any machine.

Before an answer is written, the facts of this machine are taken out of it:
- its result (what the user and a task's checks read) has every quote of a step's output
  held as a reference, filled in again on replay (references.py): exactly, when the model
  said what it quoted (the offline planner does), else by matching;
- its free text (observation, thought, plan, comment) has the facts it still names
  redacted: "<the hostname>";
- a fact left in its result or its action cannot be held or redacted without changing what
  the answer does: the recorder refuses it, the round ends in ERROR naming the fact, and the
  file keeps the answers before it.

A control the answer names by number is noted beside it by role, name and rank, and a
window it names by id by application, title and rank (held_controls.py), so that the replay
finds them where the numbers differ: `control` and `window` for an answer of one action,
`controls` and `windows` (one a listed action, null where it names none) for a list. An
answer
sent back as invalid is marked `refused`, so that the replay gives the model's correction
after it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from roundhouse.models.base import (
    Completion,
    LanguageModel,
    ModelError,
    ModelRequest,
    doubts_the_last_answer,
    refuses_the_last_answer,
)
from roundhouse.models.held_controls import action_count, hold_control, hold_window
from roundhouse.models.machine_facts import MachineFact, quoted_facts, redact, this_machine
from roundhouse.models.references import HELD_RESULT, hold, map_strings, step_outputs

FREE_TEXT = ("observation", "thought", "plan", "comment")


class RecordingModel:
    def __init__(
        self, inner: LanguageModel, path: Path, facts: tuple[MachineFact, ...] | None = None
    ) -> None:
        self.inner = inner
        self.path = path
        self.name = inner.name
        # The user's own name and folder stand in paths the user gave: not refused here.
        known = this_machine() if facts is None else facts
        self.facts = tuple(fact for fact in known if not fact.personal)
        self.recorded: list[dict[str, Any]] = []

    async def complete(self, request: ModelRequest) -> Completion:
        if self.recorded and (refuses_the_last_answer(request) or doubts_the_last_answer(request)):
            self.recorded[-1]["refused"] = True  # a replay gives the correction next, not it
        completion = await self.inner.complete(request)
        try:
            answer = self.portable(completion, step_outputs(request.observation))
        except RefusedFact as refused:
            raise ModelError(
                f"--record refuses answer {len(self.recorded) + 1}: {refused}",
                usage=completion.usage,
            ) from None
        item: dict[str, Any] = {
            "answer": answer,
            "usage": {
                "input_tokens": completion.usage.input_tokens,
                "output_tokens": completion.usage.output_tokens,
            },
            "model": completion.model,
        }
        item |= held(answer, request.observation)
        self.recorded.append(item)
        # The whole list each time, replaced at once: a killed run leaves a valid file.
        temporary = self.path.with_name(f".{self.path.name}.tmp")
        temporary.write_text(json.dumps(self.recorded, indent=1, ensure_ascii=False) + "\n")
        os.replace(temporary, self.path)
        return completion

    def portable(self, completion: Completion, outputs: list[str]) -> str:
        """The answer as it is written: no fact of this machine left in it."""
        names = [fact.text for fact in self.facts if fact.name]
        try:
            value = json.loads(completion.text)
        except json.JSONDecodeError:
            value = None
        if not isinstance(value, dict):  # not an answer object: kept whole, held as a result
            held = hold(completion.text, outputs, names)
            self._refuse_facts_in(held, "the answer")
            return held
        answer = dict(value)
        if isinstance(answer.get("result"), str):
            exact = completion.extra.get(HELD_RESULT)
            held = exact if isinstance(exact, str) else hold(answer["result"], outputs, names)
            answer["result"] = held
        for key in FREE_TEXT:
            if key in answer:
                answer[key] = map_strings(answer[key], lambda text: redact(text, self.facts))
        for key, part in answer.items():
            if key not in FREE_TEXT:
                self._refuse_facts_in(json.dumps(part, ensure_ascii=False), f"its {key}")
        return completion.text if answer == value else json.dumps(answer, ensure_ascii=False)

    def _refuse_facts_in(self, text: str, where: str) -> None:
        leaked = quoted_facts(text, self.facts)
        if leaked:
            raise RefusedFact(
                f"{where} quotes {leaked[0].what} ({leaked[0].text!r}), which no step's output "
                "in this run shows, so a replay on another machine would state it as a fact "
                "there; an answer should quote the output that says it"
            )

    async def aclose(self) -> None:
        closer = getattr(self.inner, "aclose", None)
        if closer is not None:
            await closer()


def held(answer: str, observation: object) -> dict[str, Any]:
    """What is noted beside `answer`: the control and the window its action names, or for a
    list, those of each action in turn."""
    count = action_count(answer)
    noted: dict[str, Any] = {}
    if count is None:  # one action: written as before lists, which replays anywhere
        control = hold_control(answer, observation)
        if control is not None:
            noted["control"] = control.model_dump()
        window = hold_window(answer, observation)
        if window is not None:
            noted["window"] = window.model_dump()
        return noted
    controls = [hold_control(answer, observation, index) for index in range(count)]
    if any(controls):
        noted["controls"] = [c.model_dump() if c else None for c in controls]
    windows = [hold_window(answer, observation, index) for index in range(count)]
    if any(windows):
        noted["windows"] = [w.model_dump() if w else None for w in windows]
    return noted


class RefusedFact(ValueError):
    """An answer quotes a fact of this machine that cannot be held or redacted."""
