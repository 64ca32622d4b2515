"""`offline`: the embedded default model, a deterministic planner with no network.

It answers the same JSON a language model does, through the same parser, from the typed
observation: shell requests (shell.py) and simple desktop requests (gui.py), both read by
intents.py. A request it cannot read whole it FAILs before any step, naming the part.
"""

from __future__ import annotations

import json
from typing import Any

from roundhouse.core.usage import Usage
from roundhouse.models.base import Completion, ModelRequest
from roundhouse.models.observation import AppObservation, HostObservation, ShellObservation
from roundhouse.models.offline.gui import plan_app, plan_host
from roundhouse.models.offline.intents import read_request
from roundhouse.models.offline.shell import REAL_MODEL_HINT, UNDERSTOOD, fail, plan_shell
from roundhouse.models.references import HELD_RESULT


class OfflineModel:
    name = "offline"

    async def complete(self, request: ModelRequest) -> Completion:
        observation = request.observation
        if isinstance(observation, ShellObservation):
            answer = _plan_linux(observation)
        elif isinstance(observation, HostObservation):
            answer = plan_host(observation)
        elif isinstance(observation, AppObservation):
            answer = plan_app(observation)
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
