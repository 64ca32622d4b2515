"""A device for tests and demos: each command handed to a function."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence

from roundhouse.core.commands import Command, Result
from roundhouse.devices.describing import ToolSpec

Handler = Callable[[Command], "Result | Awaitable[Result]"]


class FunctionDispatcher:
    """A dispatcher that hands each command to a function, as httpx's MockTransport hands
    each request to one: a device for tests and demos that serves `specs` and answers
    whatever `handler` returns. No display, no shell, nothing outside the process."""

    def __init__(self, handler: Handler, specs: Sequence[ToolSpec] = ()) -> None:
        self.handler = handler
        self.specs = list(specs)

    async def execute(self, commands: Sequence[Command]) -> list[Result]:
        results = []
        for command in commands:
            answered = self.handler(command)
            result = await answered if inspect.isawaitable(answered) else answered
            results.append(result.model_copy(update={"call_id": command.call_id}))
        return results

    async def tool_specs(self) -> list[ToolSpec]:
        return list(self.specs)
