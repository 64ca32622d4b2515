"""The MCP server: any tool registry served over stdio or streamable HTTP (devices/mcp/)."""

from __future__ import annotations

import logging
import os
from typing import Any

import mcp.types as types
import pydantic_core
import uvicorn
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from roundhouse.core.commands import Command, Result
from roundhouse.devices.base import ToolRegistry
from roundhouse.devices.describing import ToolSpec, purpose
from roundhouse.devices.mcp import TOKEN_ENV, TOOL_TYPE_KEY, MCPConfigError
from roundhouse.endpoints import ASGIApp, TokenAuth, token_problem

log = logging.getLogger(__name__)

SERVER_NAME = "roundhouse"


def build_server(registry: ToolRegistry, default_timeout: float = 120.0) -> Server[Any]:
    """An MCP server exposing every tool of `registry`."""

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[_mcp_tool(spec) for spec in registry.specs()])

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        command = Command(tool_name=params.name, parameters=params.arguments or {})
        return _mcp_result(await registry.call(command, default_timeout))

    return Server(SERVER_NAME, on_list_tools=list_tools, on_call_tool=call_tool)


def _mcp_tool(spec: ToolSpec) -> types.Tool:
    """The tool as MCP lists it: the purpose a prompt gives it; the schema says the rest."""
    return types.Tool(
        name=spec.name,
        description=purpose(spec.description),
        input_schema=spec.parameters,
        annotations=types.ToolAnnotations(read_only_hint=spec.tool_type == "data_collection"),
        _meta={TOOL_TYPE_KEY: spec.tool_type},
    )


def _mcp_result(result: Result) -> types.CallToolResult:
    """The result as MCP sends it. Every transport writes it as UTF-8 JSON: one that cannot
    be written would get no answer, and over stdio end the server's writer for good."""
    if not result.ok:
        return _mcp_error(result.error or f"tool {result.status.value}")
    try:
        return _mcp_success(result.result)
    except (TypeError, ValueError) as error:  # PydanticSerializationError is a ValueError
        # e.g. a file name that is not UTF-8 (surrogates), an object JSON has no form for
        return _mcp_error(f"the tool's result cannot be sent as JSON: {error}")


def _mcp_error(text: str) -> types.CallToolResult:
    # A message may quote what cannot be encoded (a file name that is not UTF-8): escape it.
    sendable = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return types.CallToolResult(content=[types.TextContent(text=sendable)], is_error=True)


def _mcp_success(value: Any) -> types.CallToolResult:
    """The value as one JSON text, written once: no structured copy beside it. The SDK's
    client validates a structured result object by object (Calc's 584 controls: ~10 ms a
    call, and the value sent twice), where a text is one string; our dispatcher parses it
    (~1 ms), and any client shows it to its model as it is. A screenshot's PNG goes as an
    image block, which clients can show, and the rest as the text."""
    content: list[types.ContentBlock] = []
    if isinstance(value, dict) and isinstance(value.get("png_base64"), str):
        content.append(types.ImageContent(data=value["png_base64"], mime_type="image/png"))
        value = {key: item for key, item in value.items() if key != "png_base64"}
    content.append(types.TextContent(text=_json(value)))
    return types.CallToolResult(content=content)


def _json(value: Any) -> str:
    """Strict JSON, written in UTF-8 by pydantic's serializer (a quarter of json.dumps'
    time for Calc's controls): NaN as null; ValueError for what UTF-8 cannot carry (a file
    name that is not UTF-8)."""
    return pydantic_core.to_json(value, inf_nan_mode="null").decode("utf-8")


async def serve_stdio(registry: ToolRegistry, default_timeout: float = 120.0) -> None:
    server = build_server(registry, default_timeout)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def http_app(
    registry: ToolRegistry,
    host: str = "127.0.0.1",
    token: str | None = None,
    default_timeout: float = 120.0,
) -> ASGIApp:
    """The streamable-HTTP ASGI app (endpoint /mcp); bearer-protected when `token` is set.

    Off loopback a token is required: without one this raises MCPConfigError.
    """
    problem = token_problem(host, token)
    if problem is not None:
        raise MCPConfigError(problem)
    server = build_server(registry, default_timeout)
    app: ASGIApp = server.streamable_http_app(host=host)
    return TokenAuth(app, token) if token else app


async def serve_http(
    registry: ToolRegistry,
    host: str,
    port: int,
    token: str | None = None,
    default_timeout: float = 120.0,
) -> None:
    """Serve until cancelled. `token` defaults to the RH_MCP_TOKEN environment variable."""
    token = token if token is not None else os.environ.get(TOKEN_ENV) or None
    app = http_app(registry, host, token, default_timeout)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
    await uvicorn.Server(config).serve()
