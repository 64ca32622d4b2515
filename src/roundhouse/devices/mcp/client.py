"""The MCP client: a dispatcher whose tools are an MCP server's (devices/mcp/)."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import shlex
import time
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AsyncExitStack
from typing import Any, TypeVar

import mcp.types as types
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError

from roundhouse.core.commands import Command, Result, ResultStatus, ToolType
from roundhouse.core.polling import within_async
from roundhouse.devices.base import NOT_RUN, Closing, DeviceLost
from roundhouse.devices.describing import ToolSpec, purpose
from roundhouse.devices.mcp import TOKEN_ENV, TOOL_TYPE_KEY

log = logging.getLogger(__name__)

_DESKTOP_ENV = ("DISPLAY", "XAUTHORITY", "DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR")

T = TypeVar("T")


class MCPConnectionError(RuntimeError):
    """The MCP server could not be reached or refused us (e.g. a wrong bearer token)."""


class _Lost(Exception):
    """The connection to the server broke; the message says how."""


class MCPDispatcher(Closing):
    """The Dispatcher protocol over MCP: the engine drives a remote desktop like a local one.

    The MCP client lives in a task of its own (the holder). When the server dies, the SDK's
    transport fails inside the holder's task group; that ends the holder, never the task
    that runs the round, which sees it as a lost connection. A lost connection is met by
    reconnecting for up to `reconnect_window` seconds: a server restarted in that time is
    used again, an observation is asked again, and an action whose effect is unknown is
    reported so, never replayed blindly. A server that stays away raises DeviceLost.
    Every call has a timeout.
    """

    def __init__(
        self,
        target: str | StdioServerParameters,
        *,
        token: str | None = None,
        timeout: float = 120.0,
        connect_timeout: float = 30.0,
        reconnect_window: float = 5.0,
    ) -> None:
        self.target = target
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self.reconnect_window = reconnect_window
        self._token = token
        self._client: Client | None = None
        self._holder: asyncio.Task[None] | None = None
        self._release: asyncio.Event | None = None
        self._specs: dict[str, ToolSpec] = {}
        self._lost: str | None = None  # why the last connection was given up

    @classmethod
    def http(cls, url: str, *, token: str | None = None, timeout: float = 120.0) -> MCPDispatcher:
        """A server at `url` (".../mcp"); `token` defaults to RH_MCP_TOKEN if set."""
        return cls(url, token=token or os.environ.get(TOKEN_ENV) or None, timeout=timeout)

    @classmethod
    def stdio(
        cls,
        command: str,
        args: Sequence[str] = (),
        env: dict[str, str] | None = None,
        timeout: float = 120.0,
    ) -> MCPDispatcher:
        """A server this dispatcher starts, e.g. stdio("roundhouse", ["serve", "--stdio"]).

        The SDK passes only a minimal environment to the server; without `env` ours adds
        this process's display and buses, so the server works on the same desktop.
        """
        if env is None:
            env = {name: os.environ[name] for name in _DESKTOP_ENV if name in os.environ}
        parameters = StdioServerParameters(command=command, args=list(args), env=env)
        return cls(parameters, timeout=timeout)

    @classmethod
    def connect_to(cls, target: str) -> MCPDispatcher:
        """A server at a URL (`roundhouse serve --http`), or one that a command line starts
        and serves on stdio ("roundhouse serve --stdio", "ssh box roundhouse serve")."""
        if target.startswith(("http://", "https://")):
            return cls.http(target)
        command = shlex.split(target)
        if not command:
            raise MCPConnectionError("the MCP server to use is empty: give a URL or a command")
        return cls.stdio(command[0], command[1:])

    @property
    def where(self) -> str:
        return self.target if isinstance(self.target, str) else self.target.command

    async def __aenter__(self) -> MCPDispatcher:
        await self.connect()
        return self

    async def connect(self) -> None:
        """Start the holder and wait until its client is ready (or failed to be)."""
        ready: asyncio.Future[Client] = asyncio.get_running_loop().create_future()
        release = asyncio.Event()
        holder = asyncio.create_task(self._hold(ready, release), name="mcp-client")
        try:
            async with asyncio.timeout(self.connect_timeout):
                self._client = await asyncio.shield(ready)
        except BaseException as error:
            release.set()
            await _finish(holder)
            if ready.done() and not ready.cancelled():
                # Our timeout cancelled the shield, not `ready`: the holder may still have
                # failed it, and asyncio prints a never-retrieved failure as a traceback.
                ready.exception()
            if isinstance(error, Exception):  # the SDK's task groups raise groups: flatten
                message = f"cannot use MCP server {self.where}: {_reasons(error)}"
                raise MCPConnectionError(message) from error
            raise
        self._holder, self._release = holder, release

    async def _hold(self, ready: asyncio.Future[Client], release: asyncio.Event) -> None:
        """Open the client, hand it over, keep it open until released or broken."""
        try:
            async with AsyncExitStack() as stack:
                client = await stack.enter_async_context(await self._client_on(stack))
                ready.set_result(client)
                await release.wait()
        except BaseException as error:
            if not ready.done():
                ready.set_exception(error if isinstance(error, Exception) else _Lost("cancelled"))
            if not isinstance(error, Exception):
                raise
            log.info("MCP client for %s ended: %s", self.where, _reasons(error))

    async def _client_on(self, stack: AsyncExitStack) -> Client:
        if not isinstance(self.target, str):
            return Client(self.target, read_timeout_seconds=self.timeout)
        headers = {"Authorization": f"Bearer {self._token}"} if self._token else None
        # An HTTP client we pass in is ours to close, not the transport's.
        http = await stack.enter_async_context(create_mcp_http_client(headers=headers))
        transport = streamable_http_client(self.target, http_client=http)
        return Client(transport, read_timeout_seconds=self.timeout)

    async def close(self) -> None:
        holder, release = self._holder, self._release
        self._holder = self._release = self._client = None
        if holder is not None and release is not None:
            release.set()
            await _finish(holder)

    async def _request(self, call: Callable[[Client], Awaitable[T]]) -> T:
        """One call on the client, raced against the holder: a broken connection is _Lost
        at once instead of a wait for a reply nobody will send."""
        client, holder = self._connected()
        asked = asyncio.ensure_future(call(client))
        async with asyncio.timeout(self.timeout):
            await asyncio.wait({asked, holder}, return_when=asyncio.FIRST_COMPLETED)
        if not asked.done():
            await _finish(asked)
            raise _Lost("the connection to the server broke")
        try:
            return asked.result()
        except MCPError as error:
            if error.code == types.CONNECTION_CLOSED:  # the SDK's word for a dead line
                raise _Lost(error.message) from error
            raise  # the server answered, with a protocol error: not a lost line
        except (ValueError, TypeError):
            raise
        except Exception as error:  # transport failures: refused, reset, closed stream
            raise _Lost(_reasons(error)) from error

    async def _reconnect(self, reason: str) -> None:
        """Connect again within reconnect_window, or give up with DeviceLost."""
        await self.close()
        deadline = time.monotonic() + self.reconnect_window
        last = reason

        async def back() -> bool:
            nonlocal last
            saved = self.connect_timeout
            self.connect_timeout = max(deadline - time.monotonic(), 0.001)  # within the window
            try:
                await self.connect()
            except MCPConnectionError as error:
                last = str(error)
                return False
            finally:
                self.connect_timeout = saved
            return True

        if await within_async(back, self.reconnect_window, every=0.2):
            log.warning("MCP server %s is back after: %s", self.where, reason)
            self._lost = None
            return
        self._lost = reason  # the next call tries once more: the server may be back
        raise DeviceLost(
            f"device connection lost: {reason}; MCP server {self.where} did not come back "
            f"within {self.reconnect_window:g} s ({last})"
        )

    async def tool_specs(self) -> list[ToolSpec]:
        try:
            listed = await self._request(lambda client: client.list_tools())
        except _Lost as lost:
            await self._reconnect(str(lost))
            listed = await self._request(lambda client: client.list_tools())
        specs = [_tool_spec(tool) for tool in listed.tools]
        self._specs = {spec.name: spec for spec in specs}
        return specs

    async def execute(self, commands: Sequence[Command]) -> list[Result]:
        """Run the commands in order on the server, one result each."""
        return [await self._execute(command) for command in commands]

    async def _execute(self, command: Command) -> Result:
        try:
            return await self._call(command)
        except _Lost as lost:
            await self._reconnect(str(lost))
        spec = self._specs.get(command.tool_name)
        if spec is not None and spec.tool_type == "data_collection":
            try:
                return await self._call(command)  # only looks: safe to ask again
            except _Lost as lost:
                raise DeviceLost(f"device connection lost: {lost}") from None
        return Result.failure(
            f"{command.tool_name}: effect unknown: the connection to the device server broke "
            "while it ran, and it was not repeated. Look again before deciding what to do.",
            command.call_id,
        )

    async def _call(self, command: Command) -> Result:
        name, arguments = command.tool_name, command.parameters
        try:
            reply = await self._request(
                lambda client: client.call_tool(name, arguments, read_timeout_seconds=self.timeout)
            )
        except TimeoutError:
            error = f"{command.tool_name}: the MCP server did not answer within {self.timeout:g} s"
            return Result.failure(error, command.call_id)
        except _Lost:
            raise
        except Exception as error:  # the server answered with a protocol error
            log.warning("MCP call %s failed: %r", command.tool_name, error)
            return Result.failure(
                f"MCP call failed: {type(error).__name__}: {error}", command.call_id
            )
        return _result(reply, command.call_id)

    def _connected(self) -> tuple[Client, asyncio.Task[None]]:
        if self._lost is not None:
            raise _Lost(self._lost)
        if self._client is None or self._holder is None:
            raise RuntimeError("MCPDispatcher is not connected: use `async with` or connect()")
        return self._client, self._holder


async def _finish(task: asyncio.Future[Any]) -> None:
    """Cancel a task if it still runs and wait for it; what it raised was logged already."""
    if not task.done():
        task.cancel()
    try:
        await task
    except BaseException as error:  # noqa: BLE001 - an ended task's own failure
        if isinstance(error, KeyboardInterrupt | SystemExit):
            raise
        log.debug("ended task: %r", error)


def _reasons(error: BaseException) -> str:
    if isinstance(error, BaseExceptionGroup):
        return "; ".join(_reasons(inner) for inner in error.exceptions)
    if isinstance(error, TimeoutError):
        return "no answer in time"
    return f"{type(error).__name__}: {error}"


def _tool_spec(tool: types.Tool) -> ToolSpec:
    meta = tool.meta or {}
    kind: ToolType
    if meta.get(TOOL_TYPE_KEY) == "data_collection":
        kind = "data_collection"
    elif meta.get(TOOL_TYPE_KEY) == "action":
        kind = "action"
    else:  # another server: the standard hint is all there is
        read_only = tool.annotations is not None and tool.annotations.read_only_hint
        kind = "data_collection" if read_only else "action"
    return ToolSpec(
        name=tool.name,
        description=purpose(tool.description or tool.name),  # another server's may be long
        tool_type=kind,
        parameters=dict(tool.input_schema),
    )


def _result(reply: types.CallToolResult, call_id: str) -> Result:
    texts = [block.text for block in reply.content if isinstance(block, types.TextContent)]
    if reply.is_error:
        error = "\n".join(texts) or "the tool failed"
        if error.startswith(NOT_RUN):  # the server chose not to act: SKIPPED, as it is there
            return Result(status=ResultStatus.SKIPPED, error=error, call_id=call_id)
        return Result.failure(error, call_id)
    structured = reply.structured_content  # another server's
    if isinstance(structured, dict) and "result" in structured:
        value = structured["result"]
    elif texts:
        try:
            value = json.loads(texts[0])
        except ValueError:
            value = "\n".join(texts)
    else:
        value = None
    images = [block.data for block in reply.content if isinstance(block, types.ImageContent)]
    if images and isinstance(value, dict) and "png_base64" not in value:
        value["png_base64"] = images[0]  # a screenshot: its PNG came as the image block
    return Result(status=ResultStatus.SUCCESS, result=value, call_id=call_id)
