"""Tolerant extraction of the JSON object a model answered.

Models wrap JSON in code fences, add text around it, or leave trailing commas; we
accept those and nothing looser. What cannot be read raises AnswerFormatError, whose
message goes back to the model.
"""

from __future__ import annotations

import json
import re
from typing import Any

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")


class AnswerFormatError(ValueError):
    pass


def extract_json_object(text: str) -> dict[str, Any]:
    candidates = [match.group(1) for match in _FENCE.finditer(text)] + [text]
    for candidate in candidates:
        span = _outer_object(candidate)
        if span is None:
            continue
        for attempt in (span, _TRAILING_COMMA.sub(r"\1", span)):
            try:
                value = json.loads(attempt)
            except json.JSONDecodeError:
                continue
            if isinstance(value, dict):
                return value
    preview = text.strip().replace("\n", " ")[:200]
    raise AnswerFormatError(f"the answer is not a JSON object: {preview!r}")


def _outer_object(text: str) -> str | None:
    """The first balanced {...} in text, string literals respected."""
    start = text.find("{")
    if start < 0:
        return None
    depth = 0
    in_string = escaped = False
    for index in range(start, len(text)):
        char = text[index]
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return text[start : index + 1]
    return None
