"""`FunctionModel`: a model whose answers come from a Python function of the request.

For tests that must answer from what is really on the screen (the observation), not from
a fixed script. The function returns the answer as a dict (sent as JSON) or as raw text.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from roundhouse.core.usage import Usage
from roundhouse.models.base import Completion, ModelRequest

Answerer = Callable[[ModelRequest], "dict[str, Any] | str"]


class FunctionModel:
    def __init__(self, answer: Answerer, name: str = "function") -> None:
        self.answer = answer
        self.name = name
        self.requests: list[ModelRequest] = []

    async def complete(self, request: ModelRequest) -> Completion:
        self.requests.append(request)
        reply = self.answer(request)
        text = reply if isinstance(reply, str) else json.dumps(reply)
        return Completion(text=text, usage=Usage(requests=1), model=self.name)
