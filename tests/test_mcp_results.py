"""What the MCP server answers when a tool's result cannot travel as JSON, over a real
stdio server process (no desktop: a registry of one small tool)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from roundhouse.devices.base import Command, ResultStatus
from roundhouse.devices.mcp import MCPDispatcher

SERVER = """
import asyncio, os
from roundhouse.devices.base import ToolRegistry, make_tool
from roundhouse.devices.mcp import serve_stdio

def names(folder: str) -> list[str]:
    '''The names in a folder.'''
    return sorted(os.listdir(folder))

asyncio.run(serve_stdio(ToolRegistry([make_tool(names, "data_collection")])))
"""


async def test_a_result_that_is_not_utf8_is_an_error_and_the_server_answers_on(
    tmp_path: Path,
) -> None:
    # A file name that is not UTF-8 comes back from os.listdir with a surrogate in it, which
    # no transport can write: the stdio server's writer died on it, and answered nothing more.
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "cafe.txt").touch()
    (tmp_path / "odd").mkdir()
    os.close(os.open(os.fsencode(tmp_path / "odd") + b"/caf\xe9.txt", os.O_CREAT | os.O_WRONLY))
    server = MCPDispatcher.stdio(sys.executable, ["-c", SERVER], env={}, timeout=20)
    async with server:
        odd, plain = await server.execute(
            [
                Command(tool_name="names", parameters={"folder": str(tmp_path / "odd")}),
                Command(tool_name="names", parameters={"folder": str(tmp_path / "plain")}),
            ]
        )
    assert odd.status is ResultStatus.FAILURE
    assert odd.error is not None and "cannot be sent as JSON" in odd.error
    assert "\\udce9" in odd.error  # the character named, escaped
    assert plain.status is ResultStatus.SUCCESS and plain.result == ["cafe.txt"]
