"""Fuzz the MCP server's tool arguments: whatever a client sends, each call is answered
with a result (a success, or isError carrying the registry's message), never a protocol
error or a crash, and the same server keeps answering afterwards.

The server is build_server over real tools that need no desktop (run_shell and
get_system_info in a throw-away working folder, beside small typed tools), called
in-process through the SDK's Client. run_shell is never handed a command outside
HARMLESS: anything else it gets in `command` is not a string, so it cannot run.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import mcp.types as types
import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from hypothesis import example, given
from hypothesis import strategies as st
from mcp import Client

from roundhouse.config import Settings, ShellPolicy
from roundhouse.devices.base import ToolRegistry, make_tool
from roundhouse.devices.mcp.server import build_server
from roundhouse.devices.shell import ShellTools
from tests.fuzz.common import FUZZ, HUGE_DIGITS, json_values

HARMLESS = ("true", ":", "echo fuzz", "pwd", "exit 3", "printf '%s' ok >&2")
CALL_TIMEOUT = 30.0


def add(a: int, b: int = 0) -> int:
    """Add two integers."""
    return a + b


def count(words: list[str], needle: str = "") -> dict[str, int]:
    """How many words there are, and how many of them are the needle."""
    return {"words": len(words), "needles": words.count(needle)}


def pick(ids: list[int], end: Literal["first", "last"] = "first") -> int:
    """The first or the last id."""
    return ids[0] if end == "first" else ids[-1]


def scale(value: float, factor: float = 1.0) -> float:
    """value times factor."""
    return value * factor


def echo(text: str) -> str:
    """The text, unchanged."""
    return text


def registry(workdir: Path) -> ToolRegistry:
    settings = Settings(workdir=workdir, shell_policy=ShellPolicy.DENY, shell_timeout=5)
    small = [make_tool(tool, "data_collection") for tool in (add, count, pick, scale, echo)]
    return ToolRegistry([*ShellTools(settings).tools(), *small])


@dataclass
class Served:
    portal: BlockingPortal
    client: Client

    def call(self, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        if name == "run_shell" and isinstance(arguments.get("command"), str):
            assert arguments["command"] in HARMLESS, "the fuzzer must not run anything else"
        return self.portal.call(self._call, name, arguments)

    async def _call(self, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        return await self.client.call_tool(name, arguments, read_timeout_seconds=CALL_TIMEOUT)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    server = build_server(registry(tmp_path_factory.mktemp("mcp-work")), default_timeout=10)
    with start_blocking_portal() as portal:
        with portal.wrap_async_context_manager(Client(server)) as client:
            yield Served(portal, client)


def anything_but_text() -> st.SearchStrategy[Any]:
    return json_values.filter(lambda value: not isinstance(value, str))


numbers = st.one_of(
    st.integers(),
    st.integers(min_value=10**4300, max_value=10**4400),  # past the int-to-str limit
    st.floats(),  # NaN and the infinities
    st.sampled_from([HUGE_DIGITS, "1e999", "nan", -1]),
)
texts = st.one_of(
    st.text(max_size=40),
    st.sampled_from(["", "\x00", "\ud800", "../../..", "/", "a" * 100_000]),
)


@st.composite
def arguments_for(
    draw: st.DrawFn, fields: dict[str, st.SearchStrategy[Any]], anything: st.SearchStrategy[Any]
) -> dict[str, Any]:
    """Each argument right, of the wrong type, or missing; now and then one too many."""
    chosen = {
        name: draw(st.one_of(right, anything))
        for name, right in fields.items()
        if draw(st.integers(min_value=0, max_value=9)) > 0
    }
    if draw(st.integers(min_value=0, max_value=9)) == 0:
        chosen[draw(st.text(max_size=10).filter(lambda key: key not in fields))] = draw(json_values)
    return chosen


def calls_of(name: str, fields: dict[str, st.SearchStrategy[Any]]) -> st.SearchStrategy[Any]:
    return st.tuples(st.just(name), arguments_for(fields, json_values))


calls = st.one_of(
    st.tuples(
        st.just("run_shell"),
        arguments_for(
            {
                "command": st.sampled_from(HARMLESS),
                "cwd": st.one_of(st.none(), texts),
                "timeout": st.one_of(st.none(), numbers),
            },
            anything_but_text(),  # a command that is text is always one of HARMLESS
        ),
    ),
    calls_of("get_system_info", {}),
    calls_of("add", {"a": numbers, "b": numbers}),
    calls_of("count", {"words": st.lists(texts, max_size=5), "needle": texts}),
    calls_of(
        "pick", {"ids": st.lists(numbers, max_size=3), "end": st.sampled_from(["first", "x"])}
    ),
    calls_of("scale", {"value": numbers, "factor": numbers}),
    calls_of("echo", {"text": texts}),
    st.tuples(  # unknown tools: nothing runs, whatever the arguments
        st.sampled_from(["", "nope", "RUN_SHELL", "run_shell ", "add\x00", "a" * 1000]),
        st.dictionaries(st.text(max_size=10), json_values, max_size=4),
    ),
)


def json_of(result: types.CallToolResult) -> Any:
    """A result's value: the JSON of its text (the server sends no structured copy)."""
    (block,) = result.content
    assert isinstance(block, types.TextContent)
    return json.loads(block.text)


def check_answer(result: types.CallToolResult) -> None:
    """A result the client can use, that every transport can send as JSON."""
    assert isinstance(result, types.CallToolResult)
    result.model_dump_json(by_alias=True, exclude_none=True)
    if result.is_error:
        assert any(isinstance(block, types.TextContent) and block.text for block in result.content)


def test_fuzzed_tool_arguments_get_a_result_and_the_server_stays_up(served: Served) -> None:
    @FUZZ
    @given(calls)
    @example(("add", {"a": 10**4400}))  # a result past the int-to-str limit
    @example(("scale", {"value": math.nan}))
    @example(("echo", {"text": "\ud800"}))  # text no transport can encode as UTF-8
    @example(("add", {"a": "\ud800"}))  # ... echoed back in the error message
    @example(("run_shell", {"command": "true", "timeout": math.nan}))
    @example(("run_shell", {"command": "true", "cwd": "a\x00b"}))
    @example(("run_shell", {"command": "true", "cwd": "a" * 100_000}))
    @example(("run_shell", {"command": ["echo", "x"]}))  # not a string: refused
    def call(name_and_arguments: tuple[str, dict[str, Any]]) -> None:
        check_answer(served.call(*name_and_arguments))

    call()
    # The same server still lists its tools and answers a plain call.
    listed = served.portal.call(served.client.list_tools)
    assert {tool.name for tool in listed.tools} >= {"run_shell", "add", "echo"}
    answer = served.call("add", {"a": 2, "b": 3})
    assert not answer.is_error and json_of(answer) == 5
    shell = served.call("run_shell", {"command": "echo fuzz"})
    assert not shell.is_error and json_of(shell)["stdout"] == "fuzz\n"
