"""What the MCP server answers when a tool's result cannot travel as JSON, over a real
stdio server process (no desktop: a registry of one small tool)."""

from __future__ import annotations

import gc
import logging
import os
import socket
import sys
from pathlib import Path

import pytest

from roundhouse.core.commands import Command, ResultStatus
from roundhouse.devices.mcp.client import MCPConnectionError, MCPDispatcher

SERVER = """
import asyncio, os
from roundhouse.devices.base import ToolRegistry, make_tool
from roundhouse.devices.mcp.server import serve_stdio

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


async def test_a_connect_that_times_out_leaves_no_failure_for_asyncio_to_print(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A reconnect that runs out of time while the client fails to connect: the failure
    is ours to report once, not a 'never retrieved' traceback on the user's terminal
    (CI caught one in the output of a round whose server died)."""
    with socket.socket() as unused:  # a port nobody listens on
        unused.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{unused.getsockname()[1]}/mcp"
    with caplog.at_level(logging.ERROR, logger="asyncio"):
        for timeout in (0.0, 0.001, 0.005, 0.02, 1.0):
            dispatcher = MCPDispatcher(url, connect_timeout=timeout)
            with pytest.raises(MCPConnectionError, match="cannot use MCP server"):
                await dispatcher.connect()
            del dispatcher
            gc.collect()
    assert "never retrieved" not in caplog.text
