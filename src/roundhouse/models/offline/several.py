"""The offline planner's answers of several actions: the actions its plan is certain of,
in one answer, where the agent allows more than one (observation.max_actions).

The planner decides each action from the window it sees. After one action it can tell the
next without looking again where the next decision does not depend on what the first one
changed: the next of a run of button clicks, the keys after a text, the keys that go to a
cell and what is typed there. So it plans on as if each action did what it meant to, with
the window it saw, and stops where its plan has to see the window first: a dialog to wait
for, a title to check. What it assumed is what the agent holds the list to: the list stops
at the first action that failed, showed no effect, or opened or closed a window
(agents/action_list.py), and the planner is asked again with what really ran.

Pure logic: no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from roundhouse.core.commands import Result, ResultStatus
from roundhouse.core.states import Status
from roundhouse.core.trajectory import ActionRecord
from roundhouse.devices.contract import ToolName
from roundhouse.models.observation import PastStep, past_action


@dataclass(frozen=True)
class Planned:
    """One answer of the planner, and the operation its action serves (None: none)."""

    answer: dict[str, Any]
    serves: int | None = None
    value: str | None = None  # with FINISH: a value read


def acts(answer: dict[str, Any]) -> bool:
    """An answer of one action that calls a tool and goes on: what a list is made of."""
    action = answer["action"]
    if isinstance(action, list):  # a list already (the shell planner's commands)
        return False
    return action["status"] == "CONTINUE" and action["function"] is not None


def assumed(answer: dict[str, Any]) -> PastStep:
    """The answer's action as the planner assumes it went: it ran and did what it meant to.
    (The list stops where the desktop does not show that.)"""
    action = answer["action"]
    output: dict[str, Any] = (
        {"exit_code": 0, "stdout": "", "stderr": ""}
        if action["function"] == ToolName.RUN_SHELL
        else {"effect": "confirmed", "seen": "assumed"}
    )
    # Recorded as the agent would record it, so that it reads as a step that ran does.
    ran = ActionRecord(
        function=action["function"],
        arguments=action["arguments"],
        result=Result(status=ResultStatus.SUCCESS, result=output),
    )
    return past_action(ran, Status.CONTINUE.value)


Next = Callable[[tuple[PastStep, ...], list[int | None]], Planned]


def planned_on(
    first: Planned,
    history: tuple[PastStep, ...],
    served: Sequence[int | None],
    plan: Next,
    most: int,
) -> tuple[Planned, ...]:
    """`first`, and what the planner (`plan`: the next answer after a history and the
    operations its entries served) answers after it while each answer acts and the list
    holds at most `most` actions; a FINISH after the last action ends the list too."""
    planned = [first]
    history, served = tuple(history), list(served)
    while acts(planned[-1].answer) and len(planned) < most:
        history += (assumed(planned[-1].answer),)
        served.append(planned[-1].serves)
        after = plan(history, served)
        if acts(after.answer):
            planned.append(after)
            continue
        ending = after.answer["action"]
        if ending["status"] == "FINISH" and ending["function"] is None:
            planned.append(after)  # it becomes the last action's status
        break
    return tuple(planned)


def one_answer(planned: Sequence[Planned]) -> dict[str, Any]:
    """Several planned answers as the one answer that holds their actions, in order. The
    last planned answer ends it: its own action with its status (the host's ASSIGN), or,
    calling none, its status given to the last action (a FINISH planned after them); its
    result and fields are the answer's. The words of the rest are joined."""
    if len(planned) == 1:
        return planned[0].answer
    answers = [p.answer for p in planned]
    actions = [dict(answer["action"]) for answer in answers if answer["action"]["function"]]
    ending = answers[-1]
    if ending["action"]["function"] is None:
        actions[-1]["status"] = ending["action"]["status"]
    doing = [str(answer.get("comment", "")).removeprefix("doing: ") for answer in answers]
    doing = list(dict.fromkeys(d for d in doing if d))
    return {
        **ending,
        "observation": _joined(answer["observation"] for answer in answers),
        "thought": _joined(answer["thought"] for answer in answers),
        "action": actions,
        "comment": "doing: " + "; ".join(doing) if doing else "",
    }


def serves(planned: Sequence[Planned]) -> tuple[int | None, ...]:
    """The operation each action of the one answer serves: an entry of the agent's history
    each (an answer with no action is one entry)."""
    acting = [p.serves for p in planned if p.answer["action"]["function"]]
    return tuple(acting) or (planned[0].serves,)


def _joined(texts: Any) -> str:
    return " ".join(dict.fromkeys(text for text in texts if text))
