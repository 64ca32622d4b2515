"""The device tools over MCP: a server for any registry, and a dispatcher that is a client.

    roundhouse serve --stdio                      # for a local MCP client that spawns us
    roundhouse serve --http 127.0.0.1:8765        # streamable HTTP at http://.../mcp

    async with MCPDispatcher.http("http://host:8765/mcp", token=...) as dispatcher:
        results = await dispatcher.execute([Command(tool_name="list_windows")])

Tool names, descriptions (one sentence: devices/describing.py) and JSON schemas come from
the registry's ToolSpecs; whether a tool only observes (data_collection) travels as the
standard readOnlyHint annotation, so the dispatcher hands the engine the same ToolSpecs
it would get locally. A tool failure
is an MCP tool error (isError) carrying the registry's message; the dispatcher turns it
back into a failure Result. HTTP listens on loopback by default; bound to any other
address it requires a bearer token from the RH_MCP_TOKEN environment variable (never a
tool argument: models see tool arguments), checked by endpoints.TokenAuth.
"""

from __future__ import annotations

from roundhouse.endpoints import MCP_TOKEN_ENV

TOKEN_ENV = MCP_TOKEN_ENV  # the bearer token off loopback: an environment variable only
TOOL_TYPE_KEY = "roundhouse/tool_type"  # where a tool's type travels in its _meta


class MCPConfigError(ValueError):
    """A server or client set-up the user must fix (the message says how)."""
