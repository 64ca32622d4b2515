"""`offline`: the embedded default model, a deterministic planner with no network.

It answers the same JSON a language model does, through the same parser, from the typed
observation: shell requests (offline_shell) and simple desktop requests (offline_gui).
"""

from __future__ import annotations

import json

from roundhouse.core.usage import Usage
from roundhouse.models.base import Completion, ModelRequest
from roundhouse.models.observation import AppObservation, HostObservation, ShellObservation
from roundhouse.models.offline.gui import plan_app, plan_host
from roundhouse.models.offline.shell import REAL_MODEL_HINT, fail, plan_shell
from roundhouse.models.references import HELD_RESULT


class OfflineModel:
    name = "offline"

    async def complete(self, request: ModelRequest) -> Completion:
        observation = request.observation
        if isinstance(observation, ShellObservation):
            answer = plan_shell(observation)
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
