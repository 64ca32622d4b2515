"""Actions a careful person would want to be asked about, whatever the model said:
closing (unsaved work may be lost), deleting, sending, submitting, overwriting."""

from __future__ import annotations

import re
from typing import Any

from roundhouse.devices.contract import Control, ToolName

_SENSITIVE_NAMES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), reason)
    for pattern, reason in (
        (r"\b(close|quit|exit)\b", "closes a window; unsaved work may be lost"),
        (r"\b(don'?t|do not) save\b|\bdiscard\b|without saving", "throws away unsaved work"),
        (r"\b(delete|remove|erase|trash|uninstall)\b", "deletes something"),
        # Formatting a disk, not a file format ("Use Word 2007–365 Format!") nor the
        # Format menu: the word with what it wipes, or a button that says only that.
        (
            r"\bformat\W+(?:the\s+)?(?:disk|drive|partition|volume|card|device)\b"
            r"|^\s*format\s*(?:…|\.\.\.)\s*$",
            "deletes something",
        ),
        (r"\b(send|submit|post|publish|purchase|buy|pay)\b", "sends or submits something"),
        (r"\b(replace|overwrite)\b", "overwrites an existing file"),
    )
)
_CLOSING_KEYS = {"alt+f4", "ctrl+w", "ctrl+q", "ctrl+shift+w"}


def sensitive_reason(
    function: str, arguments: dict[str, Any], control: Control | None
) -> str | None:
    """Why this action needs a yes before it runs, or None."""
    if function == ToolName.CLOSE_WINDOW:
        return "closes a window; unsaved work may be lost"
    if function == ToolName.PRESS_KEYS:
        pressed = {part.lower() for part in str(arguments.get("keys", "")).split()}
        if pressed & _CLOSING_KEYS:
            return "closes a window; unsaved work may be lost"
        return None
    if function in (ToolName.CLICK_CONTROL, ToolName.CLICK_COORDINATES) and control is not None:
        for pattern, reason in _SENSITIVE_NAMES:
            if pattern.search(control.name):
                return f"clicking {control.name!r} {reason}"
    return None


def is_closing(function: str | None, arguments: dict[str, Any], control_name: str = "") -> bool:
    if function == ToolName.CLOSE_WINDOW:
        return True
    if function == ToolName.PRESS_KEYS:
        return bool({p.lower() for p in str(arguments.get("keys", "")).split()} & _CLOSING_KEYS)
    return function == ToolName.CLICK_CONTROL and bool(
        re.search(r"\b(close|quit|exit)\b", control_name, re.I)
    )
