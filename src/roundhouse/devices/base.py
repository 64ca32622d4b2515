"""Commands, results, the tool registry and the dispatcher protocol.

Agents never touch a device: they send Commands to a Dispatcher and read Results.
A tool is a plain typed function (or bound method, so its dependencies are injected by
whoever builds it); its JSON schema comes from the signature, its description from the
docstring's first sentence (the rest is for whoever reads the code). A tool that raises
becomes a failure Result, never a crash of the round.
"""

from __future__ import annotations

import asyncio
import dataclasses
import enum
import inspect
import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, Self, get_type_hints

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from roundhouse.core.commands import Command, Result, ResultStatus, ToolType
from roundhouse.devices.describing import ToolSpec, purpose

log = logging.getLogger(__name__)


class NotRun(RuntimeError):
    """A tool that chose not to act (a policy, a declined confirmation): its result is
    SKIPPED with this reason, which starts "not run: ", not a failure."""


NOT_RUN = "not run: "  # how a SKIPPED result's reason starts, over MCP too
# How a SKIPPED result starts when the person at the desktop took it over (their input came
# since our last action): the action waits for their hand-back (engine/person.py). And when
# the desktop takes no input from us (a locked screen): the round FAILs, naming it.
TAKEN_OVER = NOT_RUN + "the person took over"
BLOCKED = NOT_RUN + "blocked: "
HAND_BACK = "hand_back"  # the tool the person hands the desktop back with


class DeviceLost(RuntimeError):
    """The device (e.g. a remote MCP server) is gone for good: the round cannot go on and
    ends in ERROR with this message; the log folder stays whole for a later resume."""


class Closing:
    """`async with thing:` closes it on the way out, whatever happened inside."""

    async def close(self) -> None:
        raise NotImplementedError

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()


ToolFunction = Callable[..., Any]


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    tool_type: ToolType
    function: ToolFunction
    arguments: type[BaseModel]
    timeout: float | None

    @property
    def spec(self) -> ToolSpec:
        schema = self.arguments.model_json_schema()
        schema.pop("title", None)
        return ToolSpec(
            name=self.name,
            description=purpose(self.description),
            tool_type=self.tool_type,
            parameters=schema,
        )


def make_tool(
    function: ToolFunction,
    tool_type: ToolType,
    *,
    name: str | None = None,
    timeout: float | None = None,
) -> Tool:
    """Describe a typed function as a tool: schema from its signature, text from its docstring."""
    signature = inspect.signature(function)
    hints = get_type_hints(function)
    fields: dict[str, Any] = {}
    for parameter in signature.parameters.values():
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            raise TypeError(f"tool {function.__name__}: *args/**kwargs cannot be described")
        annotation = hints.get(parameter.name, Any)
        default = ... if parameter.default is parameter.empty else parameter.default
        fields[parameter.name] = (annotation, default)
    tool_name = name or function.__name__
    arguments = create_model(
        f"{tool_name}_arguments", __config__=ConfigDict(extra="forbid"), **fields
    )
    description = inspect.cleandoc(function.__doc__ or tool_name)
    return Tool(tool_name, description, tool_type, function, arguments, timeout)


class ToolRegistry:
    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            self.add(tool)

    def add(self, tool: Tool) -> None:
        if tool.name in self._tools:
            raise ValueError(f"tool {tool.name!r} is registered twice")
        self._tools[tool.name] = tool

    def register(
        self, function: ToolFunction, tool_type: ToolType, *, timeout: float | None = None
    ) -> Tool:
        tool = make_tool(function, tool_type, timeout=timeout)
        self.add(tool)
        return tool

    def names(self) -> list[str]:
        return sorted(self._tools)

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def specs(self) -> list[ToolSpec]:
        return [self._tools[name].spec for name in self.names()]

    async def call(self, command: Command, default_timeout: float) -> Result:
        tool = self._tools.get(command.tool_name)
        if tool is None:
            known = ", ".join(self.names()) or "none"
            return Result.failure(
                f"unknown tool {command.tool_name!r}; tools: {known}", command.call_id
            )
        try:
            arguments = tool.arguments.model_validate(command.parameters)
        except ValidationError as error:
            return Result.failure(f"bad arguments for {tool.name}: {error}", command.call_id)
        timeout = tool.timeout or default_timeout
        try:
            value = await asyncio.wait_for(_invoke(tool, arguments), timeout)
        except TimeoutError:
            return Result.failure(f"{tool.name} timed out after {timeout:g} s", command.call_id)
        except (asyncio.CancelledError, DeviceLost):
            raise  # the device is gone: the round ends, no model can act on that
        except NotRun as refused:
            return Result(status=ResultStatus.SKIPPED, error=str(refused), call_id=command.call_id)
        except Exception as error:  # a tool's failure is the model's to see, not our crash
            log.info("tool %s failed: %r", tool.name, error)
            return Result.failure(f"{type(error).__name__}: {error}", command.call_id)
        return Result(
            status=ResultStatus.SUCCESS, result=to_jsonable(value), call_id=command.call_id
        )


async def _invoke(tool: Tool, arguments: BaseModel) -> Any:
    kwargs = {name: getattr(arguments, name) for name in type(arguments).model_fields}
    value = tool.function(**kwargs)
    if inspect.isawaitable(value):
        value = await value
    return value


def to_jsonable(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, enum.Enum):
        return value.value
    return value


class Dispatcher(Protocol):
    """Where Commands go: in-process (LocalDispatcher) or to an MCP server."""

    async def execute(self, commands: Sequence[Command]) -> list[Result]: ...

    async def tool_specs(self) -> list[ToolSpec]: ...


class LocalDispatcher:
    """Runs tools in this process, one command after another, in order."""

    def __init__(self, registry: ToolRegistry, default_timeout: float = 120.0) -> None:
        self.registry = registry
        self.default_timeout = default_timeout

    async def execute(self, commands: Sequence[Command]) -> list[Result]:
        return [await self.registry.call(command, self.default_timeout) for command in commands]

    async def tool_specs(self) -> list[ToolSpec]:
        return self.registry.specs()
