"""`offline`: the embedded default model, a deterministic planner with no network.

It answers the same JSON a language model does, through the same parser, from the typed
observation: shell requests (shell.py) and simple desktop requests (host.py, subtask.py),
all read by intents.py. A request it cannot read whole it FAILs before any step, naming the part.

On a desktop it is the host's model and the applications' alike (the model pool gives
agents of one spec one model), and it remembers what its host half handed out: each
subtask's operations, typed, by the words of the ASSIGN, which are all the application's
agent is given. The application's half acts on those operations and never reads the words
again (a subtask it did not hand out it FAILs, saying so).
"""

from __future__ import annotations

import json
from typing import Any

from roundhouse.core.usage import Usage
from roundhouse.models.base import Completion, ModelRequest
from roundhouse.models.observation import AppObservation, HostObservation, ShellObservation
from roundhouse.models.offline.host import plan_host
from roundhouse.models.offline.intents import read_request
from roundhouse.models.offline.shell import REAL_MODEL_HINT, UNDERSTOOD, fail, plan_shell
from roundhouse.models.offline.subtask import Handed
from roundhouse.models.references import HELD_RESULT


class OfflineModel:
    name = "offline"

    def __init__(self) -> None:
        self.handed: dict[str, Handed] = {}  # by the subtask's words, as the ASSIGN said them

    async def complete(self, request: ModelRequest) -> Completion:
        observation = request.observation
        if isinstance(observation, ShellObservation):
            answer = _plan_linux(observation)
        elif isinstance(observation, HostObservation):
            answer = self._host(observation)
        elif isinstance(observation, AppObservation):
            answer = self._app(observation)
        else:
            answer = fail(
                "the offline model cannot act on this kind of observation", f"{REAL_MODEL_HINT}"
            )
        # The planner says exactly what its result quotes of the commands' output: a
        # recording holds that (references.py), not what it read on this machine.
        held = answer.pop(HELD_RESULT, None)
        extra = {HELD_RESULT: held} if held is not None else {}
        return Completion(
            text=json.dumps(answer), usage=Usage(requests=1), model="offline", extra=extra
        )

    def _host(self, observation: HostObservation) -> dict[str, Any]:
        done = [self.handed.get(subtask.subtask) for subtask in observation.subtasks]
        plan = plan_host(observation, [handed.value if handed else None for handed in done])
        if plan.assigned is not None:  # a fresh start, also for words handed out before
            self.handed[plan.assigned.subtask] = Handed(plan.assigned.ops)
        return plan.answer

    def _app(self, observation: AppObservation) -> dict[str, Any]:
        handed = self.handed.get(observation.subtask)
        if handed is None:
            problem = f"The subtask {observation.subtask!r} was not planned by the offline model."
            hint = "It carries out the subtasks its own host planned: --model offline for both."
            return fail(problem, f"{problem} {hint}")
        return handed.next(observation)


def _plan_linux(observation: ShellObservation) -> dict[str, Any]:
    """The Linux agent's request: shell questions, run; anything else FAILs before a step."""
    reading = read_request(observation.request)
    intent = reading.shell_intent()
    if intent is not None:
        return plan_shell(observation, intent)
    problem = reading.problem()
    if problem is None:  # every part read, as steps on a desktop
        problem = f"{reading.parts[0].clause!r} is a step on a desktop, and there is none."
        hint = "Run it on a desktop: --agent host (--desktop virtual starts one)."
        return fail(problem, f"{problem} {hint}")
    understood = f"The offline model understands: {UNDERSTOOD}. {REAL_MODEL_HINT}"
    return fail(problem, f"{problem} {understood}")
