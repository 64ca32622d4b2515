from __future__ import annotations

import asyncio
from typing import Literal

from roundhouse.core.commands import Command, ResultStatus
from roundhouse.devices.base import LocalDispatcher, ToolRegistry, make_tool


def scroll(direction: Literal["up", "down"], amount: int = 3) -> str:
    """Scroll the active window.

    More text that the model does not need on the first line.
    """
    return f"{direction} {amount}"


async def slow() -> None:
    """Never ends in time."""
    await asyncio.sleep(30)


def broken(path: str) -> None:
    """Always fails."""
    raise FileNotFoundError(path)


def test_schema_and_description_come_from_the_signature() -> None:
    spec = make_tool(scroll, "action").spec
    assert spec.name == "scroll"
    assert spec.description.startswith("Scroll the active window.")
    properties = spec.parameters["properties"]
    assert properties["direction"]["enum"] == ["up", "down"]
    assert properties["amount"]["default"] == 3
    assert spec.parameters["required"] == ["direction"]


async def test_a_call_validates_arguments_and_returns_the_value() -> None:
    dispatcher = LocalDispatcher(ToolRegistry([make_tool(scroll, "action")]))
    [ok, bad, extra] = await dispatcher.execute(
        [
            Command(tool_name="scroll", parameters={"direction": "down", "amount": 2}),
            Command(tool_name="scroll", parameters={"direction": "sideways"}),
            Command(tool_name="scroll", parameters={"direction": "up", "speed": 9}),
        ]
    )
    assert ok.status is ResultStatus.SUCCESS and ok.result == "down 2"
    assert bad.status is ResultStatus.FAILURE and "bad arguments for scroll" in (bad.error or "")
    assert extra.status is ResultStatus.FAILURE and "speed" in (extra.error or "")


async def test_unknown_tool_names_the_tools_that_exist() -> None:
    registry = ToolRegistry([make_tool(scroll, "action"), make_tool(broken, "action")])
    result = await registry.call(Command(tool_name="klick"), default_timeout=1)
    assert result.status is ResultStatus.FAILURE
    assert "unknown tool 'klick'" in (result.error or "")
    assert "broken, scroll" in (result.error or "")


async def test_a_tool_that_raises_is_a_failure_result_not_a_crash() -> None:
    registry = ToolRegistry([make_tool(broken, "action")])
    command = Command(tool_name="broken", parameters={"path": "/nowhere"})
    result = await registry.call(command, default_timeout=1)
    assert result.status is ResultStatus.FAILURE
    assert result.error == "FileNotFoundError: /nowhere"
    assert result.call_id == command.call_id


async def test_a_tool_past_its_timeout_is_a_failure() -> None:
    registry = ToolRegistry([make_tool(slow, "action", timeout=0.05)])
    result = await registry.call(Command(tool_name="slow"), default_timeout=60)
    assert result.status is ResultStatus.FAILURE
    assert "timed out after 0.05 s" in (result.error or "")


def test_a_name_registered_twice_is_refused() -> None:
    registry = ToolRegistry([make_tool(scroll, "action")])
    try:
        registry.register(scroll, "action")
    except ValueError as error:
        assert "twice" in str(error)
    else:
        raise AssertionError("the second registration was accepted")


def test_every_tool_served_is_named_in_the_contract() -> None:
    """The contract (devices/contract.py) names each tool once; the devices serve those
    names and no other, so a renamed tool is a one-file change the type checker follows."""
    from roundhouse.config import Settings
    from roundhouse.devices.contract import (
        DESKTOP_ACTIONS,
        DESKTOP_DATA_COLLECTION,
        FINE_ACTIONS,
        FINE_DATA_COLLECTION,
        ToolName,
    )
    from roundhouse.devices.linux.action.fine import FineActing
    from roundhouse.devices.linux.action.observing import Observing
    from roundhouse.devices.shell import ShellTools

    desktop = [*DESKTOP_DATA_COLLECTION, *DESKTOP_ACTIONS, *FINE_DATA_COLLECTION, *FINE_ACTIONS]
    served = [tool.name for tool in ShellTools(Settings()).tools()] + desktop
    assert sorted(served) == sorted(ToolName)
    # DesktopTools serves each as the method of the part that holds it.
    for name in DESKTOP_DATA_COLLECTION:
        assert callable(getattr(Observing, name)), name
    for name in (*DESKTOP_ACTIONS, *FINE_DATA_COLLECTION, *FINE_ACTIONS):
        assert callable(getattr(FineActing, name)), name
