"""What the prompts tell a model about its tools, and what they repeat."""

from __future__ import annotations

from typing import Literal

from roundhouse.devices.base import make_tool
from roundhouse.devices.describing import describe_tool, purpose, signature


def test_the_purpose_is_the_first_whole_sentence() -> None:
    assert purpose("Take a screenshot.\n\nannotate: draw boxes.") == "Take a screenshot."
    assert purpose("Scroll the window. More text follows.") == "Scroll the window."
    # Neither a ':' nor a '.' inside quotes or brackets ends it, nor a line break.
    launch = (
        'Start an application: a desktop entry name ("Mousepad. Text Editor", "gedit")\n'
        'or a command line (e.g. "mousepad /tmp/notes.txt"). Then wait.'
    )
    assert purpose(launch) == (
        'Start an application: a desktop entry name ("Mousepad. Text Editor", "gedit") '
        'or a command line (e.g. "mousepad /tmp/notes.txt").'
    )
    assert purpose("Use one, e.g. this one. Or not.") == "Use one, e.g. this one."
    assert purpose("No full stop at the end") == "No full stop at the end"
    assert purpose("\n\n  Leading blank lines.  ") == "Leading blank lines."
    assert purpose(purpose(launch)) == purpose(launch)  # an MCP client's copy is unchanged


def test_a_signature_is_rendered_from_the_schema() -> None:
    schema = {
        "properties": {
            "id": {"title": "Id", "type": "integer"},
            "name": {"title": "Name", "type": "string"},
            "window_id": {
                "anyOf": [{"type": "integer"}, {"type": "null"}],
                "default": None,
                "title": "Window Id",
            },
            "button": {"enum": ["left", "right"], "default": "left", "type": "string"},
            "paths": {"type": "array", "items": {"type": "string"}, "default": []},
            "env": {"type": "object", "additionalProperties": {"type": "string"}},
            "mode": {"$ref": "#/$defs/Mode"},
            "anything": {},
            "seconds": {"type": ["number", "null"], "default": 1.0},
        },
        "required": ["id", "name", "mode", "anything"],
        "$defs": {"Mode": {"enum": [1, 2], "title": "Mode"}},
    }
    assert signature("act", schema) == (
        "act(id: int, name: str, window_id: int | None = None, "
        'button: "left" | "right" = "left", paths: list[str] = [], '
        "env?: dict[str, str], mode: 1 | 2, anything: Any, seconds: float | None = 1.0)"
    )
    assert signature("list_windows", {"properties": {}}) == "list_windows()"


def test_a_tool_line_comes_from_the_function() -> None:
    def wait(seconds: float = 1.0, unit: Literal["s", "ms"] = "s") -> None:
        """Wait a while (up to 60 s).

        seconds: how long.
        """

    spec = make_tool(wait, "action").spec
    assert spec.description == "Wait a while (up to 60 s)."
    assert describe_tool(spec) == (
        'wait(seconds: float = 1.0, unit: "s" | "ms" = "s") — Wait a while (up to 60 s).'
    )
