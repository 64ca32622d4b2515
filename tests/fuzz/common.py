"""What the fuzz tests share: their settings, and strategies for hostile JSON and YAML.

Every fuzz test runs FUZZ: 500 examples, derandomized and without an example database,
so a run in CI tries the same inputs as a run here and a failure reproduces.
"""

from __future__ import annotations

import json
import math
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

FUZZ = settings(
    max_examples=500,
    deadline=None,
    derandomize=True,
    database=None,
    # A timed health check would make the suite flaky on a busy 2-core machine.
    suppress_health_check=[HealthCheck.too_slow],
)

# Past Python's limit on int <-> str conversion (4300 digits).
HUGE_DIGITS = "9" * 5000
DEEP = 3000  # past the interpreter's recursion limit

# Scalars a hostile document holds: huge and special numbers, odd text, NUL bytes.
scalars: st.SearchStrategy[Any] = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=-(10**40), max_value=10**40),
    st.floats(),
    st.sampled_from([math.inf, -math.inf, math.nan, -0.0, 1e308, 5e-324]),
    st.text(max_size=30),
    st.sampled_from(["", " ", "\x00", "../../etc/passwd", "FINISH", "continue", "\ud800"]),
)

json_values: st.SearchStrategy[Any] = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.text(max_size=12), inner, max_size=4),
    ),
    max_leaves=10,
)

# Pieces of text that break a JSON or YAML document in interesting ways.
HOSTILE_PIECES = [
    "{",
    "}",
    "[",
    "]",
    '"',
    "\\",
    ",",
    ":",
    "```",
    "```json\n",
    "NaN",
    "Infinity",
    "-Infinity",
    "1e999",
    HUGE_DIGITS,
    "[" * DEEP,
    "{" * DEEP,
    '{"a":' * DEEP,
    "\\ud800",
    "\x00",
    "\ufeff",
    "\n",
]


# A string that dumps() writes as a number of 5000 digits, which json.dumps cannot write.
HUGE = "<a number of 5000 digits>"


def dumps(value: Any) -> str:
    """JSON as Python writes it: NaN and Infinity spelled out, as a model may copy them."""
    return json.dumps(value, allow_nan=True).replace(json.dumps(HUGE), HUGE_DIGITS)


def deep_json(depth: int, kind: str) -> str:
    opening, closing = ("[", "]") if kind == "list" else ('{"a":', "}")
    return opening * depth + "1" + closing * depth


def mutate(draw: st.DrawFn, text: str, pieces: list[str] = HOSTILE_PIECES) -> str:
    """`text` with a few insertions of hostile pieces, deletions and duplications. (Called
    from inside a composite strategy: flatmap would build a strategy per example, slowly.)"""
    for _ in range(draw(st.integers(min_value=0, max_value=4))):
        where = draw(st.integers(min_value=0, max_value=len(text)))
        how = draw(st.sampled_from(["insert", "delete", "duplicate", "truncate"]))
        if how == "insert":
            piece = draw(st.one_of(st.sampled_from(pieces), st.text(max_size=8)))
            text = text[:where] + piece + text[where:]
        elif how == "delete":
            size = draw(st.integers(min_value=1, max_value=20))
            text = text[:where] + text[where + size :]
        elif how == "duplicate":
            size = draw(st.integers(min_value=1, max_value=40))
            text = text[:where] + text[where : where + size] + text[where:]
        else:
            text = text[:where]
    return text
