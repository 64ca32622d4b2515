"""What the host may launch: the desktop's applications, by the names launch_application
accepts."""

from __future__ import annotations

from roundhouse.devices.base import Tool, make_tool
from roundhouse.devices.linux.windows import desktop_entries


def list_applications() -> list[str]:
    """List the applications that launch_application can start, by name."""
    return sorted({entry.name for entry in desktop_entries()})


def application_tools() -> list[Tool]:
    return [make_tool(list_applications, "data_collection", timeout=10)]
