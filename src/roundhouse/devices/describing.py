"""A tool as one line a model reads: `name(argument: type = default) — purpose.`

The purpose is the first sentence of the tool's description (its docstring); the signature
is rendered from its JSON schema, Python-style, so that a prompt carries no schema noise
(titles, anyOf, nested braces). Every prompt and the MCP server's tool list use this
module, so a model and an MCP client are told the same thing. Pure functions, no I/O.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel

from roundhouse.core.commands import ToolType

Schema = Mapping[str, Any]

_JSON_TYPES = {
    "integer": "int",
    "number": "float",
    "string": "str",
    "boolean": "bool",
    "null": "None",
    "array": "list",
    "object": "dict",
}
_QUOTES = '"`'
_OPENING, _CLOSING = "([{", ")]}"
_SENTENCE_ENDS = ".!?"
# A period that ends these does not end the sentence.
_ABBREVIATIONS = ("e.g.", "i.e.", "cf.", "vs.")


class ToolSpec(BaseModel):
    """What a model (or an MCP client) is told about a tool."""

    name: str
    description: str  # one sentence: what the tool is for
    tool_type: ToolType
    parameters: dict[str, Any]  # JSON schema of the arguments


def purpose(description: str) -> str:
    """The first sentence of the description's first paragraph, on one line.

    A sentence ends at '.', '!' or '?' followed by a space or the paragraph's end, but not
    inside quotes or brackets: 'a name ("Text Editor. Mousepad")' is not cut, and neither
    is anything at a ':'. Without such an end the whole paragraph is the sentence: a
    description is never cut mid-sentence.
    """
    paragraphs = (" ".join(block.split()) for block in description.strip().split("\n\n"))
    text = next((p for p in paragraphs if p), "")
    quote: str | None = None
    depth = 0
    for index, char in enumerate(text):
        if quote is not None:
            quote = None if char == quote else quote
        elif char in _QUOTES:
            quote = char
        elif char in _OPENING:
            depth += 1
        elif char in _CLOSING:
            depth = max(depth - 1, 0)
        elif char in _SENTENCE_ENDS and depth == 0 and text[index + 1 : index + 2] in ("", " "):
            sentence = text[: index + 1]
            if not sentence.lower().endswith(_ABBREVIATIONS):
                return sentence
    return text


def signature(name: str, parameters: Schema) -> str:
    """`name(a: int, b: str | None = None)` from the JSON schema of the arguments."""
    defs = parameters.get("$defs", {})
    required = set(parameters.get("required", ()))
    arguments = []
    for argument, schema in parameters.get("properties", {}).items():
        kind = type_of(schema, defs)
        if "default" in schema:
            arguments.append(f"{argument}: {kind} = {literal(schema['default'])}")
        elif argument in required:
            arguments.append(f"{argument}: {kind}")
        else:  # optional without a default (not from our tools, maybe from another server)
            arguments.append(f"{argument}?: {kind}")
    return f"{name}({', '.join(arguments)})"


def type_of(schema: Schema, defs: Schema) -> str:
    """A JSON schema as a Python-style type: `int | None`, `list[str]`, `"up" | "down"`."""
    if "$ref" in schema:
        target = defs.get(str(schema["$ref"]).rsplit("/", 1)[-1])
        return type_of(target, defs) if isinstance(target, Mapping) else "Any"
    if "const" in schema:
        return literal(schema["const"])
    if "enum" in schema:
        return " | ".join(literal(value) for value in schema["enum"])
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return _union(type_of(option, defs) for option in schema[key])
    if len(schema.get("allOf", ())) == 1:  # pydantic wraps a $ref with a default this way
        return type_of(schema["allOf"][0], defs)
    kind = schema.get("type")
    if isinstance(kind, list):
        return _union(type_of({**schema, "type": one}, defs) for one in kind)
    if kind == "array" and isinstance(schema.get("items"), Mapping):
        return f"list[{type_of(schema['items'], defs)}]"
    if kind == "object" and isinstance(schema.get("additionalProperties"), Mapping):
        return f"dict[str, {type_of(schema['additionalProperties'], defs)}]"
    return _JSON_TYPES.get(str(kind), "Any")


def _union(types: Iterable[str]) -> str:
    """`a | b` without repeats, None last (as Python writes optional types)."""
    unique = list(dict.fromkeys(types))
    if "Any" in unique:
        return "Any"
    return " | ".join([t for t in unique if t != "None"] + [t for t in unique if t == "None"])


def literal(value: Any) -> str:
    """A default or enum value as Python writes it; strings in double quotes, as JSON does."""
    if value is None or isinstance(value, bool | int | float):
        return repr(value)
    return json.dumps(value, ensure_ascii=False)


def describe_tool(spec: ToolSpec) -> str:
    return f"{signature(spec.name, spec.parameters)} — {purpose(spec.description)}"


def describe_tools(specs: Iterable[ToolSpec]) -> str:
    """One line per tool, for a prompt."""
    return "\n".join(f"- {describe_tool(spec)}" for spec in specs)
