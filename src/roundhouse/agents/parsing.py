"""Tolerant extraction of the JSON object a model answered.

Models wrap JSON in code fences, add text around it, or leave trailing commas; we
accept those and nothing looser. What cannot be read raises AnswerFormatError, whose
message goes back to the model.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")

# An answer nests a few levels. Deeper JSON is refused before json reads it: the limit is
# ours, the same on every Python (3.11's json stopped near 1,000 levels with a
# RecursionError, 3.13's reads 3,000 and more).
MAX_DEPTH = 100


class AnswerFormatError(ValueError):
    pass


def extract_json_object(text: str) -> dict[str, Any]:
    candidates = [match.group(1) for match in _FENCE.finditer(text)] + [text]
    problems: list[str] = []
    for candidate in candidates:
        for span in _balanced_objects(candidate):
            value = _loads_object(span, problems)
            if value is not None:
                return value
    preview = text.strip().replace("\n", " ")[:200]
    why = f" ({problems[0]})" if problems else ""
    raise AnswerFormatError(f"the answer is not a JSON object{why}: {preview!r}")


def _loads_object(span: str, problems: list[str]) -> dict[str, Any] | None:
    """The object in span, or None; JSON that is well-formed but cannot be read here is
    added to `problems`, so the model is told why rather than only that it failed."""
    if _depth(span) > MAX_DEPTH:
        problems.append(f"it is nested too deeply to read (more than {MAX_DEPTH} levels)")
        return None
    for attempt in (span, _TRAILING_COMMA.sub(r"\1", span)):
        try:
            value = json.loads(attempt)
        except json.JSONDecodeError:
            continue
        except ValueError:  # an integer past Python's int-to-str limit (4300 digits)
            problems.append("a number in it has too many digits to read")
            continue
        if isinstance(value, dict):
            return value
    return None


def _balanced_objects(text: str) -> Iterator[str]:
    """The top-level balanced {...} spans of text, in order: prose before the answer may
    hold braces of its own ("Here is {the plan}: {...}"). Never a piece nested inside
    another span: a broken answer must not pass for one of its parts."""
    start = text.find("{")
    while start >= 0:
        span = _outer_object(text, start)
        if span is None:
            return  # never closed: every later brace is inside it
        yield span
        start = text.find("{", start + len(span))


def _depth(span: str) -> int:
    """How deep arrays and objects nest in span."""
    depth = deepest = 0
    for _, char in _outside_strings(span, 0):
        if char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def _outer_object(text: str, start: int) -> str | None:
    """The balanced {...} opening at text[start]."""
    depth = 0
    for index, char in _outside_strings(text, start):
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return text[start : index + 1]
    return None


def _outside_strings(text: str, start: int) -> Iterator[tuple[int, str]]:
    """Each character of text from start on that is not inside a string literal (nor one
    of its quotes), with its index."""
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
        else:
            yield index, char
